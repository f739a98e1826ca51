"""An input ceiling for the whole request, mapped onto Amendment 1's section budgets, with a
low-water mark: the history is cut in steps, so the cached prefix holds between the steps.

Contract (``InputCeiling(tokens, low_water)``; measures are the profile's, ``Meter``):

- ``tokens`` > 0 and 0 < ``low_water`` <= ``tokens`` (``ValueError`` naming the value, raised
  at construction, so before any compile or call); ``low_water`` None is ``tokens // 2``.
- The fixed part of a request is its system, its instruction (rendered with the request's
  call options), its admitted context blocks and the current round's tool results (the
  pending results of the instruction being compiled). The sections keep D7's postures:
  the system's budget is the ceiling and the instruction's what the system leaves (both
  refuse), the context budget is what system and instruction leave (blocks skip whole,
  within the caller's own context budget if smaller). The current round's results are never
  dropped: when the fixed part alone is over the ceiling the compile refuses
  (``SectionBudgetRefused`` naming ``tool_results``).
- History and the older tool results share the rest (``room``). A whole turn weighs its
  history size plus its tool_results entry; it is kept or dropped with its results. The
  first kept turn of the branch's last compile (``CEILING_KEY`` on the compiled instruction's
  metadata, so it survives ``Branch.to_dict``/``from_dict``) stays the first kept turn while
  the turns from it fit ``room``. When they do not, a drop step removes the oldest whole
  turns until the rest fits ``low_water`` minus the fixed part, and records the new first
  kept turn. Between steps the dropped set, hence the history marker and the prefix, is the
  same on every request.
- ``low_water == tokens`` is Amendment 1's bound as the ADR states it: each request drops
  exactly what does not fit.
- ``calibration``: the measure bounded is the offline one times the factor the branch's
  reported usage calibrated (``_calibration``; ``Stepper.limit``/``low_limit`` above).
- ``clear_tool_results`` (None or False: off, today's requests byte for byte; True or a
  ``ToolResultClearing``): before any whole turn is dropped, older tool results are cleared
  (``_clearing``, ``_tiers``); the record then also holds the cleared set (``cleared``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from typing import TYPE_CHECKING
from uuid import UUID

from lionagi.protocols.messages import Instruction

from lionagi_turns.core.contracts import TurnRequest as SeedRequest
from lionagi_turns.core.history import (
    InstructionTurn,
    Projection,
    Turn,
    branch_system,
)
from lionagi_turns.core.render import ShownSections
from lionagi_turns.profiles.amendment1 import _calibration as _calibration
from lionagi_turns.profiles.amendment1._ceiling_record import (
    CEILING_KEY,
    IgnoredCeilingRecord,
    read_first_kept,
    read_record,
    record_problem,
    trailing_results,
)
from lionagi_turns.profiles.amendment1._clearing import ToolResultClearing, clearing_option
from lionagi_turns.profiles.amendment1._contracts import SectionBudgets
from lionagi_turns.profiles.amendment1._meter import Meter
from lionagi_turns.profiles.amendment1._sections import marker
from lionagi_turns.profiles.amendment1._summary import (
    Compaction,
    check_compaction,
    summary_sizes,
)
from lionagi_turns.profiles.amendment1._tiers import Levels, tiered_start
from lionagi_turns.profiles.amendment1._weights import (
    Weights,
    block_weight,
    group_id,
    group_weights,
    previous_index,
)

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

    from lionagi_turns.core.profile import Memo

__all__ = (
    "CEILING_KEY",
    "IgnoredCeilingRecord",
    "InputCeiling",
    "Layout",
    "Stepper",
    "plan_ceiling",
    "read_first_kept",
    "read_record",
    "record_problem",
)



@dataclass(frozen=True, slots=True)
class InputCeiling:
    """The request's input ceiling in tokens and the low-water mark a drop step cuts down to
    (module contract)."""

    tokens: int
    low_water: int | None = None
    calibration: _calibration.Calibration | None = _calibration.DEFAULT
    clear_tool_results: ToolResultClearing | bool | None = None
    compaction: Compaction | None = None  # tier 3 (``_summary``), run by the integration

    def __post_init__(self) -> None:
        _calibration.check_policy(self.calibration)
        check_compaction(self.compaction)
        if not isinstance(self.tokens, int) or isinstance(self.tokens, bool):
            raise TypeError(f"InputCeiling.tokens must be an int of tokens, got {self.tokens!r}")
        if self.tokens <= 0:
            raise ValueError(f"InputCeiling.tokens must be > 0, got {self.tokens}")
        clearing = clearing_option(self.clear_tool_results)
        object.__setattr__(self, "clear_tool_results", clearing)
        if clearing is not None and clearing.clear_at_least > self.tokens:
            raise ValueError(
                f"ToolResultClearing.clear_at_least {clearing.clear_at_least} is above the "
                f"ceiling of {self.tokens} tokens; pass a clear_at_least at or below it"
            )
        low = self.low_water
        if low is None:
            object.__setattr__(self, "low_water", max(1, self.tokens // 2))
            return
        if not isinstance(low, int) or isinstance(low, bool):
            raise TypeError(f"InputCeiling.low_water must be None or an int, got {low!r}")
        if low <= 0:
            raise ValueError(f"InputCeiling.low_water must be > 0, got {low}")
        if low > self.tokens:
            raise ValueError(
                f"InputCeiling.low_water {low} is above the ceiling of {self.tokens} tokens; "
                "pass a low-water mark at or below the ceiling"
            )

    @property
    def low(self) -> int:
        assert self.low_water is not None
        return self.low_water

    @property
    def clearing(self) -> ToolResultClearing | None:
        """The tier-1 options (None: results are never cleared)."""
        value = self.clear_tool_results
        return value if isinstance(value, ToolResultClearing) else None


_MARK = marker("history", 10**6, "truncated")  # the history marker at its longest count


@dataclass(slots=True)
class Stepper:
    """The ``Bound.rule`` of a compile under a ceiling (module contract); after the bound ran
    it holds what it decided (``room``, ``pending``, ``first``, ``stepped``, ``used``)."""

    ceiling: InputCeiling
    meter: Meter
    fixed: int  # system + instruction + admitted context
    previous: str | None  # the first kept turn recorded by the branch's last compile
    instruction: Instruction  # the instruction being compiled
    pending: int = 0
    room: int = 0
    first: str | None = None
    stepped: bool = False
    history: int = 0  # what the kept turns weigh
    parts: dict[str, int] = field(default_factory=dict)  # the fixed part, per section
    kept: list[int] = field(default_factory=list)  # each kept whole turn's weight
    # how many tokens a historical instruction was sent as (its results in), None: unknown
    sent: Callable[[InstructionTurn], int | None] | None = None
    key: object = None  # the layout's sent-text function: what ``sent`` is a function of
    # the instruction rendered with the request's call options and its own context (None: the
    # layout's ``shown`` sections instead)
    own: int | None = None
    # texts the branch's next compile measures again: the system, and the current instruction's
    # durable rendering (history next turn)
    constants: tuple[str, ...] = ()
    weighed: Weights | None = None  # what this compile weighed, for the next (``_weights``)
    # the view's newer ceiling records this compile did not obey (``read_first_kept``)
    ignored: tuple[IgnoredCeilingRecord, ...] = ()
    calibration: _calibration.InForce = _calibration.OFFLINE

    @property
    def limit(self) -> int:  # the ceiling in the offline measure, as calibrated
        return self.calibration.limit(self.ceiling.tokens)

    @property
    def low_limit(self) -> int:  # the low-water mark so, never above ``limit``
        return min(self.limit, self.calibration.limit(self.ceiling.low))
    previous_cleared: frozenset[str] = frozenset()  # the results the last compile cleared
    cleared: dict[str, int] = field(default_factory=dict)  # this compile's: id -> tokens
    summaries: Mapping[str, int] = field(default_factory=dict)  # ``_summary.summary_sizes``
    summarized: bool = False  # the request sends the summary of the turns before ``first``

    def __call__(
        self,
        projected: Projection,
        groups: Sequence[Sequence[Turn]],
        sizes: Sequence[int],
        reused: int = 0,
        known: Weights | None = None,
    ) -> int:
        from lionagi_turns.profiles.amendment1._entries import rendered_pairs

        join = self.meter.text("\n\n")
        pairs = rendered_pairs(self.instruction, projected.pending, projected.pending_sources)
        self.pending = block_weight(self.meter, [r for r, _ in pairs], join)
        fixed = self.fixed + self.pending
        # the recorded first kept turn's summary is sent while no step moves it: counted
        self.room = max(0, self.limit - fixed - self.summaries.get(self.previous or "", 0))
        # a drop step also puts the history marker (one line) at the head of the history
        mark = self.meter.text(_MARK) + join
        taken = known.reused(reused, self.key) if known is not None else 0
        base = group_weights(self.meter, self.sent, groups, sizes, join,
                             known.weights[:taken] if known is not None else ())
        prev = previous_index(groups, self.previous, known, taken)
        clearing = self.ceiling.clearing
        tier1 = None
        if clearing is not None:
            levels = Levels(fixed, self.room, self.low_limit, self.previous_cleared,
                            self.sent)
            memo = known.cleared if known is not None and taken else None
            start, weights, self.cleared, self.stepped, tier1 = tiered_start(
                self.meter, clearing, levels, (groups, sizes, base), (prev, mark),
                (taken, memo))
        else:
            start, weights = self._dropped_start(base, prev, mark, fixed), base
        fixed_texts = (*self.constants, "\n\n", _MARK)
        self.weighed = Weights(self.key, tuple(base), start, tier1,
                               self.meter.counts(fixed_texts))
        self.history = sum(weights[start:]) + (mark if start else 0)
        self.kept = weights[start:]
        if start == 0:
            self.first = None
        elif start < len(groups):
            self.first = group_id(groups[start])
        else:
            self.first = str(self.instruction.id)
        summary = self.summaries.get(self.first or "", 0) if start else 0
        self.history, self.summarized = self.history + summary, bool(summary)
        return start

    def _dropped_start(self, weights: Sequence[int], prev: int, mark: int, fixed: int) -> int:
        """The first kept group without clearing: the recorded first kept turn while the turns
        from it fit ``room``, else a drop step to the low-water mark."""
        if sum(weights[prev:]) + (mark if prev else 0) <= self.room:
            return prev
        self.stepped = True
        low = max(0, self.low_limit - fixed - mark)
        tail = [*accumulate(reversed(weights))][::-1]
        tail.append(0)  # tail[s] = sum(weights[s:])
        return next(s for s in range(prev, len(weights) + 1) if tail[s] <= low)

    def record(self) -> dict[str, object]:
        """What the compiled instruction carries (``CEILING_KEY``): the first kept turn,
        whether this request was a drop step, the ceiling, the request by the profile's
        measure in all and per section, how many more turns of the kept turns' mean size
        fit before the next drop step, and the calibration in force."""
        typical = round(sum(self.kept) / len(self.kept)) if self.kept else None
        free = self.limit - self.used
        cleared = {} if self.ceiling.clearing is None else {
            "cleared": list(self.cleared), "cleared_tokens": sum(self.cleared.values())}
        return {
            "first": self.first,
            "stepped": self.stepped,
            "ceiling": self.ceiling.tokens,
            "low_water": self.ceiling.low,
            "used": self.used,
            "sections": {**self.parts, "tool_results": self.pending, "history": self.history},
            "kept_turns": len(self.kept),
            "typical_turn": typical,
            "turns_before_next_step": free // typical if typical else None,
            "calibration": self.calibration.record(self.ceiling.tokens, self.ceiling.low),
            **cleared, **({"summarized": True} if self.summarized else {}),
        }

    @property
    def used(self) -> int:
        """The request by the profile's measure: the fixed part, the current round's results
        and the kept turns (with the history marker when a turn is dropped)."""
        return self.fixed + self.pending + self.history


def ceiling_budgets(
    ceiling: InputCeiling, budgets: SectionBudgets, system: int, instruction: int
) -> SectionBudgets:
    """The section budgets a ceiling maps to, before the context blocks are admitted: system
    and instruction refuse over their share; context skips past what they leave; the history
    budget is a placeholder the stepper replaces (module contract)."""
    if budgets.history is not None or budgets.tool_results is not None:
        raise ValueError(
            "an InputCeiling sets the history and tool_results bounds itself; pass "
            f"SectionBudgets without them (got history={budgets.history}, "
            f"tool_results={budgets.tool_results})"
        )
    left = max(0, ceiling.tokens - system - instruction)
    context = left if budgets.context is None else min(budgets.context, left)
    return SectionBudgets(
        system=ceiling.tokens if budgets.system is None else min(budgets.system, ceiling.tokens),
        # a system over the ceiling is the one refusal named (the instruction is not weighed)
        instruction=None if system > ceiling.tokens else _least(
            budgets.instruction, ceiling.tokens - system),
        history=ceiling.tokens,
        context=context,
        tool_results=None,
    )


CURRENT_ROUND_NOTE = (
    "tool_results: these are the current round's results, which a bound never drops (the "
    "model would answer without the data it asked for); raise InputCeiling.tokens or have "
    "the tool return less"
)


@dataclass(frozen=True, slots=True)
class Layout:
    """What a layout adds to a ceiling's measure: ``extra`` tokens sent outside the messages
    (the prompt-cache profile's tool section) and ``sent``, a historical instruction's size as
    that layout sends it (None: as Amendment 1 renders it); ``shown``: the response sections
    the current instruction renders instead of the request's call options (a rebuilt call)."""

    extra: int = 0
    sent: Callable[[InstructionTurn], int | None] | None = None
    shown: ShownSections | None = None
    key: object = None  # what ``sent`` is a function of (the layout's sent-text function)


def plan_ceiling(
    branch: Branch,
    request: SeedRequest,
    budgets: SectionBudgets,
    meter: Meter,
    ceiling: InputCeiling,
    layout: Layout,
    ids: Sequence[UUID],
    memo: Memo | None = None,
) -> tuple[SectionBudgets, Stepper]:
    """The section budgets ``ceiling`` maps to for ``request`` (whose view is ``ids``) and the
    history rule (module contract); measures the system and the instruction (rendered through
    the compile's ``memo`` where it renders the same)."""
    from lionagi_turns.core.render import CallOptions

    system = branch_system(branch)
    system_size = meter.text(system.rendered) if system is not None else 0
    options = layout.shown or CallOptions(
        request.tool_schemas, request.response_format, request.structure)
    instruction, durable = meter.current(request.instruction, options, memo)
    pending = trailing_results(branch, ids, meter)
    calibration = _calibration.read_calibration(branch, ids, CEILING_KEY, ceiling.calibration)
    limit = calibration.limit(ceiling.tokens)
    shown = ceiling if limit in (0, ceiling.tokens) else InputCeiling(limit)
    mapped = ceiling_budgets(shown, budgets, system_size, instruction + pending + layout.extra)
    record, ignored = read_record(branch, ids, ceiling)
    previous = None if record is None else record.get("first")
    cleared = () if record is None else record.get("cleared")
    stepper = Stepper(
        ceiling=ceiling,
        meter=meter,
        fixed=system_size + instruction + layout.extra,
        previous=previous if isinstance(previous, str) else None,
        previous_cleared=frozenset(k for k in cleared if isinstance(k, str))
        if isinstance(cleared, list) else frozenset(),
        ignored=ignored,
        instruction=request.instruction,
        sent=layout.sent,
        key=layout.key,
        own=instruction if layout.shown is None else None,
        constants=(*((system.rendered,) if system is not None else ()), *durable),
        parts={"system": system_size, "instruction": instruction + layout.extra},
        calibration=calibration, summaries=summary_sizes(branch, meter),
    )
    return mapped, stepper


def _least(budget: int | None, share: int) -> int:
    return share if budget is None else min(budget, share)
