"""``Amendment1``: ADR-0007 Amendment 1 as a stage of the one pipeline (``core.stage``).

``prepare`` (after the view is selected): under a ceiling, maps it to section budgets and the
stepped history rule (``_ceiling.plan_ceiling`` on ``Plan.view``, counting what a later layout
stage sends beyond the messages: ``core.stage.sent_layout``); admits the context blocks whole,
in order, under the context budget (the rest are ``section_budget`` entries, after the
request's ``skipped``); narrows the request to the admitted blocks; and sets the pass options:
the history and tool_results bound (``_bound.Bound``), the envelope with the skip markers over
the blocks the fold is given, the tool_results section after each instruction's content, the
resume key.

``finish`` (after the compiled request): puts the history marker at the head of the history
(after the folded system text), remembers the bound's walk for the next compile, builds the
five ``SectionBound`` records, refuses a system, instruction or current round over its budget
(``SectionBudgetRefused`` carrying all five), and under a ceiling writes its record on the
compiled instruction. Its slot holds the amended ``CompiledChatRequest``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, cast

from lionagi.ln import json_dumps

from lionagi_turns.core.contracts import TurnRequest as SeedRequest
from lionagi_turns.core.fold import guidance_part
from lionagi_turns.core.render import Content, ShownSections
from lionagi_turns.core.stage import Stage, sent_layout
from lionagi_turns.profiles.amendment1 import _memory as _memory
from lionagi_turns.profiles.amendment1._bound import (
    Bound,
    BoundDecision,
    remember_decision,
    results_section,
)
from lionagi_turns.profiles.amendment1._ceiling import (
    CEILING_KEY,
    InputCeiling,
    Layout,
    Stepper,
    plan_ceiling,
)
from lionagi_turns.profiles.amendment1._contracts import (
    CompiledChatRequest,
    CompiledMessage,
    ContextBlock,
    LeftOut,
    SectionBudgets,
)
from lionagi_turns.profiles.amendment1._meter import Measure, Meter
from lionagi_turns.profiles.amendment1._refusals import refused, section_bounds, section_refusals
from lionagi_turns.profiles.amendment1._sections import (
    block_entry,
    context_section,
    marker_lines,
    prepend_part,
)
from lionagi_turns.profiles.amendment1._summary import Summary, summary_block, summary_for

if TYPE_CHECKING:
    from lionagi_turns.core.history import InstructionTurn
    from lionagi_turns.core.plan import Plan

__all__ = ("NAME", "REUSE", "Amendment1")

NAME = "amendment1"
OPTIONS_NAME = "adr-0007-amendment-1"
# The resume key: under it a turn object renders the same in every compile — the default
# history options and text, and ``_bound.results_section``, a pure function of the entry the
# output turn carries.
REUSE = "adr-0007-amendment-1"


@dataclass(frozen=True, slots=True)
class _Prepared:
    budgets: SectionBudgets
    meter: Meter
    stepper: Stepper | None
    blocks: tuple[ContextBlock, ...]
    context_left: tuple[LeftOut, ...]


@dataclass(frozen=True, slots=True)
class Amendment1(Stage):
    """The Amendment 1 stage (module contract). ``budgets``: per-section token budgets;
    ``measure``: tokens of a text (None: o200k), a function of the text; ``ceiling``: an
    ``InputCeiling`` for the whole request; ``skipped``: the request's own skip entries;
    ``shown``: the response sections a rebuilt call's instruction is measured with."""

    budgets: SectionBudgets = field(default_factory=SectionBudgets)
    measure: Measure | None = None
    ceiling: InputCeiling | None = None
    skipped: tuple[LeftOut, ...] = ()
    shown: ShownSections | None = None
    name: str = NAME

    def prepare(self, plan: Plan) -> Plan:
        branch, request = plan.branch, plan.request
        meter = Meter(self.measure, _kept_counts(plan, self.measure))
        budgets, stepper = self.budgets, None
        if self.ceiling is not None:
            budgets, stepper = plan_ceiling(
                branch, request, budgets, meter, self.ceiling, self._layout(plan, meter),
                ids=plan.view, memo=plan.memo,
            )
        blocks, context_left = _admit_blocks(request, self.skipped, budgets.context, meter)
        if stepper is not None:
            _charge_context(stepper, blocks, meter)
        bound = Bound(
            branch, budgets, meter, plan.memo, react=bool(plan.react_context),
            measure=self.measure, rule=stepper, view=plan.view,
        )
        profile = replace(
            plan.profile,
            name=OPTIONS_NAME,
            bound=bound,
            envelope=lambda kept: context_section(kept, context_left),  # type: ignore[arg-type]
            results_section=results_section,
            reuse=REUSE,
        )
        seed = replace(request, context_blocks=tuple(blocks))
        prepared = _Prepared(budgets, meter, stepper, tuple(blocks), context_left)
        return plan._replace(profile=profile, request=seed).with_slot(self.name, prepared)

    def _layout(self, plan: Plan, meter: Meter) -> Layout:
        """What a later stage's layout adds to the ceiling's measure."""
        laid = sent_layout(plan.stages)
        if laid is None:
            return Layout(shown=self.shown)
        text = laid.sent_text
        extra = sum(meter.text(t) for t in laid.outside)

        def sent(turn: InstructionTurn, text: object = text) -> int | None:
            content = text(turn.message) if callable(text) else None
            return None if content is None else meter.content(content)

        return Layout(extra=extra, sent=sent if text is not None else None, shown=self.shown,
                      key=text)

    def finish(self, plan: Plan) -> Plan:
        prepared = plan.slot(self.name)
        assert isinstance(prepared, _Prepared), "Amendment1.finish runs after its prepare"
        compiled = plan.compiled
        assert compiled is not None, "stages finish after the compiled request"
        decision, summary = _summarized(plan, _decision(plan), prepared.stepper)
        head = marker_lines("history", decision.history_left)
        messages = _marked(plan, f"{head}\n{summary_block(summary)}" if summary else head)
        remember_decision(plan.branch, decision)  # succeeded: the next compile starts here
        budgets, stepper = prepared.budgets, prepared.stepper
        bounds = section_bounds(
            plan.branch, plan.request.instruction, budgets, stepper, decision, prepared.blocks,
            prepared.context_left,
        )
        refusals = section_refusals(
            plan.branch, plan.request, budgets, prepared.meter, self.ceiling, stepper,
            plan.current_context,
        )
        if refusals:
            raise refused(refusals, bounds)
        amended = CompiledChatRequest(
            instruction=compiled.instruction,
            messages=messages,
            provider_kwargs=compiled.provider_kwargs,
            bounds=bounds,
        )
        if stepper is not None:
            compiled.instruction.metadata[CEILING_KEY] = stepper.record()
        marked = replace(compiled, messages=messages)
        return plan._replace(messages=messages, compiled=marked).with_slot(self.name, amended)


def _kept_counts(plan: Plan, measure: Measure | None) -> Mapping[str, int] | None:
    """The fixed texts' counts the branch's last compile under a ceiling made with this very
    ``measure`` (``_weights.Weights.counts``); None when it is not remembered."""
    remember = plan.memo.keeps and not plan.react_context  # as the bound reads the memory
    _, measured = _memory.recall_measured(plan.branch, measure, remember)
    return None if measured is None or measured.weights is None else measured.weights.counts


def _summarized(
    plan: Plan, decision: BoundDecision, stepper: Stepper | None
) -> tuple[BoundDecision, Summary | None]:
    """The decision with the records the sent summary stands for listed as ``summarized``,
    and that summary (None when the request sends none: ``_summary``)."""
    if stepper is None or not stepper.summarized:
        return decision, None
    summary = summary_for(plan.branch, stepper.first)
    if summary is None:  # pragma: no cover - the stepper counted it from the same records
        return decision, None
    covers = frozenset(summary.covers)
    truncated = tuple(
        replace(e, reason="summarized") if e.reason == "truncated" and e.name in covers else e
        for e in decision.truncated
    )
    return replace(decision, truncated=truncated), summary


def _decision(plan: Plan) -> BoundDecision:
    bounded = plan.bounded
    decision = None if bounded is None else bounded.decision
    if not isinstance(decision, BoundDecision):  # pragma: no cover - prepare set the bound
        raise TypeError(f"the options {plan.profile.name!r} carry no Amendment 1 bound")
    return decision


def _charge_context(stepper: Stepper, blocks: Sequence[ContextBlock], meter: Meter) -> None:
    """Adds the admitted context blocks' canonical entries to the ceiling's fixed part."""
    context = sum(meter.text(json_dumps(block_entry(b), sort_keys=True)) for b in blocks)
    stepper.fixed += context
    stepper.parts["context"] = context


def _admit_blocks(
    request: SeedRequest, skipped: Sequence[LeftOut], budget: int | None, meter: Meter
) -> tuple[list[ContextBlock], tuple[LeftOut, ...]]:
    """The blocks admitted whole, in order, while they fit ``budget``; the skipped ones after
    the request's own ``skipped`` entries."""
    left: list[LeftOut] = list(skipped)
    # the entry point's blocks are Amendment 1's (checked material by ``check_material``)
    given = cast("tuple[ContextBlock, ...]", request.context_blocks)
    if budget is None:
        return list(given), tuple(left)
    kept = []
    total = 0
    for block in given:
        size = meter.text(json_dumps(block_entry(block), sort_keys=True))
        if total + size <= budget:
            total += size
            kept.append(block)
        else:
            left.append(LeftOut(block.provider_name, "section_budget", size))
    return kept, tuple(left)


def _marked(plan: Plan, history_marker: str) -> tuple[CompiledMessage, ...]:
    """The messages with the history marker at the head of the history section: after the
    fold's leading ``Guidance`` section when the first message carries the fold (so the folded
    system text stays the request's first bytes across drop steps), else leading the first
    message."""
    messages = list(plan.messages)
    if history_marker:
        fold_index = next((p.message_index for p in plan.rendered if p.folded), None)
        if messages:
            messages[0] = CompiledMessage(
                messages[0].role,
                _after_fold(messages[0].content, history_marker)
                if fold_index == 0
                else prepend_part(messages[0].content, history_marker),
            )
        else:
            messages.append(CompiledMessage(plan.rendered[-1].role, history_marker))
    return tuple(messages)


def _after_fold(content: Content, history_marker: str) -> Content:
    """``content`` (the fold's message) with ``history_marker`` on its own line after its
    leading ``Guidance`` section and before the history that follows it; leading ``content``
    when its text does not open with that section."""
    text = content if isinstance(content, str) else (
        content[0].get("text") if content and isinstance(content[0], dict) else None)
    if not isinstance(text, str) or not text.startswith("Guidance:"):
        return prepend_part(content, history_marker)
    head = guidance_part(text)
    rest = text[len(head):].removeprefix("\n")
    joined = f"{head}\n{history_marker}\n\n{rest}" if rest else f"{head}\n{history_marker}"
    if isinstance(content, str):
        return joined
    return [{**content[0], "text": joined}, *content[1:]]
