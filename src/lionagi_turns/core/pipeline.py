"""ADR-0007 D2/D3: ``compile_chat_request`` — the one place history becomes a request.

Rules (input -> output):

- ``request.progression`` None -> ``branch.progression`` (a ``current_progression`` view wins);
  ``()`` -> no history; a tuple -> exactly those ids, in that order.
- Missing ids -> one ValueError (also lionagi's NotFoundError) naming all; repeated ids ->
  ValueError naming each.
- What each record kind becomes is ``core.kinds.KIND_RULES``; a kind with no rule -> TypeError.
- Instruction right after instruction -> ``ValueError(CONSECUTIVE_INSTRUCTIONS)``; a branch with
  a system whose first retained record is an assistant -> ``ValueError(FIRST_MESSAGE_RULE)``
  (exact ADR texts; positions and ids in ``exc.defects`` and the exception notes).
- Within one of ReAct's later calls (``react_context``), the caller's context items render once
  (``core.react``).
- Historical ``Instruction`` -> one ``user`` message, durable sections only; the current
  instruction -> the last ``user`` message, durable sections plus the request's Tools,
  ResponseSchema and ResponseFormat. The supplied instruction's own call options are ignored:
  neither rendered nor recorded (ADR D1; docs/architecture.md decision 3).
- System text, the D3 context section and the target's guidance -> joined by ``"\\n\\n"`` as the
  guidance of the first retained instruction (the current one when there is no history).
- A falsy rendering -> omitted, except that a current instruction with real text that renders
  empty raises lionagi's ``EmptyOutgoingContentError``.

Passes, in order (``PASSES``); each takes the ``core.plan.Plan`` the one before returned and
returns a new plan, reading only fields set before it:

1. check (``_check``) — the request's instruction is an instruction and the ReAct items are
   a sequence, before history is read.
2. select (``select_ids``) — the view's ids, read once for the whole compile.
3. prepare (``Stage.prepare`` of each stage, in order; ``core.stage``) — the pass options, the
   request's context blocks and each stage's slot; then whether this compile may resume and
   keep a walk (the options' reuse key, no ReAct items, a memo that keeps). It must precede
   the walk, which the reuse key and the bound decide.
4. project (``project_history``, or ``Memo.resume`` continuing the previous walk) — turns,
   pending results and every defect, one walk.
5. validate (``Projection.raise_first`` on the full walk) — the first defect kind in ADR order
   is raised here, so no output (and no bound or rendering work) exists for a bad history.
6. bound (the options' ``bound``) — may drop whole turns; it runs only on a valid view, so
   it cannot hide a defect. Its decision travels on the plan to the trace.
7. ReAct step (``react_step``) — replaces kept instructions by copies for this request; it
   must run before the fold plan, whose target may be one of them.
8. plan the fold (``_plan_fold``) — target, parts, encoding and the target's rendering,
   computed once; it must precede rendering because which instruction carries the fold
   decides how the first one renders, and the render pass takes the target's part from it.
9. render (``rendering.render_turns``) — one part per turn and the current instruction.
10. guard (``_guard``) — a current turn whose real text rendered empty is refused; it needs
    the current rendering.
11. finish (``_finish``) — the durable copy (``durable_instruction``) and the compiled
    request, built last so a failed compile allocates nothing the caller could record; then
    the memo keeps the walk.
12. finish stages (``Stage.finish`` of each stage, in order) — the messages sent, records on
    the compiled instruction, each stage's output in its slot; after the compiled request,
    because a stage finishes what the passes built. The trace is the finished plan's fields.

Purity: no stored message, content, progression or branch metadata is written, and no private
lionagi state (render caches included) is touched. No I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, cast

from lionagi._errors import EmptyOutgoingContentError
from lionagi.protocols.messages.instruction import InstructionContent

from lionagi_turns.core.contracts import CompiledChatRequest, TurnRequest
from lionagi_turns.core.durable import durable_instruction
from lionagi_turns.core.fold import FoldParts, FoldPlan, guidance_text
from lionagi_turns.core.history import (
    InstructionTurn,
    Projection,
    branch_system,
    project_history,
    select_ids,
)
from lionagi_turns.core.memo import using
from lionagi_turns.core.plan import EARLY as _EARLY
from lionagi_turns.core.plan import Plan
from lionagi_turns.core.profile import (
    SEED_PROFILE,
    CompileProfile,
    Kept,
    Memo,
    chosen_memo,
)
from lionagi_turns.core.react import react_step
from lionagi_turns.core.render import own_copy
from lionagi_turns.core.rendered import RenderedPart
from lionagi_turns.core.rendering import (
    current_record,
    history_record,
    render_current,
    render_history,
    render_turns,
)
from lionagi_turns.core.stage import Stage, check_stages
from lionagi_turns.core.trace import Trace
from lionagi_turns.core.values import check_text, naming_record

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("PASSES", "Plan", "RenderedPart", "Trace", "compile_chat_request", "compile_traced")


def compile_chat_request(
    branch: Branch, request: TurnRequest, *, react_context: Sequence[object] | None = None
) -> CompiledChatRequest:
    """Compile ``request`` against ``branch``'s stored history (see the module rules).

    ``react_context``: the caller's context items while one of ReAct's later calls runs (the
    integration reads lionagi's ``_react_context`` and passes it); without it this is the
    ADR's signature and behaviour. Deterministic for a given branch snapshot and arguments;
    raises ValueError/TypeError naming the ids, positions or keys at fault, before producing
    any output.
    """
    return compile_traced(branch, request, react_context=react_context).compiled


def compile_traced(
    branch: Branch,
    request: TurnRequest,
    *,
    stages: Sequence[Stage] = (),
    profile: CompileProfile = SEED_PROFILE,
    react_context: Sequence[object] | None = None,
    memo: Memo | None = None,
) -> Trace:
    """The pipeline of the module docstring, with what each pass decided: the only compile.

    ``stages``: the profile, as an ordered tuple of ``core.stage.Stage`` values (empty: the
    seed ADR); ``profile``: the pass options the first stage starts from. ``memo``: what the
    compile may reuse (``core.profile.Memo``); None takes the installed chooser's pick (the
    fast path's switch, read once per compile), ``NO_MEMO`` without one. The output is the
    same under every memo."""
    memo = chosen_memo() if memo is None else memo
    plan = Plan(branch, request, profile, memo, react_context, stages=check_stages(stages))
    with memo.compiling(), using(memo):
        for step in PASSES:
            plan = step(plan)
        projected, projection, parts = plan.projected, plan.projection, plan.parts
        compiled = plan.compiled
        assert projected is not None and projection is not None, _EARLY
        assert parts is not None and compiled is not None, _EARLY
        return Trace(
            profile=plan.profile,
            view=plan.view,
            projected=projected,
            projection=projection,
            parts=parts,
            fold=plan.fold,
            rendered=plan.rendered,
            stable_blocks=plan.profile.stable_blocks(branch, plan.request),
            compiled=compiled,
            reused=plan.reused,
            current_context=plan.current_context,
            bounded=plan.bounded,
            stages=_stages(plan),
            slots=dict(plan.slots),
        )


# --------------------------------------------------------------------------- pass 1


def _check(plan: Plan) -> Plan:
    """The supplied instruction's content must be an ``InstructionContent``. Its own transient
    fields (``tool_schemas``, ``response_format``, ``structure``) are ignored, neither rendered
    nor recorded (ADR D1: the compiler replaces the copy's content with the durable fields and
    takes the call options from the request only)."""
    content = plan.request.instruction.content
    if not isinstance(content, InstructionContent):
        raise TypeError(
            f"TurnRequest.instruction.content is {type(content).__name__}, not "
            "InstructionContent; build the instruction with "
            "branch.msgs.create_instruction(instruction=...)"
        )
    items = _react_items(plan.react_context)
    return plan if items is None else plan._replace(items=items)


def _react_items(items: Sequence[object] | None) -> tuple[object, ...] | None:
    if items is None:
        return None
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Sequence):
        raise TypeError(
            "react_context must be a sequence of context items (lionagi's _react_context "
            f"list), got {type(items).__name__}"
        )
    return tuple(items)


# --------------------------------------------------------------------------- passes 2-6


def _select(plan: Plan) -> Plan:
    return plan._replace(view=select_ids(plan.branch, plan.request.progression))


def _prepare(plan: Plan) -> Plan:
    for stage in _stages(plan):
        plan = stage.prepare(plan)
    resumable = plan.profile.reuse is not None and not plan.items and plan.memo.keeps
    return plan._replace(resumable=resumable)


def _project(plan: Plan) -> Plan:
    """The previous walk continued when the memo has one for this view, else a full walk
    (``project_history`` read from this module's globals at call time)."""
    branch, view, memo = plan.branch, plan.view, plan.memo
    if plan.resumable:
        resumed = memo.resume(branch, plan.profile.reuse, view)
        if resumed is not None:
            walk, projected, snap = resumed
            return plan._replace(walk=walk, snap=snap, projected=projected)
        snap = memo.snapshot(branch, view)
        return plan._replace(snap=snap, projected=project_history(branch, view))
    return plan._replace(projected=project_history(branch, view))


def _validate(plan: Plan) -> Plan:
    projected = plan.projected
    assert projected is not None, _EARLY
    if projected.defects:  # from the full walk, before any bound
        projected.raise_first()
    return plan


def _bound(plan: Plan) -> Plan:
    projected = plan.projected
    assert projected is not None, _EARLY
    bound = plan.profile.bound
    if bound is None:
        return plan._replace(projection=projected)
    bounded = bound(projected, plan.request)
    return plan._replace(bounded=bounded, projection=bounded.projection)


def _react(plan: Plan) -> Plan:
    if not plan.items:
        return plan
    projection = plan.projection
    assert projection is not None, _EARLY
    stepped, context = react_step(projection, plan.request.instruction.content, plan.items)
    return plan._replace(projection=stepped, current_context=context)


# --------------------------------------------------------------------------- pass 7


def _plan_fold(plan: Plan) -> Plan:
    """The fold's parts (all of them, folded or not) and, when a system or context part is
    folded, the fold plan: the first retained instruction (else the current one) rendered
    with it. A resumed compile takes the walk's plan when its target is the same turn object
    and the folded parts are equal (the rendering reads nothing else)."""
    branch, request, profile = plan.branch, plan.request, plan.profile
    projection = plan.projection
    assert projection is not None, _EARLY
    system = branch_system(branch)
    system_text = system.rendered if system is not None else ""
    if system is not None and not system_text.isascii():
        with naming_record(f"system message, id {system.id}"):
            check_text(system_text, "system")
    section = profile.envelope(request.context_blocks)
    target, turn = _fold_target(projection, profile)
    if turn is not None:
        guidance = turn.message.content.guidance
        record = functools.partial(history_record, turn)
    else:
        guidance = request.instruction.content.guidance
        record = functools.partial(current_record, request)
    with naming_record(record):
        parts = FoldParts(system_text, section, guidance_text(guidance))
    folded = FoldParts(
        system_text if profile.fold_system else "",
        section if profile.fold_context else "",
        parts.guidance,
    )
    if not (folded.system or folded.context):
        return plan._replace(parts=parts)
    return plan._replace(parts=parts, fold=_kept_fold(plan, target, turn, folded))


def _kept_fold(
    plan: Plan, target: int | None, turn: InstructionTurn | None, folded: FoldParts
) -> FoldPlan:
    """The fold plan for ``folded`` into ``turn`` (None: the current instruction)."""
    walk = plan.walk
    if walk is not None and turn is not None and target is not None and (old := walk.plan):
        turns = walk.projection.turns
        same = old.target == target and target < len(turns) and turns[target] is turn
        if same and old.parts == folded:
            return FoldPlan(target, folded, old.encoding, own_copy(old.rendered))
    if turn is not None:
        rendered, encoding = render_history(plan.branch, turn, plan.profile, folded, plan.memo)
    else:
        rendered, encoding = render_current(plan, folded)
    if encoding is None:  # pragma: no cover - render_view returns an encoding with a fold
        raise AssertionError("a rendering that carries the fold must report its encoding")
    return FoldPlan(target, folded, encoding, rendered)


def _fold_target(
    projection: Projection, profile: CompileProfile
) -> tuple[int | None, InstructionTurn | None]:
    """The index in ``projection.turns`` and the turn of the fold's target: the first retained
    instruction, or ``(None, None)`` for the current one (no retained instruction, or the
    profile folds into the current turn)."""
    if profile.fold_target == "current":
        return None, None
    for index, turn in enumerate(projection.turns):
        if isinstance(turn, InstructionTurn):
            return index, turn
    return None, None


# --------------------------------------------------------------------------- passes 8-10


def _render(plan: Plan) -> Plan:
    rendered, messages, reused = render_turns(plan)
    return plan._replace(rendered=rendered, messages=messages, reused=reused)


def _guard(plan: Plan) -> Plan:
    _guard_current_turn(plan.request.instruction.content, plan.rendered[-1].content)
    return plan


def _guard_current_turn(content: InstructionContent, current: object) -> None:
    has_text = bool(content.instruction or content.plain_content or content.images)
    if has_text and not current:
        raise EmptyOutgoingContentError(
            "Refusing to compile: the current instruction has text "
            f"(instruction_len={len(content.instruction or '')}, "
            f"plain_content_len={len(content.plain_content or '')}, "
            f"images={len(content.images)}) but renders empty, so the model would receive "
            "no turn. Give it visible text (whitespace-only text renders empty)."
        )


def _finish(plan: Plan) -> Plan:
    request = plan.request
    with naming_record(functools.partial(current_record, request)):
        instruction = durable_instruction(request.instruction)
    messages = plan.messages
    compiled = CompiledChatRequest(
        instruction=instruction, messages=messages, provider_kwargs=request.provider_kwargs
    )
    if plan.snap is not None:
        current = plan.rendered[-1]
        sent = messages[:-1] if current.message_index is not None else messages
        projected, projection = plan.projected, plan.projection
        assert projected is not None and projection is not None, _EARLY
        plan.memo.keep(
            Kept(
                plan.branch, plan.profile.reuse, plan.snap, plan.walk, projected, projection,
                plan.rendered[:-1], sent, plan.reused, plan.fold,
            )
        )
    return plan._replace(compiled=compiled)


def _finish_stages(plan: Plan) -> Plan:
    for stage in _stages(plan):
        plan = stage.finish(plan)
    return plan


def _stages(plan: Plan) -> tuple[Stage, ...]:
    return cast("tuple[Stage, ...]", plan.stages)  # checked by compile_traced


PASSES: tuple[Callable[[Plan], Plan], ...] = (
    _check,
    _select,
    _prepare,
    _project,
    _validate,
    _bound,
    _react,
    _plan_fold,
    _render,
    _guard,
    _finish,
    _finish_stages,
)
