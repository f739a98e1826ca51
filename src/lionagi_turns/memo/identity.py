"""One value per live object, keyed by the object's identity through a weak reference.

Rules:

- ``get(owner)`` answers only for that very object: an entry is found by ``id(owner)`` and
  its weak reference must still point at ``owner``, so a recycled ``id()`` (or another object
  equal to ``owner``) never finds another object's value.
- An entry goes when its owner is collected (one weak reference per owner, made with the
  first ``put``; later ``put`` s replace the value under it), or on ``forget``.
- Values are replaced whole, never changed here, so concurrent readers see the old or the new
  value; writes take a re-entrant lock (a collection callback may drop an entry while a write
  on the same thread holds it).
- Nothing is written to the owner. An owner that cannot be weakly referenced is never stored
  (``put`` / ``setdefault`` answer False / None).
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ("PerObject",)

V = TypeVar("V")


class PerObject(Generic[V]):
    """See the module rules."""

    def __init__(self) -> None:
        self._entries: dict[int, tuple[weakref.ReferenceType[object], V]] = {}
        # re-entrant: a collection triggered inside a locked write may run _drop on this thread
        self._lock = threading.RLock()

    def get(self, owner: object) -> V | None:
        entry = self._entries.get(id(owner))
        if entry is None or entry[0]() is not owner:
            return None
        return entry[1]

    def put(self, owner: object, value: V) -> bool:
        """Keep ``value`` for ``owner``; False (nothing kept) when it has no weak reference."""
        slot = id(owner)
        with self._lock:
            entry = self._entries.get(slot)
            if entry is not None and entry[0]() is owner:
                self._entries[slot] = (entry[0], value)
                return True
            try:
                ref = weakref.ref(owner, functools.partial(self._drop, slot))
            except TypeError:
                return False
            self._entries[slot] = (ref, value)
            return True

    def setdefault(self, owner: object, make: Callable[[], V]) -> V | None:
        """``owner``'s value, a new ``make()`` kept for it when it has none (one value even
        when threads race: the check and the keep hold the lock); None when it has no weak
        reference."""
        found = self.get(owner)
        if found is not None:
            return found
        with self._lock:
            found = self.get(owner)
            if found is not None:
                return found
            value = make()
            return value if self.put(owner, value) else None

    def forget(self, owner: object) -> None:
        with self._lock:
            entry = self._entries.get(id(owner))
            if entry is not None and entry[0]() is owner:
                del self._entries[id(owner)]

    def __len__(self) -> int:
        return len(self._entries)

    def at(self, slot: int) -> V | None:
        """The value stored under the ``id()`` ``slot`` (live owner or not), or None."""
        entry = self._entries.get(slot)
        return None if entry is None else entry[1]

    def values(self) -> list[V]:
        """The values of the live owners, at one moment."""
        return [value for ref, value in list(self._entries.values()) if ref() is not None]

    def __contains__(self, slot: object) -> bool:
        """Whether an entry is stored under the ``id()`` ``slot`` (live owner or not)."""
        return slot in self._entries

    def dead(self) -> int:
        """Entries whose owner is gone (0 once every pending collection callback has run)."""
        return sum(1 for ref, _ in list(self._entries.values()) if ref() is None)

    def _drop(self, slot: int, dead: weakref.ReferenceType[object]) -> None:
        with self._lock:
            entry = self._entries.get(slot)
            if entry is not None and entry[0] is dead:
                del self._entries[slot]
