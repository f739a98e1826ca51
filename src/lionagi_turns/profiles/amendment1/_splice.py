"""The remembered part of a bound's output spliced into the next call's: the output turns and
the id strings of the head turns, of the remembered turns ``[a, b)`` and of the tail turns, end
to end, the remembered part copied once (not an object per turn)."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, chain
from typing import TYPE_CHECKING

from lionagi_turns.core.history import InstructionTurn
from lionagi_turns.profiles.amendment1._entries import (
    UNCUT,
    derive,
    output_turn,
    source_ids,
    uncut,
)

if TYPE_CHECKING:
    from lionagi_turns.core.history import Turn
    from lionagi_turns.profiles.amendment1._entries import Derived
    from lionagi_turns.profiles.amendment1._memory import Remembered

__all__ = ("KeptIds", "joined", "kept_ids", "outputs", "reused_span", "spliced", "turn_ids")


@dataclass(frozen=True, slots=True)
class KeptIds:
    """The kept turns' history ids and entry source ids end to end, with where each kept
    turn's ids end in them."""

    history: tuple[str, ...]
    history_ends: array[int]
    sources: tuple[str, ...]
    source_ends: array[int]


def spliced(
    head: Sequence[Turn], remembered: Sequence[Turn], a: int, b: int, tail: Sequence[Turn]
) -> tuple[Turn, ...]:
    """``head + remembered[a:b] + tail``, copying the remembered part once."""
    return (*head, *remembered[a:b], *tail) if a < b else (*head, *tail)


def joined(
    head: list[tuple[str, ...]],
    memo: tuple[tuple[str, ...], array[int]] | None,
    a: int,
    b: int,
    tail: list[tuple[str, ...]],
) -> tuple[tuple[str, ...], array[int]]:
    """The ids of the head turns, of the remembered turns ``[a, b)`` and of the tail turns, end
    to end, and where each turn's ids end in them (an ``array``: copied without touching an
    object per turn)."""
    flat = tuple(chain.from_iterable(head))
    ends = array("q", accumulate(map(len, head)))
    if memo is not None and a < b:
        ids, memo_ends = memo
        start = memo_ends[a - 1] if a else 0
        shift = len(flat) - start
        flat += ids[start : memo_ends[b - 1]]
        ends += memo_ends[a:b] if shift == 0 else array("q", (e + shift for e in memo_ends[a:b]))
    base = len(flat)
    flat += tuple(chain.from_iterable(tail))
    ends += array("q", (base + end for end in accumulate(map(len, tail))))
    return flat, ends


def reused_span(first: int, same: int, memo: Remembered | None) -> tuple[int, int, int, int]:
    """(lo, hi, a, b): ``[lo, hi)`` the kept turns the memory holds unchanged, ``[a, b)``
    the same span relative to the memory's kept turns; empty without a memory."""
    if memo is None:
        return first, first, 0, 0
    lo = max(first, memo.first)
    hi = max(lo, same)
    return lo, hi, lo - memo.first, hi - memo.first


def outputs(
    turns: Sequence[Turn],
    first: int,
    cuts: Sequence[tuple[int, str]] | None,
    derived: Sequence[Derived] | None,
    memo: Remembered | None,
    span: tuple[int, int],
    head: Sequence[Turn],
    tail: Sequence[Turn],
) -> tuple[Turn, ...]:
    """The output turns for ``turns[first:]``: the memory's own object for a reused turn whose
    budget decision is unchanged, else the turn with its entry (``cuts[i]``; None: uncut)."""
    a, b = span
    if memo is not None and a < b and cuts is None and memo.cuts is None:
        # every reused turn's decision is UNCUT now and was then: its output turn stands
        return spliced(tuple(map(uncut, head)), memo.out, a, b, tuple(map(uncut, tail)))
    out = []
    for i, turn in enumerate(turns[first:]):
        cut = UNCUT if cuts is None else cuts[i]
        m = first + i - memo.first if memo is not None else -1
        if (
            memo is not None
            and a <= m < b
            and cut == (UNCUT if memo.cuts is None else memo.cuts[m])
        ):
            out.append(memo.out[m])
        else:
            out.append(output_turn(turn, derive(turn) if derived is None else derived[i], cut))
    return tuple(out)


def kept_ids(
    head: Sequence[Turn], memo: Remembered | None, span: tuple[int, int], tail: Sequence[Turn]
) -> KeptIds:
    """The kept turns' ids: the head's and the tail's derived, the remembered span ``[a, b)``'s
    taken from ``memo``."""
    a, b = span
    history, history_ends = joined(
        list(map(turn_ids, head)),
        None if memo is None else (memo.history, memo.history_ends),
        a,
        b,
        list(map(turn_ids, tail)),
    )
    sources, source_ends = joined(
        list(map(source_ids, head)),
        None if memo is None else (memo.sources, memo.source_ends),
        a,
        b,
        list(map(source_ids, tail)),
    )
    return KeptIds(history, history_ends, sources, source_ends)


def turn_ids(turn: Turn) -> tuple[str, ...]:
    """A turn's history ids: its instruction's, or its assistant run's."""
    if isinstance(turn, InstructionTurn):
        return (str(turn.message.id),)
    return tuple(str(m.id) for m in turn.messages)
