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

from typing import Any

from lionagi_turns.memo.identity import PerObject

__all__ = ("forget", "recall", "remember")

_values: PerObject[Any] = PerObject()


def recall(branch: object) -> Any | None:
    """The value remembered for ``branch`` (this very object), or None."""
    return _values.get(branch)


def remember(branch: object, value: object) -> None:
    """Remember ``value`` for ``branch`` until the branch is collected or it is replaced."""
    _values.put(branch, value)


def forget(branch: object) -> None:
    """Drop what is remembered for ``branch`` (nothing when nothing is)."""
    _values.forget(branch)
