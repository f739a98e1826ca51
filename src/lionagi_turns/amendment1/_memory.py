"""What the profile remembers of one branch between compiles: one value per live branch.

Rules:

- The key is the branch object itself, held through a weak reference: the value goes when
  the branch is collected, and a recycled ``id()`` never finds another branch's value
  (identity is re-checked on every read).
- Values are replaced whole (``remember``), never changed in place, so concurrent compiles
  of one branch read either the old or the new value, each complete.
- Nothing is written to the branch or to any lionagi object.
- With the fast path off (``_fast.switch``) the callers neither read nor write it.
"""

from __future__ import annotations

import weakref
from typing import Any

__all__ = ("forget", "recall", "remember")

_values: dict[int, tuple[weakref.ReferenceType[Any], Any]] = {}


def recall(branch: Any) -> Any | None:
    """The value remembered for ``branch`` (this very object), or None."""
    entry = _values.get(id(branch))
    if entry is None or entry[0]() is not branch:
        return None
    return entry[1]


def remember(branch: Any, value: Any) -> None:
    """Remember ``value`` for ``branch`` until the branch is collected or it is replaced."""
    key = id(branch)

    def drop(ref: weakref.ReferenceType[Any], key: int = key) -> None:
        entry = _values.get(key)
        if entry is not None and entry[0] is ref:
            _values.pop(key, None)

    _values[key] = (weakref.ref(branch, drop), value)


def forget(branch: Any) -> None:
    """Drop what is remembered for ``branch`` (nothing when nothing is)."""
    entry = _values.get(id(branch))
    if entry is not None and entry[0]() is branch:
        _values.pop(id(branch), None)

