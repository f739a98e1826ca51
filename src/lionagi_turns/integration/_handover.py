"""Values handed from the adapter to a later lionagi step, keyed by a recorded object.

``Handover(key_of)`` maps an owner (a recorded lionagi Instruction) to one value, keyed by the
identity of ``key_of(owner)``:

- ``put(owner, value)`` keeps ``value`` exactly as long as ``owner`` lives (a finalizer drops
  the entry when it is collected; a later ``put`` for the same key replaces it).
- ``get(key)`` returns the value only while its owner is alive and ``key_of(owner) is key``,
  otherwise None; so a reused ``id`` never hands over another owner's value.
- ``owner(key)`` is the live owner of the entry stored under ``key``'s identity, or None.

Thread-safe.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from lionagi.protocols.messages import Instruction

__all__ = ("Handover",)

V = TypeVar("V")


class Handover(Generic[V]):
    """See the module contract."""

    def __init__(self, key_of: Callable[[Instruction], object]) -> None:
        self._key_of = key_of
        self._entries: dict[int, tuple[weakref.ref[Instruction], V]] = {}
        self._lock = threading.Lock()

    def put(self, owner: Instruction, value: V) -> None:
        key = id(self._key_of(owner))
        ref = weakref.ref(owner)
        with self._lock:
            self._entries[key] = (ref, value)
        weakref.finalize(owner, self._forget, key, ref)

    def _forget(self, key: int, ref: weakref.ref[Instruction]) -> None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0] is ref:
                del self._entries[key]

    def owner(self, key: object) -> Instruction | None:
        with self._lock:
            entry = self._entries.get(id(key))
        return None if entry is None else entry[0]()

    def get(self, key: object) -> V | None:
        with self._lock:
            entry = self._entries.get(id(key))
        if entry is None:
            return None
        owner = entry[0]()
        if owner is None or self._key_of(owner) is not key:
            return None
        return entry[1]
