"""What the profile remembers of one branch between compiles: one value per live branch.

Rules:

- The key is the branch object itself, held through a weak reference: the value goes when
  the branch is collected, and a recycled ``id()`` never finds another branch's value
  (identity is re-checked on every read).
- Values are replaced whole (``remember``), never changed in place, so concurrent compiles
  of one branch read either the old or the new value, each complete.
- Nothing is written to the branch or to any lionagi object.
- With the fast path off (the compile's memo does not keep) the callers never read it and
  never keep a value; a compile with ReAct items still forgets the branch's value.

The value (``Remembered``) is one bound call's decisions for the branch's next call
(``_bound``); what a call hands the memory is a ``Remembered`` (keep it), ``FORGET`` (drop
what is kept) or None (leave the memory as it is).
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from lionagi_turns.core.history import Turn
from lionagi_turns.memo.branch_memory import BranchSlot
from lionagi_turns.profiles.amendment1._contracts import LeftOut
from lionagi_turns.profiles.amendment1._entries import Weighed
from lionagi_turns.profiles.amendment1._weights import Split, Weights

__all__ = (
    "FORGET",
    "Forget",
    "Measured",
    "Remembered",
    "forget",
    "recall",
    "recall_measured",
    "remember",
)


@dataclass(frozen=True, slots=True)
class Measured:
    """What a call with a budget measured, for the next call with the same ``measure`` (the
    caller's object, compared by identity; None: o200k — a measure is a function of its text).
    The sequences are aligned with the call's turns (None: that turn was not measured)."""

    measure: Callable[[str], int] | None
    turn_sizes: tuple[int, ...] | None = None  # history budget: each turn's history size
    dropped: int = 0  # whole turns (groups) the history budget dropped
    truncated: tuple[LeftOut, ...] = ()  # their records' entries
    truncated_ends: array[int] = field(default_factory=lambda: array("q"))  # per group
    entries: tuple[Weighed | None, ...] | None = None  # tool_results budget: per turn
    split: Split | None = None  # history budget: the whole turns (``_weights``)
    weights: Weights | None = None  # a ceiling: what it weighed of them (``_weights``)


@dataclass(frozen=True, slots=True)
class Remembered:
    """One call's decisions, for the next call on the same branch. ``turns`` is the projection
    the call was given (the pipeline never changes it once handed out); ``out`` and ``cuts``
    are aligned with ``turns[first:]`` (the kept turns); ``history`` / ``sources`` are the kept
    turns' history ids and entry source ids end to end, ``*_ends[i]`` where kept turn ``i``'s
    ids end in them (the arrays are never changed once remembered)."""

    turns: Sequence[Turn]
    first: int
    out: tuple[Turn, ...]
    cuts: tuple[tuple[int, str], ...] | None  # None: every cut is UNCUT
    history: tuple[str, ...]
    history_ends: array[int]
    sources: tuple[str, ...]
    source_ends: array[int]
    measured: Measured | None = None


@dataclass(frozen=True, slots=True)
class Forget:
    """A call's word to the memory: drop what is remembered for the branch (the call ran a
    ReAct step, whose output turns are this request's copies holding its context)."""


FORGET = Forget()

_values: BranchSlot[Remembered] = BranchSlot("amendment1")


def recall(branch: object) -> Remembered | None:
    """The value remembered for ``branch`` (this very object), or None."""
    return _values.get(branch)


def recall_measured(
    branch: object, measure: object, remember: bool
) -> tuple[Remembered | None, Measured | None]:
    """The value remembered for ``branch`` and its measures when they were made with this very
    ``measure``; (None, None) when not ``remember``-ing (the fast path off, or ReAct items)."""
    value = recall(branch) if remember else None
    measured = value.measured if value is not None else None
    if measured is not None and measured.measure is not measure:
        measured = None
    return value, measured


def remember(branch: object, value: Remembered) -> None:
    """Remember ``value`` for ``branch`` until the branch is collected or it is replaced."""
    _values.put(branch, value)


def forget(branch: object) -> None:
    """Drop what is remembered for ``branch`` (nothing when nothing is)."""
    _values.forget(branch)
