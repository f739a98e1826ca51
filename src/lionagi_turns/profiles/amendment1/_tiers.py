"""The ceiling's two tiers, in order: clear old tool results (tier 1, ``_clearing``), then drop
whole oldest turns (tier 2) only when clearing cannot bring the request to the low-water mark.

Contract (``tiered_start``, called by ``_ceiling.Stepper`` when its ceiling clears results):

- A whole turn weighs its history size plus its tool_results entry as sent: with its cleared
  results as placeholders and the entry's ``cleared`` marker line.
- The branch's last compile recorded a first kept turn and a cleared set. While the turns
  from that first kept turn, with the recorded results still clearable cleared, fit the
  ceiling's room, both stay: the same request prefix until the next step.
- Otherwise a step: the oldest clearable results of the kept turns are cleared, one at a time,
  until the request is at or under the low-water mark and the step cleared at least
  ``clear_at_least`` tokens (or nothing is left to clear); a result its placeholder (with the
  entry's marker) would not shorten stays whole. When every clearable result is
  cleared and the request is still over the low-water mark, the oldest whole turns are dropped
  until the rest fits it, as the ceiling does without clearing.
- The cleared set returned (id -> tokens of the whole result, in view order) holds only
  results of kept turns; a dropped turn's results are ``truncated`` with it.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from lionagi_turns.core.history import InstructionTurn, Turn
from lionagi_turns.profiles.amendment1._clearing import (
    Candidate,
    ToolResultClearing,
    clearable,
    cleared_entry,
    clearing_candidates,
    turn_pairs,
)
from lionagi_turns.profiles.amendment1._entries import Pair, results_section
from lionagi_turns.profiles.amendment1._meter import Meter
from lionagi_turns.profiles.amendment1._sections import result_entry, tool_results_block

__all__ = ("Levels", "tiered_start")


@dataclass(frozen=True, slots=True)
class Levels:
    """What the stepper measured: the fixed part with the current round's results
    (``fixed``), the room the history has under the ceiling, the low-water mark, the results
    the branch's last compile cleared; ``sent``: a historical instruction's size as its layout
    sent it, results in (None: unknown, or Amendment 1's own rendering)."""

    fixed: int
    room: int
    low: int
    previous: Collection[str]
    sent: Callable[[InstructionTurn], int | None] | None = None


def tiered_start(
    meter: Meter,
    option: ToolResultClearing,
    levels: Levels,
    groups: Sequence[Sequence[Turn]],
    sizes: Sequence[int],
    at: tuple[int, int],
) -> tuple[int, list[int], dict[str, int], bool]:
    """(the first kept group, each group's weight, the cleared set, whether this is a step)
    under the module contract; ``at``: the recorded first kept group and what the history
    marker weighs."""
    prev, mark = at
    join = meter.text("\n\n")
    spans = _spans(groups, sizes)
    pairs = turn_pairs(groups)
    candidates = clearable(clearing_candidates(pairs), option)
    cleared = {c.id: meter.text(result_entry(c.result)) for c in candidates
               if c.group >= prev and c.id in levels.previous}
    weights = [_weight(meter, levels.sent, g, s, p, cleared, join)
               for g, s, p in zip(groups, spans, pairs, strict=True)]

    def request(start: int) -> int:
        return sum(weights[start:]) + (mark if start else 0)

    if request(prev) <= levels.room:
        return prev, weights, _in_view_order(candidates, cleared, prev), False
    target = levels.low - levels.fixed
    saved = 0
    for c in _fresh(candidates, cleared, prev):
        if request(prev) <= target and saved >= option.clear_at_least:
            break
        before = weights[c.group]
        cleared[c.id] = meter.text(result_entry(c.result))
        after = _weight(meter, levels.sent, groups[c.group], spans[c.group], pairs[c.group],
                        cleared, join)
        if after >= before:  # its placeholder would not shorten it: it stays whole
            del cleared[c.id]
            continue
        weights[c.group] = after
        saved += before - after
    start = prev
    if request(prev) > target:
        low = max(0, target - mark)
        start = next(s for s in range(prev, len(groups) + 1) if sum(weights[s:]) <= low)
    return start, weights, _in_view_order(candidates, cleared, start), True


def _spans(groups: Sequence[Sequence[Turn]], sizes: Sequence[int]) -> list[Sequence[int]]:
    """Each group's turns' history sizes."""
    out: list[Sequence[int]] = []
    end = 0
    for group in groups:
        out.append(sizes[end : end + len(group)])
        end += len(group)
    return out


def _fresh(candidates: Sequence[Candidate], cleared: dict[str, int], prev: int) -> list[Candidate]:
    return [c for c in candidates if c.group >= prev and c.id not in cleared]


def _in_view_order(
    candidates: Sequence[Candidate], cleared: dict[str, int], start: int
) -> dict[str, int]:
    return {c.id: cleared[c.id] for c in candidates if c.group >= start and c.id in cleared}


def _weight(
    meter: Meter,
    sent: Callable[[InstructionTurn], int | None] | None,
    group: Sequence[Turn],
    sizes: Sequence[int],
    pairs: Sequence[Sequence[Pair]],
    cleared: dict[str, int],
    join: int,
) -> int:
    """A whole turn's share of the request: an instruction none of whose results is cleared
    as its layout sent it when ``sent`` knows it; else each turn's history size and join, and
    each instruction's entry (its cleared results as placeholders, its marker) and join. (A
    layout that sends history as recorded sends an instruction with cleared results in its
    durable rendering: its record's basis no longer matches it.)"""
    total = 0
    for turn, size, entry in zip(group, sizes, pairs, strict=True):
        touched = bool(cleared) and any(str(source.id) in cleared for _, source in entry)
        known = (sent(turn) if sent is not None and isinstance(turn, InstructionTurn)
                 and not touched else None)
        if known is not None:
            total += known + join
            continue
        total += size + join
        if touched:
            total += meter.text(results_section(cleared_entry(entry, cleared), ())) + join
        elif entry:
            total += meter.text(tool_results_block([r for r, _ in entry])) + join
    return total
