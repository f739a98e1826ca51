"""The remembered part of a bound's output spliced into the next call's: the output turns and
the id strings of the head turns, of the remembered turns ``[a, b)`` and of the tail turns, end
to end, the remembered part copied once (not an object per turn)."""

from __future__ import annotations

from array import array
from itertools import accumulate, chain
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

    from lionagi_turns.core.history import Turn

__all__ = ("joined", "spliced")


def spliced(
    head: Sequence[Turn], remembered: Sequence[Turn], a: int, b: int, tail: Sequence[Turn]
) -> list[Turn]:
    """``head + remembered[a:b] + tail``, copying the remembered part once."""
    out = list(remembered[a:b]) if a < b else []
    if head:
        out[:0] = head
    out += tail
    return out


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
