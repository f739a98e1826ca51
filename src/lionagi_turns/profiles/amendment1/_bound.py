"""The profile's ``bound`` (ADR-0007 D2 §6 step 1, and each kept instruction's tool_results
entry), remembered per branch so that a next turn redoes only what is new.

What one call decides (input: the pipeline's projection of the view; output: a ``Bounded``
holding the bounded projection the pipeline renders and this call's ``BoundDecision``):

- the whole view is valid first (its first defect is raised, before any bound runs);
- view exclusions become history ``evicted`` / ``compacted`` entries (``_views``);
- with a history budget, whole turns are measured (the instruction rendered durably with its
  own prompt context; its assistant run as it renders) and the newest that fit are kept; every
  record of a dropped turn is a ``truncated`` entry;
- each kept instruction's entry, and the current instruction's (the pending results), renders
  its results, skipping one equal to an earlier one in the entry or to an item of the
  instruction's durable prompt context; with a tool_results budget the newest results that
  fit are kept (oldest dropped first) and the entry that lost the oldest carries the marker;
- the records, on the decision: ``exclusions``, ``truncated``, ``history_kept``,
  ``results_kept``, ``results_left`` (references by id string).

``Bound`` holds only its configuration and each call returns its own decision. Its one
stateful part is a ``rule`` that keeps state of its own (the input ceiling's ``Stepper``,
``_ceiling``, records what it stepped for the compile that made it); such a ``Bound`` serves
one compile. A rule that cleared results (its ``cleared``, id -> tokens) has them sent as
placeholders (``_clearing.clear_outputs``), listed as ``cleared`` in ``results_left`` and not
in ``results_kept``; the memory keeps the entries uncleared.

Memory (``_memory``, one value per live branch; read and kept only with the fast path on and no
ReAct items, and forgotten by a call with ReAct items whatever the fast path): the decision's
``memory`` is what this call made of each kept turn — its id strings, its entry's source ids,
its budget decision and its output turn object — and, under budgets, what it measured (each
turn's history size, each entry's result sizes, the dropped turns' entries);
``remember_decision``, called once the pipeline succeeded, keeps it for the branch. The next
call takes a turn's part from there only when the turn is the very object the remembered call
was given (the pipeline hands back the same turn objects only while every record and content
behind them is unchanged, and turns are frozen — ``memo/resume``); its output turn object only
when the budget decisions for it (results cut, marker) are also the same; a size only for the
same ``measure`` object (a function of its text). Everything taken is what this call would
derive again, so the output and the records are identical with the memory on or off; an
unchanged turn keeps its output turn object, which lets the pipeline reuse its rendering.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol
from uuid import UUID

from lionagi_turns.core.contracts import TurnRequest as SeedRequest
from lionagi_turns.core.history import InstructionTurn, Projection, Turn, select_ids
from lionagi_turns.core.profile import Bounded, Memo
from lionagi_turns.core.rendering import assistant_text, history_record
from lionagi_turns.core.values import naming_record
from lionagi_turns.memo.resume import same_prefix
from lionagi_turns.profiles.amendment1 import _memory as _memory
from lionagi_turns.profiles.amendment1 import _turns as _turns
from lionagi_turns.profiles.amendment1._clearing import clear_outputs, cleared_left
from lionagi_turns.profiles.amendment1._contracts import LeftOut, SectionBudgets
from lionagi_turns.profiles.amendment1._entries import (
    Derived,
    Weighed,
    budget_cuts,
    cut_entry,
    cut_source_ids,
    derive,
    rendered_pairs,
    results_section,
)
from lionagi_turns.profiles.amendment1._memory import FORGET, Forget, Measured, Remembered
from lionagi_turns.profiles.amendment1._meter import Measure, Meter
from lionagi_turns.profiles.amendment1._sections import result_entry
from lionagi_turns.profiles.amendment1._splice import KeptIds, kept_ids, outputs, reused_span
from lionagi_turns.profiles.amendment1._turns import keep_newest, split_turns
from lionagi_turns.profiles.amendment1._views import view_exclusions
from lionagi_turns.profiles.amendment1._weights import Split, Weights, whole_turns

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

    from lionagi_turns.core.pipeline import Trace

__all__ = ("Bound", "BoundDecision", "bound_decision", "remember_decision", "results_section")


class Rule(Protocol):
    """``Bound.rule``: given the projection, its whole turns, each turn's history size, how many
    leading whole turns are the memory's and what the memory weighed of them (``_weights``),
    returns the first kept whole turn; after the call its ``weighed`` is what the next compile
    may take (None: nothing)."""

    weighed: Weights | None

    def __call__(
        self,
        projected: Projection,
        groups: Sequence[Sequence[Turn]],
        sizes: Sequence[int],
        reused: int,
        known: Weights | None,
    ) -> int: ...



@dataclass(frozen=True, slots=True)
class BoundDecision:
    """What one bound call decided (module docstring): its records, and ``memory``, what the
    branch's memory takes from it once the pipeline succeeded (``remember_decision``): a
    ``Remembered`` to keep, ``FORGET`` (the call ran a ReAct step; with the fast path on or
    off) or None (the fast path is off and no ReAct step ran: the memory is left as it is)."""

    exclusions: tuple[LeftOut, ...]
    truncated: tuple[LeftOut, ...]
    history_kept: tuple[str, ...]
    results_kept: tuple[str, ...]
    results_left: tuple[LeftOut, ...]
    memory: Remembered | Forget | None = field(repr=False)

    @property
    def history_left(self) -> tuple[LeftOut, ...]:
        """The history section's ``left_out``: the view exclusions, then the dropped turns'."""
        return (*self.exclusions, *self.truncated)


@dataclass(frozen=True, slots=True)
class _Start:
    """What the history budget decided: ``first``, the index of the first kept turn in the
    projection; ``truncated``, the dropped turns' records; and what the next call may take:
    each turn's history size (None: no history budget), the dropped groups and where each
    one's entries end in ``truncated``."""

    first: int = 0
    truncated: tuple[LeftOut, ...] = ()
    sizes: tuple[int, ...] | None = None
    dropped: int = 0
    ends: array[int] = field(default_factory=lambda: array("q"))
    split: Split | None = None  # the whole turns (with a history budget)


@dataclass(frozen=True, slots=True)
class Bound:
    """The profile's ``bound`` (module docstring): its configuration only. ``react``: the
    compile runs a ReAct step, which replaces the output turns it reduces by copies holding
    this request's context, so nothing is taken from the memory and the decision forgets what
    it holds; nor when ``memo`` (the compile's, passed in by its entry point) keeps nothing
    (the fast path off)."""

    branch: Branch
    budgets: SectionBudgets
    meter: Meter
    memo: Memo
    react: bool = False
    measure: Measure | None = None  # the caller's (None: o200k), the key of what was measured
    # the history start rule (None: ``keep_newest`` under the history budget); called with the
    # projection, its whole turns and each turn's history size, it returns the first kept group
    rule: Rule | None = None
    view: tuple[UUID, ...] | None = None  # the compile's view (None: selected again)

    def __call__(self, projected: Projection, request: SeedRequest) -> Bounded:
        """The bounded projection and this call's ``BoundDecision``; the pipeline raised the
        view's first defect before calling."""
        exclusions = view_exclusions(self.branch, request.progression).left_out
        turns = projected.turns
        remember = not self.react and self.memo.keeps
        memo, same, measured = self._recalled(turns, remember)
        start = self._history_start(projected, request, measured, same, memo)
        first = start.first
        # Every kept turn's entry is derived only when the tool_results budget weighs them all.
        table = derived = weighed = None
        if self.budgets.tool_results is not None:
            table, derived = self._derived(turns, first, measured, same)
        pending = rendered_pairs(request.instruction, projected.pending, projected.pending_sources)
        if table is not None and derived is not None:
            weighed = self._weighed(table, derived, first)
        listed, pending_cut, dropped, results_left = budget_cuts(
            weighed, pending, self.budgets.tool_results, self.meter
        )
        cuts = None if listed is None else tuple(listed)  # remembered: never changed
        lo, hi, a, b = reused_span(first, same, memo)
        head, tail = turns[first:lo], turns[hi:]
        out = outputs(turns, first, cuts, derived, memo, (a, b), head, tail)
        pending_entry, pending_sources = cut_entry(pending, pending_cut)
        ids = kept_ids(head, memo, (a, b), tail)
        results_kept = (
            ids.sources + tuple(str(s.id) for s in projected.pending_sources) if dropped == 0
            else cut_source_ids(derived, cuts, (pending, projected.pending_sources), pending_cut)
        )
        memory: Remembered | Forget | None = FORGET if self.react else None
        if remember:  # what is remembered is the entries uncleared
            memory = self._remembered(turns, start, out, cuts, ids, table)
        cleared = getattr(self.rule, "cleared", None)
        if cleared:  # the ceiling's tier 1: these results are sent as placeholders
            out = clear_outputs(out, cleared)
            results_kept = tuple(i for i in results_kept if i not in cleared)
            results_left = (*results_left, *cleared_left(cleared))
        decision = BoundDecision(
            exclusions, start.truncated, ids.history, results_kept, results_left, memory
        )
        bounded = Projection(out, pending_entry, projected.defects, pending_sources)
        return Bounded(bounded, decision)

    def _recalled(
        self, turns: Sequence[Turn], remember: bool
    ) -> tuple[Remembered | None, int, Measured | None]:
        """(the branch's memory, how many leading turns it holds unchanged, its measures
        when they were made with this call's ``measure``); nothing when not remembering."""
        memo, measured = _memory.recall_measured(self.branch, self.measure, remember)
        same = same_prefix(turns, memo.turns) if memo is not None else 0
        return memo, same, measured

    def _remembered(
        self,
        turns: Sequence[Turn],
        start: _Start,
        out: tuple[Turn, ...],
        cuts: tuple[tuple[int, str], ...] | None,
        ids: KeptIds,
        table: list[Weighed | None] | None,
    ) -> Remembered:
        """What the branch's next call takes from this one (``_memory.Remembered``)."""
        measured = Measured(
            self.measure,
            turn_sizes=start.sizes,
            dropped=start.dropped,
            truncated=start.truncated,
            truncated_ends=start.ends,
            entries=None if table is None else tuple(table),
            split=start.split,
            weights=getattr(self.rule, "weighed", None),
        )
        return Remembered(
            turns=turns,  # the pipeline's sequences are never changed once handed out
            first=start.first,
            out=out,
            cuts=cuts,
            history=ids.history,
            history_ends=ids.history_ends,
            sources=ids.sources,
            source_ends=ids.source_ends,
            measured=measured,
        )

    # --------------------------------------------------------------------------- history

    def _history_start(
        self,
        projected: Projection,
        request: SeedRequest,
        measured: Measured | None,
        same: int,
        memo: Remembered | None,
    ) -> _Start:
        """What the history budget keeps (``_Start``). Sizes and entries ``measured`` for the
        first ``same`` turns (the remembered call's very turn objects, so the same records,
        contents and revisions) are taken, not measured again."""
        if self.budgets.history is None:
            return _Start()
        turns = projected.turns
        known = measured.turn_sizes if measured is not None else None
        reused = min(same, len(known)) if known is not None else 0
        split, taken = whole_turns(turns, reused, measured.split if measured else None)
        groups = split.groups
        # in view order, as the walk measures
        sizes = (*(known[:reused] if known is not None else ()),
                 *map(self._turn_size, turns[reused:]))
        if self.rule is not None:
            weights = measured.weights if measured is not None else None
            start = self.rule(projected, groups, sizes, taken, weights)
        else:
            bounds = split.ends
            totals = [sum(sizes[b:e]) for b, e in zip((0, *bounds)[:-1], bounds, strict=True)]
            start = keep_newest(totals, self.budgets.history)
        if not start:
            return _Start(sizes=sizes, split=split)
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
        return _Start(split.ends[start - 1], left, sizes, start, ends, split)

    def _records(
        self, groups: Sequence[Sequence[Turn]], begin: int, end: int, request: SeedRequest
    ) -> list[_turns.Turn]:
        """The whole turns (``_turns.split_turns``) of ``groups[begin:end]``, read from the
        part of the (valid) view they lie in: from just after the instruction before them —
        whose assistant run, also there, is the lead turn dropped here — to the instruction
        after them (the action records before it are its own)."""
        branch = self.branch
        ids = self.view if self.view is not None else select_ids(branch, request.progression)
        before = groups[begin - 1][0] if begin else None
        low = before.position + 1 if isinstance(before, InstructionTurn) else 0
        after = groups[end][0] if end < len(groups) else None
        high = after.position if isinstance(after, InstructionTurn) else len(ids)
        table: Mapping[UUID, object] = branch.msgs.messages.collections  # type: ignore[has-type]
        turns = split_turns(ids[low:high], table).turns
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
        self, turns: Sequence[Turn], first: int, measured: Measured | None, same: int
    ) -> tuple[list[Weighed | None], list[Derived]]:
        """Every turn's remembered entry and sizes (the first ``same`` turns', when the
        remembered call weighed them), and each kept turn's entry (derived where not)."""
        known = measured.entries if measured is not None else None
        reused = min(same, len(known)) if known is not None else 0
        table: list[Weighed | None] = list(known[:reused]) if known is not None else []
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
        ``table`` has none (filled in: ``table`` is what the next call may take)."""
        out: list[Weighed] = []
        for i, entry in enumerate(derived, first):
            w = table[i]
            if w is None:
                w = entry, tuple(self.meter.text(result_entry(r)) for r, _ in entry[0])
                table[i] = w
            out.append(w)
        return out


def bound_decision(trace: Trace) -> BoundDecision:
    """The ``BoundDecision`` a compile under Amendment 1's ``Bound`` carries on
    ``trace.bounded``; ``TypeError`` for a trace whose profile's bound is not one."""
    bounded = trace.bounded
    decision = None if bounded is None else bounded.decision
    if isinstance(decision, BoundDecision):
        return decision
    raise TypeError(
        f"the trace of profile {trace.profile.name!r} carries no Amendment 1 bound decision "
        f"(Trace.bounded.decision is {type(decision).__name__}); compile with a profile whose "
        "bound is amendment1's Bound"
    )


def remember_decision(branch: Branch, decision: BoundDecision) -> None:
    """Apply ``decision.memory`` to ``branch``'s memory, once the pipeline succeeded (the walk
    it was given is the one the next compile resumes from, whether or not a section then
    refuses): a ``Remembered`` is kept, ``FORGET`` drops what is kept, None leaves it."""
    memory = decision.memory
    if isinstance(memory, Remembered):
        _memory.remember(branch, memory)
    elif isinstance(memory, Forget):
        _memory.forget(branch)
    elif memory is not None:
        raise TypeError(
            "BoundDecision.memory must be a Remembered, FORGET or None, got "
            f"{type(memory).__name__}; build the decision with amendment1's Bound"
        )
