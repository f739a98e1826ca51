"""The one compile memory: one table of live branches, one named slot per stage (and one for
the repair, one for the last call's record).

Rules:

- ``SLOTS`` is the one per-branch table (``memo.identity.PerObject``): a branch object's entry
  is a mapping from slot name to that slot's value, made with the first value any slot keeps
  for it and dropped when the branch is collected (one weak reference per branch, whatever the
  number of slots).
- ``BranchSlot(name)`` is one named slot of every branch's entry, with ``PerObject``'s API
  (``get``, ``put``, ``setdefault``, ``forget``, ``len``, ``dead``); ``forget`` clears only
  its own slot. A name is taken once per process (``ValueError`` for a second slot of one
  name), so two stages never share a slot by accident.
- Values are replaced whole under one lock; a reader sees the old or the new value.
- ``slot_names()`` lists the slots in the order they were made.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar, cast

from lionagi_turns.memo.identity import PerObject

__all__ = ("SLOTS", "BranchSlot", "slot_names")

V = TypeVar("V")

SLOTS: PerObject[dict[str, object]] = PerObject()
_lock = threading.RLock()
_names: list[str] = []


def slot_names() -> tuple[str, ...]:
    """The slots of the branch memory, in the order they were made."""
    return tuple(_names)


class BranchSlot(Generic[V]):
    """One named slot of the branch memory (module rules)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        with _lock:
            if name in _names:
                raise ValueError(f"the branch memory already has a slot named {name!r}")
            _names.append(name)
        self.name = name

    def get(self, owner: object) -> V | None:
        entry = SLOTS.get(owner)
        return None if entry is None else cast("V | None", entry.get(self.name))

    def put(self, owner: object, value: V) -> bool:
        """Keep ``value`` in ``owner``'s slot; False when ``owner`` has no weak reference."""
        with _lock:
            entry = SLOTS.setdefault(owner, dict)
            if entry is None:
                return False
            entry[self.name] = value
            return True

    def setdefault(self, owner: object, make: Callable[[], V]) -> V | None:
        """``owner``'s value, a new ``make()`` kept when it has none; None without a weak
        reference."""
        with _lock:
            entry = SLOTS.setdefault(owner, dict)
            if entry is None:
                return None
            found = entry.get(self.name)
            if found is None:
                found = entry[self.name] = make()
            return cast("V", found)

    def forget(self, owner: object) -> None:
        with _lock:
            entry = SLOTS.get(owner)
            if entry is not None:
                entry.pop(self.name, None)

    def __contains__(self, slot: object) -> bool:
        """Whether the entry stored under the ``id()`` ``slot`` holds this slot's value."""
        entry = SLOTS.at(slot) if isinstance(slot, int) else None
        return entry is not None and self.name in entry

    def __len__(self) -> int:
        """Live branches holding a value in this slot."""
        return sum(1 for entry in SLOTS.values() if self.name in entry)

    def dead(self) -> int:
        """Entries whose branch is gone (0 once every pending collection callback ran)."""
        return SLOTS.dead()
