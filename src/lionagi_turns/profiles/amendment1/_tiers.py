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

from bisect import bisect_left
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import accumulate

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
from lionagi_turns.profiles.amendment1._sections import result_entry
from lionagi_turns.profiles.amendment1._weights import Cleared, turn_weight

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
    weighed: tuple[Sequence[Sequence[Turn]], Sequence[int], list[int]],
    at: tuple[int, int],
    known: tuple[int, Cleared | None],
) -> tuple[int, list[int], dict[str, int], bool, Cleared]:
    """(the first kept group, each group's weight, the cleared set, whether this is a step,
    what the next compile may take) under the module contract. ``weighed``: the whole turns,
    each turn's history size and each group's weight with nothing cleared; ``at``: the
    recorded first kept group and what the history marker weighs; ``known``: how many leading
    groups are the memory's, and its tier-1 part (``_weights``)."""
    groups, sizes, base = weighed
    prev, mark = at
    join = meter.text("\n\n")
    memo = _Memo.of(groups, known)
    starts: list[int] = []  # where each group's turns start (built when a group is reweighed)

    def weight(g: int, cleared: dict[str, int]) -> int:
        if not starts:
            starts.extend((0, *accumulate(map(len, groups))))
        return _weight(meter, levels.sent, groups[g], sizes[starts[g] : starts[g + 1]],
                       memo.pairs[g], cleared, join)

    cleared = memo.recorded(levels.previous, prev, option, meter)
    weights = list(base) if cleared else base  # ``base`` is the caller's: changed only in a copy
    for g, ids in memo.groups_of(cleared).items():
        weights[g] = memo.touched_weight(g, ids, known[0], partial(weight, g, cleared))

    def request(start: int) -> int:
        return sum(weights[start:]) + (mark if start else 0)

    if request(prev) <= levels.room:
        return prev, weights, memo.in_view_order(cleared, prev), False, memo.kept(cleared, weights)
    target = levels.low - levels.fixed
    saved = 0
    weights = weights if cleared else list(base)
    for c in memo.fresh(cleared, prev, option):
        if request(prev) <= target and saved >= option.clear_at_least:
            break
        before = weights[c.group]
        cleared[c.id] = memo.tokens_of(c, meter)
        after = weight(c.group, cleared)
        if after >= before:  # its placeholder would not shorten it: it stays whole
            del cleared[c.id]
            continue
        weights[c.group] = after
        saved += before - after
    start = prev
    if request(prev) > target:
        low = max(0, target - mark)
        start = next(s for s in range(prev, len(groups) + 1) if sum(weights[s:]) <= low)
    return start, weights, memo.in_view_order(cleared, start), True, memo.kept(cleared, weights)


@dataclass(slots=True)
class _Memo:
    """One compile's tier-1 tables: the memory's for its leading groups (``_weights.Cleared``),
    the rest derived."""

    pairs: list[tuple[tuple[Pair, ...], ...]]
    candidates: list[Candidate]
    index: dict[str, int]
    tokens: dict[str, int]
    touched: Mapping[int, tuple[frozenset[str], int]]

    @classmethod
    def of(cls, groups: Sequence[Sequence[Turn]], known: tuple[int, Cleared | None]) -> _Memo:
        taken, memo = known
        if memo is None or not taken:
            pairs = turn_pairs(groups)
            candidates = clearing_candidates(pairs)
            index = {c.id: i for i, c in enumerate(candidates)}
            return cls(pairs, candidates, index, {}, {})
        pairs = [*memo.pairs[:taken], *turn_pairs(groups[taken:])]
        cut = bisect_left(memo.candidates, taken, key=lambda c: c.group)
        candidates = [*memo.candidates[:cut], *clearing_candidates(pairs[taken:], taken)]
        index = dict(memo.index)
        for c in memo.candidates[cut:]:
            index.pop(c.id, None)
        for i in range(cut, len(candidates)):
            index[candidates[i].id] = i
        # a result's tokens only where its whole turn is taken (the same turn objects)
        tokens = {k: n for k, n in memo.tokens.items() if memo.index.get(k, cut) < cut}
        return cls(pairs, candidates, index, tokens, memo.touched)

    def clearable(self, position: int, option: ToolResultClearing) -> bool:
        return clearable(self.candidates, position, option)

    def tokens_of(self, candidate: Candidate, meter: Meter) -> int:
        found = self.tokens.get(candidate.id)
        if found is None:
            found = self.tokens[candidate.id] = meter.text(result_entry(candidate.result))
        return found

    def recorded(self, previous: Collection[str], prev: int, option: ToolResultClearing,
                 meter: Meter) -> dict[str, int]:
        """The results the last compile cleared that are still clearable in the kept turns,
        in view order, with their tokens."""
        found = sorted(p for key in previous if (p := self.index.get(key)) is not None
                       and self.candidates[p].group >= prev and self.clearable(p, option))
        return {(c := self.candidates[p]).id: self.tokens_of(c, meter) for p in found}

    def groups_of(self, cleared: Mapping[str, int]) -> dict[int, frozenset[str]]:
        """Each group with cleared results: their ids."""
        out: dict[int, set[str]] = {}
        for key in cleared:
            out.setdefault(self.candidates[self.index[key]].group, set()).add(key)
        return {g: frozenset(ids) for g, ids in out.items()}

    def touched_weight(
        self, group: int, ids: frozenset[str], taken: int, weigh: Callable[[], int]
    ) -> int:
        """The group's weight with ``ids`` cleared: the memory's when it weighed the same."""
        kept = self.touched.get(group) if group < taken else None
        return kept[1] if kept is not None and kept[0] == ids else weigh()

    def fresh(self, cleared: Mapping[str, int], prev: int,
              option: ToolResultClearing) -> list[Candidate]:
        """The clearable candidates of the kept turns not cleared yet, oldest first."""
        return [c for p, c in enumerate(self.candidates) if c.group >= prev
                and c.id not in cleared and self.clearable(p, option)]

    def in_view_order(self, cleared: Mapping[str, int], start: int) -> dict[str, int]:
        """The cleared results of the groups from ``start``, in view order."""
        found = sorted(p for key in cleared
                       if self.candidates[p := self.index[key]].group >= start)
        return {(c := self.candidates[p]).id: cleared[c.id] for p in found}

    def kept(self, cleared: Mapping[str, int], weights: Sequence[int]) -> Cleared:
        """What the next compile may take."""
        touched = {g: (ids, weights[g]) for g, ids in self.groups_of(cleared).items()}
        tokens = {key: self.tokens[key] for key in cleared if key in self.tokens}
        return Cleared(tuple(self.pairs), tuple(self.candidates), self.index, tokens, touched)


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
        if bool(cleared) and any(str(source.id) in cleared for _, source in entry):
            section = results_section(cleared_entry(entry, cleared), ())
            total += size + join + meter.text(section) + join
        else:
            total += turn_weight(meter, sent, turn, size, join, entry)
    return total
