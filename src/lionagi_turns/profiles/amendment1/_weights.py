"""Whole turns and what a ceiling weighs of them, kept on the bound's memory so that a next turn
splits and weighs only its new whole turns.

Rules:

- A whole turn is an instruction turn with the assistant run that answers it; an assistant run
  before any instruction is one on its own (``whole_turns``).
- ``whole_turns`` takes the leading whole turns of the branch's last split (``Split``) that are
  made of the very turn objects this projection starts with and are closed by a turn that is
  the same object too (so none of them can have grown); it splits the rest. The whole turns
  it reports as taken are those, and the next ones made of the very turn objects of the last
  split's whole turns at the same index (a whole turn's values are functions of its turns).
- A whole turn's weight (``group_weight``) is its share of the request with none of its results
  cleared: per turn, as its layout sent it when the layout knows it (its results in), else its
  history size and its tool_results entry's block; each with the join before it.
- ``Weights`` is one compile's per-whole-turn weights (and, for tier 1, each whole turn's
  rendered result pairs, and every clearing candidate in view order), kept under its ``key``
  (the layout's sent-text function; None: Amendment 1's own rendering). A next compile takes the
  first ``reused`` whole turns' values only under the same key, and only when the bound's memory
  holds sizes made with the same ``measure``.
- What is taken is what the compile would derive again: the output and the records are the same
  with the memory on or off.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import is_
from uuid import UUID

from lionagi_turns.core.history import AssistantTurn, InstructionTurn, Turn
from lionagi_turns.core.render import Result
from lionagi_turns.profiles.amendment1._clearing import Candidate
from lionagi_turns.profiles.amendment1._entries import Pair, rendered_pairs
from lionagi_turns.profiles.amendment1._meter import Meter
from lionagi_turns.profiles.amendment1._sections import tool_results_block

__all__ = (
    "Cleared",
    "Group",
    "Split",
    "Weights",
    "block_weight",
    "group_id",
    "group_weight",
    "group_weights",
    "previous_index",
    "turn_weight",
    "whole_turns",
)

Group = tuple[Turn, ...]
Sent = Callable[[InstructionTurn], int | None]


@dataclass(frozen=True, slots=True)
class Split:
    """One projection's whole turns and where each ends in its turns (exclusive)."""

    groups: tuple[Group, ...]
    ends: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Weights:
    """What one compile under a ceiling weighed (module rules): ``weights``, each whole turn's
    with none of its results cleared; ``first``, the first kept whole turn's index; ``cleared``,
    tier 1's tables (None without clearing); ``counts``, the texts' counts the next compile
    measures again."""

    key: object
    weights: tuple[int, ...]
    first: int = 0
    cleared: Cleared | None = None
    # the counts of texts the next compile measures again: the system, the join, the history
    # marker and the current instruction's durable rendering (history next turn)
    counts: Mapping[str, int] | None = None

    def reused(self, groups: int, key: object) -> int:
        """How many leading whole turns' values a compile with ``groups`` reused whole turns
        and layout ``key`` takes."""
        return min(groups, len(self.weights)) if key is self.key else 0


@dataclass(frozen=True, slots=True)
class Cleared:
    """Tier 1's part of ``Weights``: each whole turn's turns' rendered result pairs, every
    clearing candidate in view order with its position by id, each cleared result's tokens
    whole, and each whole turn with cleared results: (their ids, its weight so)."""

    pairs: tuple[tuple[tuple[Pair, ...], ...], ...]
    candidates: tuple[Candidate, ...]
    index: Mapping[str, int]
    tokens: Mapping[str, int]
    touched: Mapping[int, tuple[frozenset[str], int]]


def whole_turns(turns: Sequence[Turn], same: int, kept: Split | None) -> tuple[Split, int]:
    """The whole turns of ``turns`` and how many leading ones were taken from ``kept`` (module
    rules); ``same``: how many leading ``turns`` are the very objects ``kept`` was split from."""
    taken = bisect_left(kept.ends, same) if kept is not None and same else 0
    groups: list[Group] = list(kept.groups[:taken]) if kept is not None else []
    ends: list[int] = list(kept.ends[:taken]) if kept is not None else []
    current: list[Turn] | None = None
    for at in range(ends[-1] if ends else 0, len(turns)):
        turn = turns[at]
        if isinstance(turn, InstructionTurn) or (current is None and not groups):
            if current is not None:
                groups.append(tuple(current))
                ends.append(at)
            current = [turn]
        elif isinstance(turn, AssistantTurn) and current is not None:
            current.append(turn)
        else:  # pragma: no cover - a taken whole turn is closed by an instruction turn
            raise TypeError(f"turn {at} ({type(turn).__name__}) opens no whole turn")
    if current is not None:
        groups.append(tuple(current))
        ends.append(len(turns))
    if kept is not None:  # a whole turn made of the very same turn objects is the same too
        while (taken < min(len(groups), len(kept.groups))
               and _same_turns(groups[taken], kept.groups[taken])):
            taken += 1
    return Split(tuple(groups), tuple(ends)), taken


def _same_turns(one: Group, other: Group) -> bool:
    return len(one) == len(other) and all(map(is_, one, other))


def block_weight(meter: Meter, results: Sequence[Result], join: int) -> int:
    """A tool_results entry's block and the join before it (0 for an empty entry)."""
    return meter.text(tool_results_block(results)) + join if results else 0


def turn_weight(
    meter: Meter,
    sent: Sent | None,
    turn: Turn,
    size: int,
    join: int,
    pairs: Sequence[Pair] | None = None,
) -> int:
    """One turn's share of the request with none of its results cleared (module rules);
    ``pairs``: its rendered result pairs when the caller has them."""
    if sent is not None and isinstance(turn, InstructionTurn):
        known = sent(turn)
        if known is not None:
            return known + join
    if pairs is None:
        pairs = (rendered_pairs(turn.message, turn.results, turn.sources)
                 if isinstance(turn, InstructionTurn) and turn.results else ())
    return size + join + block_weight(meter, [r for r, _ in pairs], join)


def group_weight(
    meter: Meter, sent: Sent | None, group: Sequence[Turn], sizes: Sequence[int], join: int
) -> int:
    """A whole turn's weight with none of its results cleared (module rules)."""
    return sum(turn_weight(meter, sent, t, s, join) for t, s in zip(group, sizes, strict=True))


def group_weights(
    meter: Meter,
    sent: Sent | None,
    groups: Sequence[Sequence[Turn]],
    sizes: Sequence[int],
    join: int,
    known: Sequence[int],
) -> list[int]:
    """Each whole turn's weight (``group_weight``): the ``known`` leading ones taken, the rest
    weighed from ``sizes`` (each turn's history size, in view order)."""
    out = list(known)
    at = len(sizes) - sum(map(len, groups[len(out):]))
    for group in groups[len(out):]:
        out.append(group_weight(meter, sent, group, sizes[at : at + len(group)], join))
        at += len(group)
    return out


def group_id(group: Sequence[Turn]) -> str:
    return str(_head_id(group))


def _head_id(group: Sequence[Turn]) -> UUID:
    head = group[0]
    if isinstance(head, InstructionTurn):
        return head.message.id
    assert isinstance(head, AssistantTurn)
    return head.messages[0].id


def previous_index(
    groups: Sequence[Sequence[Turn]], previous: str | None, known: Weights | None, taken: int
) -> int:
    """The index of the whole turn ``previous`` (the recorded first kept turn) heads; 0 for
    None or a turn not in ``groups``. The memory's first kept whole turn is tried first."""
    if previous is None:
        return 0
    if known is not None and 0 < known.first < taken and group_id(groups[known.first]) == previous:
        return known.first
    try:
        target = UUID(previous)
    except ValueError:
        return 0
    return next((i for i, g in enumerate(groups) if _head_id(g) == target), 0)
