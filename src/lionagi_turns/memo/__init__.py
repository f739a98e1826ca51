"""The fast path: byte-identical faster rendering, switchable off (``switch``)."""
