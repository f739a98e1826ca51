"""A branch's message order as of one moment, while other threads may append to it.

``read_order(pile, order)`` returns ``tuple(order)`` for one of the progressions over a
branch's message pile ``pile`` (``branch.msgs.messages``): ``branch.progression``,
``branch.msgs.progression``, a ``current_progression`` view. Rules:

- The read holds the message pile's own lock (lionagi's ``Pile.lock``, a re-entrant thread
  lock). lionagi's ``Pile`` writes (``include``, ``update``, ``pop``, ... reached through
  ``branch.msgs.add_message`` and friends) change the progression and the records under that
  lock, so every id read is already in ``branch.msgs.messages`` and the order is the one
  between two such writes.
- A writer that changes a progression without that lock (a ``current_progression`` view
  edited directly from another thread) can still interrupt the read; the read is then
  repeated, at most ``TRIES`` times in all. When every try is interrupted the last
  ``RuntimeError`` is raised with a note naming the fix.
- Nothing is written: the lock is released on return, the progression is not changed.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from lionagi.protocols.generic.element import Element
    from lionagi.protocols.generic.pile import Pile

__all__ = ("TRIES", "read_order")

TRIES = 16

_E = TypeVar("_E", bound="Element")
_T = TypeVar("_T")


def read_order(pile: Pile[_E], order: Iterable[_T]) -> tuple[_T, ...]:
    """``tuple(order)`` read under ``pile``'s lock, as of one moment (module rules)."""
    with pile.lock:
        for _ in range(TRIES - 1):
            try:
                return tuple(order)
            except RuntimeError:  # changed mid-read by a writer that bypasses the pile's lock
                continue
        try:
            return tuple(order)
        except RuntimeError as exc:
            exc.add_note(
                f"lionagi-turns: the branch's progression changed during each of {TRIES} "
                "reads; edit it (or metadata['current_progression']) while holding "
                "branch.msgs.messages.lock, or from the thread that compiles"
            )
            raise
