"""The fast path: byte-identical faster rendering, switchable off (``switch``); ``fast.FAST``
is the core's ``Memo`` for it, picked by ``switch.choose``."""

from lionagi_turns.memo import fast as fast
