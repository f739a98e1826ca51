"""Amendment 1's ``compile_chat_request``: the one pipeline (``core.pipeline.compile_traced``)
with the ``Amendment1`` stage (``_stage``), plus D7's records.

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

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from lionagi_turns.core.contracts import TurnRequest as SeedRequest
from lionagi_turns.core.pipeline import Trace, compile_traced
from lionagi_turns.core.render import ShownSections
from lionagi_turns.profiles.amendment1._ceiling import InputCeiling
from lionagi_turns.profiles.amendment1._contracts import (
    CompiledChatRequest,
    SectionBudgets,
    TurnRequest,
    check_material,
)
from lionagi_turns.profiles.amendment1._meter import Measure
from lionagi_turns.profiles.amendment1._stage import NAME, REUSE, Amendment1

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("REUSE", "amended_result", "amendment1_stage", "compile_amended_traced",
           "compile_chat_request", "seed_request")


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
) -> tuple[CompiledChatRequest, Trace]:
    """``compile_chat_request`` and the pipeline's trace (the messages in
    ``trace.compiled`` carry the history marker); same arguments and errors."""
    stage = amendment1_stage(request, budgets, measure, ceiling)
    trace = compile_traced(
        branch, seed_request(request), stages=(stage,), react_context=react_context
    )
    return amended_result(trace), trace


def amendment1_stage(
    request: TurnRequest,
    budgets: SectionBudgets | None = None,
    measure: Measure | None = None,
    ceiling: InputCeiling | None = None,
    shown: ShownSections | None = None,
) -> Amendment1:
    """The stage for ``request`` (its ``skipped`` entries), after the argument checks
    (``TypeError``/``ValueError`` naming what is wrong)."""
    checked = _checked_arguments(request, budgets, ceiling)
    return Amendment1(budgets=checked, measure=measure, ceiling=ceiling,
                      skipped=tuple(request.skipped), shown=shown)


def amended_result(trace: Trace) -> CompiledChatRequest:
    """The amended compiled request of a compile with the ``Amendment1`` stage: its records
    from the stage's slot, the messages as the last stage finished them."""
    compiled = trace.slot(NAME)
    if not isinstance(compiled, CompiledChatRequest):
        raise TypeError("the compile ran no Amendment 1 stage")
    messages = trace.compiled.messages  # as the last stage finished them
    return compiled if compiled.messages is messages else replace(compiled, messages=messages)


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


def seed_request(request: TurnRequest) -> SeedRequest:
    """The pipeline's request: ``request`` without its own ``skipped`` entries (the stage
    carries them) and all its context blocks (the stage admits them)."""
    return SeedRequest(
        instruction=request.instruction,
        progression=request.progression,
        tool_schemas=request.tool_schemas,
        response_format=request.response_format,
        structure=request.structure,
        context_blocks=tuple(request.context_blocks),
        provider_kwargs=request.provider_kwargs,
    )
