"""Amendment 1's ``compile_chat_request``: the default pipeline (``core.pipeline.compile_traced``)
under an Amendment 1 ``CompileProfile`` (``core.profile``), plus D7's records.

Passes (ADR-0007 D2 §6 steps 1-4; the pipeline's own passes are not copied):

1. ``check`` - the request is this profile's, its blocks material (``ValueError``).
2. ``context admission`` - blocks admitted whole, in order, while their canonical entries fit
   the context budget, else skipped whole (``section_budget``); the request's ``skipped``
   entries first. The profile's ``envelope`` renders the skip markers, one line each, directly
   above D3's envelope (with D8's ``authority`` key).
3. the pipeline's select and project; then the profile's ``bound`` (step 1): the whole view is
   validated first (its first defect is raised); view exclusions become ``evicted`` /
   ``compacted`` entries; whole turns are measured (the instruction rendered durably with its
   own prompt context, the caller's ReAct items in; its assistant run as it renders) and the
   newest that fit are kept; every record of a dropped turn is a ``truncated`` entry. The same
   bound builds each kept instruction's ``tool_results`` entry (skipping a result equal to one
   already in it or in the instruction's durable prompt context) and applies the tool_results
   budget to the entries' results, newest kept (the section is independent of the
   instructions, so deciding it here changes nothing the later passes read). The bound is
   ``_bound.Bound``; it returns its records as a ``BoundDecision`` (``Trace.bounded``), and
   what it made of each unchanged turn is remembered per branch once the pipeline succeeded
   (``remember_decision``), so a next turn derives only the new turns and hands back the same
   output turn objects (see there).
4. the pipeline's ReAct step (step 2), fold plan and render (step 3), with the profile's
   ``results_section``: each entry renders after its instruction's content, the tool_results
   marker one line above the block of the entry that lost the oldest results.
5. ``section bounds`` (step 4): history markers lead the first compiled message; the system and
   the instruction (rendered without the fold and its tool_results block, after the ReAct step)
   are measured, and refuse with ``SectionBudgetRefused`` carrying all five records.

No I/O, no provider call, no write to the branch. ``measure`` counts tokens of a text (default
o200k, ``lionagi_turns.core.measure.count_tokens``); only a section with a budget is measured. It
must be a function of its text: the sizes of unchanged turns are remembered between compiles of
one branch made with the same ``measure`` object (``_bound``), so a next turn measures only the
new texts.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from lionagi.ln import json_dumps

from lionagi_turns.core.contracts import TurnRequest as SeedRequest
from lionagi_turns.core.fold import guidance_part
from lionagi_turns.core.history import branch_system
from lionagi_turns.core.pipeline import Trace, compile_traced
from lionagi_turns.core.profile import CompileProfile, Memo, chosen_memo
from lionagi_turns.core.render import CallOptions, Content, render_view
from lionagi_turns.profiles.amendment1._bound import (
    Bound,
    BoundDecision,
    bound_decision,
    remember_decision,
    results_section,
)
from lionagi_turns.profiles.amendment1._ceiling import (
    CEILING_KEY,
    CURRENT_ROUND_NOTE,
    InputCeiling,
    Layout,
    Stepper,
    plan_ceiling,
)
from lionagi_turns.profiles.amendment1._contracts import (
    SECTION_AUTHORITY,
    SECTION_POSTURE,
    SECTIONS,
    CompiledChatRequest,
    CompiledMessage,
    ContextBlock,
    LeftOut,
    SectionBound,
    SectionBudgetRefused,
    SectionBudgets,
    TurnRequest,
    check_material,
)
from lionagi_turns.profiles.amendment1._meter import Measure, Meter
from lionagi_turns.profiles.amendment1._sections import (
    block_entry,
    context_section,
    marker_lines,
    prepend_part,
)

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("REUSE", "Runner", "compile_amended_traced", "compile_chat_request")

# A pipeline run: (request, profile, marker, context left out) -> (trace, marked messages);
# ``_cached`` runs the prompt-cache layout's compile under this profile.
Runner = Callable[
    [
        SeedRequest,
        CompileProfile,
        Callable[[Trace], tuple[CompiledMessage, ...]],
        tuple[LeftOut, ...],
        Memo,
    ],
    tuple[Trace, tuple[CompiledMessage, ...]],
]

# The profile's resume key (``CompileProfile.reuse``): under it a turn object renders the same
# in every compile — the default history options and text, and ``_bound.results_section``, a
# pure function of the entry the output turn carries.
REUSE = "adr-0007-amendment-1"

def compile_chat_request(
    branch: Branch,
    request: TurnRequest,
    *,
    budgets: SectionBudgets | None = None,
    measure: Measure | None = None,
    react_context: Sequence[object] | None = None,
    ceiling: InputCeiling | None = None,
) -> CompiledChatRequest:
    """Compile ``request`` against ``branch`` under Amendment 1 (see the module passes).

    ``budgets``: per-section token budgets (None: all unbounded). ``measure``: tokens of a text
    (None: o200k), a function of the text (its counts for unchanged turns are reused by the
    branch's next compiles with the same object). ``react_context``: the caller's context
    items of the running ReAct turn (None or empty: no ReAct step). Raises the default
    profile's errors, ``ValueError`` for a non-material block and ``SectionBudgetRefused`` for
    a system or instruction section over its budget, before producing any output.
    ``ceiling``: an ``InputCeiling`` for the whole request (``_ceiling``: the history is cut in
    steps down to its low-water mark, the current round's results are never dropped; the
    compiled instruction records the first kept turn); None: the ADR's bounds as they are.
    """
    return compile_amended_traced(
        branch, request, budgets=budgets, measure=measure, react_context=react_context,
        ceiling=ceiling,
    )[0]


def compile_amended_traced(
    branch: Branch,
    request: TurnRequest,
    *,
    budgets: SectionBudgets | None = None,
    measure: Measure | None = None,
    react_context: Sequence[object] | None = None,
    ceiling: InputCeiling | None = None,
    runner: Runner | None = None,
    layout: Layout | None = None,
) -> tuple[CompiledChatRequest, Trace]:
    """``compile_chat_request`` and the pipeline's trace under it (its fold plan; the history
    marker pass 5 puts at the head of the history, after the fold, is not in the trace); same
    arguments and errors. ``runner`` (None: the default pipeline) runs the pipeline under the
    profile and returns its trace and the messages with the history marker (``_cached``);
    ``layout`` is what that runner's layout adds to a ceiling's measure."""
    budgets = _checked_arguments(request, budgets, ceiling)
    meter = Meter(measure)
    stepper = None
    if ceiling is not None:
        budgets, stepper = plan_ceiling(branch, request, budgets, meter, ceiling, layout)

    blocks, context_left = _admit_blocks(request, budgets.context, meter)
    if stepper is not None:
        _charge_context(stepper, blocks, meter)
    memo = chosen_memo()  # the compile's memo: its ``keeps`` decides what the bound remembers
    bound = Bound(
        branch, budgets, meter, react=bool(react_context), measure=measure, rule=stepper,
        keep=memo.keeps,
    )
    profile = _amended_profile(bound, context_left)

    def mark(trace: Trace) -> tuple[CompiledMessage, ...]:
        return _marked(trace, marker_lines("history", bound_decision(trace).history_left))

    seed = _seed_request(request, blocks)
    if runner is None:
        trace = compile_traced(
            branch, seed, profile=profile, react_context=react_context, memo=memo
        )
        messages = mark(trace)
    else:
        trace, messages = runner(seed, profile, mark, context_left, memo)
    decision = bound_decision(trace)
    remember_decision(branch, decision)  # succeeded: the next compile starts from this walk
    bounds = _section_bounds(branch, request, budgets, stepper, decision, blocks, context_left)
    refusals = _section_refusals(branch, request, budgets, meter, ceiling, stepper, trace)
    if refusals:
        raise _refused(refusals, bounds)

    compiled = CompiledChatRequest(
        instruction=trace.compiled.instruction,
        messages=tuple(messages),
        provider_kwargs=trace.compiled.provider_kwargs,
        bounds=bounds,
    )
    if stepper is not None:
        compiled.instruction.metadata[CEILING_KEY] = stepper.record()
    return compiled, trace


def _checked_arguments(
    request: TurnRequest, budgets: SectionBudgets | None, ceiling: InputCeiling | None
) -> SectionBudgets:
    """The budgets to compile with (None: all unbounded); ``TypeError`` for a request, budgets
    or ceiling of the wrong type, ``ValueError`` for a non-material context block."""
    if not isinstance(request, TurnRequest):
        raise TypeError(
            f"amendment1.compile_chat_request takes an amendment1.TurnRequest, got "
            f"{type(request).__module__}.{type(request).__name__}; build it with "
            "lionagi_turns.amendment1.TurnRequest(...)"
        )
    if budgets is None:
        budgets = SectionBudgets()
    elif not isinstance(budgets, SectionBudgets):
        raise TypeError(f"budgets must be a SectionBudgets, got {type(budgets).__name__}")
    if ceiling is not None and not isinstance(ceiling, InputCeiling):
        raise TypeError(f"ceiling must be an InputCeiling, got {type(ceiling).__name__}")
    check_material(request.context_blocks)
    return budgets


def _charge_context(stepper: Stepper, blocks: Sequence[ContextBlock], meter: Meter) -> None:
    """Adds the admitted context blocks' canonical entries to the ceiling's fixed part."""
    context = sum(meter.text(json_dumps(block_entry(b), sort_keys=True)) for b in blocks)
    stepper.fixed += context
    stepper.parts["context"] = context


def _seed_request(request: TurnRequest, blocks: Sequence[ContextBlock]) -> SeedRequest:
    """The default pipeline's request: ``request`` with only the admitted context blocks."""
    return SeedRequest(
        instruction=request.instruction,
        progression=request.progression,
        tool_schemas=request.tool_schemas,
        response_format=request.response_format,
        structure=request.structure,
        context_blocks=tuple(blocks),
        provider_kwargs=request.provider_kwargs,
    )


def _amended_profile(bound: Bound, context_left: tuple[LeftOut, ...]) -> CompileProfile:
    """Amendment 1's profile: ``bound`` bounds the view, the envelope carries the context skip
    markers, each instruction's tool_results entry renders after it."""
    return CompileProfile(
        name="adr-0007-amendment-1",
        bound=bound,
        envelope=lambda kept: context_section(kept, context_left),  # type: ignore[arg-type]
        results_section=results_section,
        reuse=REUSE,
    )


def _section_bounds(
    branch: Branch,
    request: TurnRequest,
    budgets: SectionBudgets,
    stepper: Stepper | None,
    decision: BoundDecision,
    blocks: Sequence[ContextBlock],
    context_left: tuple[LeftOut, ...],
) -> tuple[SectionBound, ...]:
    """D7's five records, in ``SECTIONS`` order: what each section kept and left out."""
    system = branch_system(branch)
    records = {
        "system": ((str(system.id),) if system is not None else (), ()),
        "instruction": ((str(request.instruction.id),), ()),
        "history": (decision.history_kept, decision.history_left),
        "context": (tuple(b.provider_name for b in blocks), context_left),
        "tool_results": (decision.results_kept, decision.results_left),
    }
    return tuple(
        SectionBound(
            section=name,  # type: ignore[arg-type]
            authority=SECTION_AUTHORITY[name],
            posture=SECTION_POSTURE[name],  # type: ignore[arg-type]
            budget=stepper.room if stepper is not None and name == "history"
            else getattr(budgets, name),
            kept=records[name][0],
            left_out=records[name][1],
        )
        for name in SECTIONS
    )


def _section_refusals(
    branch: Branch,
    request: TurnRequest,
    budgets: SectionBudgets,
    meter: Meter,
    ceiling: InputCeiling | None,
    stepper: Stepper | None,
    trace: Trace,
) -> list[tuple[str, int, int, str]]:
    """(section, used, budget, note) for the system and instruction sections over their
    budgets, else for a current round over the ceiling; empty when the request fits."""
    refusals = []
    system = branch_system(branch)
    if budgets.system is not None and system is not None:
        used = meter.text(system.rendered)
        if used > budgets.system:
            refusals.append(("system", used, budgets.system,
                             _note("system", "shorten the system message", ceiling)))
    if budgets.instruction is not None:
        own, _ = render_view(
            request.instruction.content,
            context=trace.current_context,
            options=CallOptions(request.tool_schemas, request.response_format, request.structure),
        )
        used = meter.content(own)
        if used > budgets.instruction:
            refusals.append(("instruction", used, budgets.instruction, _note(
                "instruction", "shorten the instruction, its guidance or its call options",
                ceiling)))
    if not refusals and stepper is not None and stepper.used > stepper.limit:
        refusals.append(("tool_results", stepper.pending,
                         max(0, stepper.limit - stepper.fixed), CURRENT_ROUND_NOTE))
    return refusals


def _marked(trace: Trace, history_marker: str) -> tuple[CompiledMessage, ...]:
    """The trace's messages with the history marker at the head of the history section: after
    the fold's leading ``Guidance`` section when the first message carries the fold (so the
    folded system text stays the request's first bytes across drop steps), else leading the
    first message."""
    messages = list(trace.compiled.messages)
    if history_marker:
        if messages:
            messages[0] = CompiledMessage(
                messages[0].role,
                _after_fold(messages[0].content, history_marker)
                if trace.fold_message_index == 0
                else prepend_part(messages[0].content, history_marker),
            )
        else:
            messages.append(CompiledMessage(trace.rendered[-1].role, history_marker))
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


def _note(name: str, hint: str, ceiling: InputCeiling | None) -> str:
    if ceiling is None:
        return f"{name}: {hint}, or raise SectionBudgets.{name}"
    return f"{name}: {hint}, or raise InputCeiling.tokens (now {ceiling.tokens})"


def _admit_blocks(
    request: TurnRequest, budget: int | None, meter: Meter
) -> tuple[list[ContextBlock], tuple[LeftOut, ...]]:
    left: list[LeftOut] = list(request.skipped)
    if budget is None:
        return list(request.context_blocks), tuple(left)
    kept = []
    total = 0
    for block in request.context_blocks:
        size = meter.text(json_dumps(block_entry(block), sort_keys=True))
        if total + size <= budget:
            total += size
            kept.append(block)
        else:
            left.append(LeftOut(block.provider_name, "section_budget", size))
    return kept, tuple(left)


def _refused(
    refusals: list[tuple[str, int, int, str]], bounds: tuple[SectionBound, ...]
) -> SectionBudgetRefused:
    parts = [
        f"the {name} section measures {used} tokens, over its budget of {budget}"
        for name, used, budget, _ in refusals
    ]
    exc = SectionBudgetRefused("section budget refused: " + "; ".join(parts), bounds)
    for _, _, _, note in refusals:
        exc.add_note(note)
    return exc
