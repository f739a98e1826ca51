"""The profile's ``bound`` (ADR-0007 D2 §6 step 1, and each kept instruction's tool_results
entry), remembered per branch so that a next turn redoes only what is new.

What one call decides (input: the pipeline's projection of the view; output: the bounded
projection the pipeline renders):

- the whole view is valid first (its first defect is raised, before any bound runs);
- view exclusions become history ``evicted`` / ``compacted`` entries (``_views``);
- with a history budget, whole turns are measured (the instruction rendered durably with its
  own prompt context; its assistant run as it renders) and the newest that fit are kept; every
  record of a dropped turn is a ``truncated`` entry;
- each kept instruction's entry, and the current instruction's (the pending results), renders
  its results, skipping one equal to an earlier one in the entry or to an item of the
  instruction's durable prompt context; with a tool_results budget the newest results that
  fit are kept (oldest dropped first) and the entry that lost the oldest carries the marker;
- the records: ``exclusions``, ``truncated``, ``history_kept``, ``results_kept``,
  ``results_left`` (references by id string).

Memory (``_memory``, one value per live branch; only with the fast path on and no ReAct
items): ``commit()``, called once the pipeline succeeded, keeps what this call made of each kept
turn — its id strings, its entry's source ids, its budget decision and its output turn object —
and, under budgets, what it measured (each turn's history size, each entry's result sizes, the
dropped turns' entries). The next call takes a turn's part from there only when the turn is the
very object the remembered call was given (the pipeline hands back the same turn objects only
while every record and content behind them is unchanged, and never mutates a turn it handed
out — ``_fast/resume``); its output turn object only when the budget decisions for it (results
cut, marker) are also the same; a size only for the same ``measure`` object (a function of its
text). Everything taken is what this call would derive again, so the output and the records
are identical with the memory on or off; an unchanged turn keeps its output turn object, which
lets the pipeline reuse its rendering.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from lionagi_turns.core.contracts import TurnRequest as SeedRequest
from lionagi_turns.core.history import AssistantTurn, InstructionTurn, Projection, Turn, select_ids
from lionagi_turns.core.profile import Bounded, chosen_memo
from lionagi_turns.core.rendering import assistant_text, history_record
from lionagi_turns.core.values import naming_record
from lionagi_turns.memo.resume import same_prefix
from lionagi_turns.profiles.amendment1 import _memory as _memory
from lionagi_turns.profiles.amendment1._contracts import LeftOut, SectionBudgets
from lionagi_turns.profiles.amendment1._entries import (
    UNCUT,
    Derived,
    Pair,
    Weighed,
    budget_cuts,
    cut_entry,
    cut_source_ids,
    derive,
    output_turn,
    rendered_pairs,
    results_section,
    source_ids,
    uncut,
)
from lionagi_turns.profiles.amendment1._meter import Meter
from lionagi_turns.profiles.amendment1._sections import result_entry
from lionagi_turns.profiles.amendment1._splice import joined, spliced
from lionagi_turns.profiles.amendment1._turns import keep_newest, split_turns
from lionagi_turns.profiles.amendment1._views import view_exclusions

__all__ = ("Bound", "results_section")

# ``Bound.rule``: (projection, its whole turns, each turn's history size) -> first kept group
Rule = Callable[[Projection, list[list[Turn]], list[int]], int]


@dataclass(frozen=True, slots=True)
class _Memo:
    """One call's decisions, for the next call on the same branch. ``turns`` is the projection
    the call was given; ``out`` and ``cuts`` are aligned with ``turns[first:]``
    (the kept turns); ``history`` / ``sources`` are the kept turns' history ids and entry
    source ids end to end, ``*_ends[i]`` where kept turn ``i``'s ids end in them."""

    turns: Sequence[Turn]
    first: int
    out: list[Turn]
    cuts: list[tuple[int, str]] | None  # None: every cut is UNCUT
    history: tuple[str, ...]
    history_ends: array[int]
    sources: tuple[str, ...]
    source_ends: array[int]
    measured: _Measured | None = None


@dataclass(frozen=True, slots=True)
class _Measured:
    """What a call with a budget measured, for the next call with the same ``measure`` (the
    caller's object, compared by identity; None: o200k — a measure is a function of its text).
    The lists are aligned with the call's turns (None: that turn was not measured)."""

    measure: Any
    turn_sizes: list[int] | None = None  # history budget: each turn's history size
    dropped: int = 0  # whole turns (groups) the history budget dropped
    truncated: tuple[LeftOut, ...] = ()  # their records' entries
    truncated_ends: array[int] = field(default_factory=lambda: array("q"))  # per group
    entries: list[Weighed | None] | None = None  # tool_results budget: per turn


@dataclass(slots=True)
class Bound:
    """The profile's ``bound`` for one compile, and what it decided (module docstring).
    ``react``: the compile runs a ReAct step, which sets ``context`` on the output turns, so
    nothing is taken from or given to the memory; nor when ``keep`` is False: the compile's
    ``Memo.keeps`` (the fast path off; None: ``chosen_memo()``'s)."""

    branch: Any
    budgets: SectionBudgets
    meter: Meter
    react: bool = False
    measure: Any = None  # the caller's ``measure`` (None: o200k), the key of what was measured
    # the history start rule (None: ``keep_newest`` under the history budget); called with the
    # projection, its whole turns and each turn's history size, it returns the first kept group
    rule: Rule | None = None
    keep: bool | None = None
    exclusions: tuple[LeftOut, ...] = ()
    truncated: tuple[LeftOut, ...] = ()
    history_kept: tuple[str, ...] = ()
    results_kept: tuple[str, ...] = ()
    results_left: tuple[LeftOut, ...] = ()
    _memo: _Memo | None = field(default=None, repr=False)
    _measured: _Measured | None = field(default=None, repr=False)

    def commit(self) -> None:
        """Remember this call's decisions for the branch's next compile (once the pipeline
        succeeded: the walk it was given is the one the next compile resumes from, whether or
        not a section then refuses); a compile that may not remember forgets what was."""
        if self._memo is not None:
            _memory.remember(self.branch, self._memo)
        elif self.react:
            _memory.forget(self.branch)

    def __call__(self, projected: Projection, request: SeedRequest) -> Bounded:
        branch = self.branch  # the pipeline raised the view's first defect before calling us
        self.exclusions = view_exclusions(branch, request.progression).left_out
        turns = projected.turns
        remember = not self.react and (chosen_memo().keeps if self.keep is None else self.keep)
        memo, same, measured = self._recalled(turns, remember)
        self._measured = _Measured(self.measure) if remember else None
        first = self._history_start(projected, request, measured, same, memo)

        lo, hi, a, b = _reused_span(first, same, memo)
        head, tail = turns[first:lo], turns[hi:]
        # Every kept turn's entry is derived only when the tool_results budget weighs them all.
        table = derived = weighed = None
        if self.budgets.tool_results is not None:
            table, derived = self._derived(turns, first, measured, same)
        pending = rendered_pairs(request.instruction, projected.pending, projected.pending_sources)
        if table is not None and derived is not None:
            weighed = self._weighed(table, derived, first)

        cuts, pending_cut, start = self._results_cut(weighed, pending)
        out = _outputs(turns, first, cuts, derived, memo, (a, b), head, tail)
        pending_entry, pending_sources = cut_entry(pending, pending_cut)

        history, history_ends = joined(
            list(map(_ids, head)),
            None if memo is None else (memo.history, memo.history_ends),
            a,
            b,
            list(map(_ids, tail)),
        )
        sources, source_ends = joined(
            list(map(source_ids, head)),
            None if memo is None else (memo.sources, memo.source_ends),
            a,
            b,
            list(map(source_ids, tail)),
        )
        self.history_kept = history
        self.results_kept = (
            sources + tuple(str(s.id) for s in projected.pending_sources) if start == 0
            else cut_source_ids(derived, cuts, (pending, projected.pending_sources), pending_cut)
        )
        self._memo = (
            _Memo(
                turns=turns,  # the pipeline's lists are never changed once handed out
                first=first,
                out=out,
                cuts=cuts,
                history=history,
                history_ends=history_ends,
                sources=sources,
                source_ends=source_ends,
                measured=self._measured,
            )
            if remember
            else None
        )
        return Bounded(Projection(tuple(out), pending_entry, projected.defects, pending_sources))

    def _recalled(
        self, turns: Sequence[Turn], remember: bool
    ) -> tuple[_Memo | None, int, _Measured | None]:
        """(the branch's memory, how many leading turns it holds unchanged, its measures
        when they were made with this call's ``measure``); nothing when not remembering."""
        memo: _Memo | None = _memory.recall(self.branch) if remember else None
        same = same_prefix(turns, memo.turns) if memo is not None else 0
        measured = memo.measured if memo is not None else None
        if measured is not None and measured.measure is not self.measure:
            measured = None
        return memo, same, measured

    # --------------------------------------------------------------------------- history

    def _history_start(
        self,
        projected: Projection,
        request: SeedRequest,
        measured: _Measured | None,
        same: int,
        memo: _Memo | None,
    ) -> int:
        """Index in ``projected.turns`` of the first kept turn; sets ``truncated``. Sizes and
        entries ``measured`` for the first ``same`` turns (the remembered call's very turn
        objects, so the same records, contents and revisions) are taken, not measured again."""
        self.truncated = ()
        if self.budgets.history is None:
            return 0
        turns = projected.turns
        groups = _groups(projected)
        known = measured.turn_sizes if measured is not None else None
        reused = min(same, len(known)) if known is not None else 0
        sizes = known[:reused] if known is not None else []
        sizes += map(self._turn_size, turns[reused:])  # in view order, as the walk measures
        if self._measured is not None:
            self._measured = replace(self._measured, turn_sizes=sizes)
        totals = []
        end = 0
        for group in groups:
            totals.append(sum(sizes[end : end + len(group)]))
            end += len(group)
        if self.rule is not None:
            start = self.rule(projected, groups, sizes)
        else:
            start = keep_newest(totals, self.budgets.history)
        if not start:
            return 0
        # the dropped turns the remembered call dropped too keep their entries
        kept_groups = 0
        if measured is not None and memo is not None and (memo.first < same or memo.first == 0):
            kept_groups = min(start, measured.dropped)
        ends = measured.truncated_ends[:kept_groups] if measured is not None else array("q")
        left = measured.truncated[: ends[-1]] if kept_groups and measured is not None else ()
        if start > kept_groups:  # the records of the newly dropped turns (the walk omits requests)
            fresh: list[LeftOut] = []
            for t in self._records(groups, kept_groups, start, request):
                fresh.extend(
                    LeftOut(str(r.id), "truncated", self.meter.record(r)) for r in t.records
                )
                ends.append(len(left) + len(fresh))
            left += tuple(fresh)
        self.truncated = left
        if self._measured is not None:
            self._measured = replace(
                self._measured, dropped=start, truncated=left, truncated_ends=ends
            )
        return sum(len(g) for g in groups[:start])

    def _records(
        self, groups: list[list[Turn]], begin: int, end: int, request: SeedRequest
    ) -> list[Any]:
        """The whole turns (``_turns.split_turns``) of ``groups[begin:end]``, read from the
        part of the (valid) view they lie in: from just after the instruction before them —
        whose assistant run, also there, is the lead turn dropped here — to the instruction
        after them (the action records before it are its own)."""
        branch = self.branch
        ids = select_ids(branch, request.progression)
        before = groups[begin - 1][0] if begin else None
        low = before.position + 1 if isinstance(before, InstructionTurn) else 0
        after = groups[end][0] if end < len(groups) else None
        high = after.position if isinstance(after, InstructionTurn) else len(ids)
        turns = split_turns(ids[low:high], branch.msgs.messages).turns
        if begin and turns and turns[0].instruction is None:
            del turns[0]  # the assistant run of groups[begin - 1]
        if len(turns) != end - begin:  # pragma: no cover - one partition, two walks
            raise AssertionError("history turns disagree with the projection")
        return turns

    def _turn_size(self, turn: Turn) -> int:
        """One turn's share of its whole turn's history size (``_size``)."""
        if isinstance(turn, InstructionTurn):
            with naming_record(history_record(turn)):
                return self.meter.instruction(turn.message)
        return self.meter.text(assistant_text(turn))

    # ---------------------------------------------------------------------- tool_results

    def _derived(
        self, turns: Sequence[Turn], first: int, measured: _Measured | None, same: int
    ) -> tuple[list[Weighed | None], list[Derived]]:
        """Every turn's remembered entry and sizes (the first ``same`` turns', when the
        remembered call weighed them), and each kept turn's entry (derived where not)."""
        known = measured.entries if measured is not None else None
        reused = min(same, len(known)) if known is not None else 0
        table: list[Weighed | None] = known[:reused] if known is not None else []
        table += [None] * (len(turns) - reused)
        derived = [
            w[0] if (w := table[i]) is not None else derive(turns[i])
            for i in range(first, len(turns))
        ]
        return table, derived

    def _weighed(
        self, table: list[Weighed | None], derived: list[Derived], first: int
    ) -> list[Weighed]:
        """Each kept turn's entry with its results' sizes, measured in view order where
        ``table`` has none; ``table`` is what the next call may take."""
        out: list[Weighed] = []
        for i, entry in enumerate(derived, first):
            w = table[i]
            if w is None:
                w = entry, tuple(self.meter.text(result_entry(r)) for r, _ in entry[0])
                table[i] = w
            out.append(w)
        if self._measured is not None:
            self._measured = replace(self._measured, entries=table)
        return out

    def _results_cut(
        self, weighed: list[Weighed] | None, pending: tuple[Pair, ...]
    ) -> tuple[list[tuple[int, str]] | None, tuple[int, str], int]:
        """``budget_cuts`` under this call's tool_results budget; sets ``results_left``."""
        cuts, pending_cut, start, self.results_left = budget_cuts(
            weighed, pending, self.budgets.tool_results, self.meter
        )
        return cuts, pending_cut, start


# ------------------------------------------------------------------------------- per turn


def _reused_span(first: int, same: int, memo: _Memo | None) -> tuple[int, int, int, int]:
    """(lo, hi, a, b): ``[lo, hi)`` the kept turns the memory holds unchanged, ``[a, b)``
    the same span relative to the memory's kept turns; empty without a memory."""
    if memo is None:
        return first, first, 0, 0
    lo = max(first, memo.first)
    hi = max(lo, same)
    return lo, hi, lo - memo.first, hi - memo.first


def _outputs(
    turns: Sequence[Turn],
    first: int,
    cuts: list[tuple[int, str]] | None,
    derived: list[Derived] | None,
    memo: _Memo | None,
    span: tuple[int, int],
    head: Sequence[Turn],
    tail: Sequence[Turn],
) -> list[Turn]:
    """The output turns for ``turns[first:]``: the memory's own object for a reused turn whose
    budget decision is unchanged, else the turn with its entry (``cuts[i]``; None: uncut)."""
    a, b = span
    if memo is not None and a < b and cuts is None and memo.cuts is None:
        # every reused turn's decision is UNCUT now and was then: its output turn stands
        return spliced(list(map(uncut, head)), memo.out, a, b, list(map(uncut, tail)))
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
    return out


def _ids(turn: Turn) -> tuple[str, ...]:
    if isinstance(turn, InstructionTurn):
        return (str(turn.message.id),)
    return tuple(str(m.id) for m in turn.messages)


def _groups(projection: Projection) -> list[list[Turn]]:
    """The projection's turns as whole turns: an instruction turn with the assistant run that
    answers it; an assistant run before any instruction on its own."""
    groups: list[list[Turn]] = []
    for turn in projection.turns:
        if isinstance(turn, InstructionTurn) or not groups:
            groups.append([turn])
        else:
            assert isinstance(turn, AssistantTurn)
            groups[-1].append(turn)
    return groups
