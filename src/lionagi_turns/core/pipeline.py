"""ADR-0007 D2/D3: ``compile_chat_request`` — the one place history becomes a request.

Rules (input -> output):

- ``request.progression`` None -> ``branch.progression`` (a ``current_progression`` view wins);
  ``()`` -> no history; a tuple -> exactly those ids, in that order.
- Missing ids -> one ValueError (also lionagi's NotFoundError) naming all; repeated ids ->
  ValueError naming each.
- What each record kind becomes is ``_kinds.KIND_RULES``; a kind with no rule -> TypeError.
- Instruction right after instruction -> ``ValueError(CONSECUTIVE_INSTRUCTIONS)``; a branch with
  a system whose first retained record is an assistant -> ``ValueError(FIRST_MESSAGE_RULE)``
  (exact ADR texts; positions and ids in ``exc.defects`` and the exception notes).
- Within one of ReAct's later calls (``react_context``), the caller's context items render once
  (``_react``).
- Historical ``Instruction`` -> one ``user`` message, durable sections only; the current
  instruction -> the last ``user`` message, durable sections plus the request's Tools,
  ResponseSchema and ResponseFormat. The supplied instruction's own call options are ignored:
  neither rendered nor recorded (ADR D1; docs/architecture.md decision 3).
- System text, the D3 context section and the target's guidance -> joined by ``"\\n\\n"`` as the
  guidance of the first retained instruction (the current one when there is no history).
- A falsy rendering -> omitted, except that a current instruction with real text that renders
  empty raises lionagi's ``EmptyOutgoingContentError``.

Passes, in order; each reads only what the ones before produced:

0. ``_check_request`` — the request's instruction is an instruction, before history is read.
1. select (``select_ids``) — the view's ids.
2. project (``project_history``) — turns, pending results and every defect, one walk.
3. validate order (``Projection.raise_first`` on the full walk) — the first defect kind in
   ADR order is raised here, so no output (and no bound or rendering work) exists for a bad
   history. Only then may the profile's ``bound`` drop whole turns, so it cannot hide a
   defect and only ever sees a valid view.
4. ReAct step (``react_step``) — replaces kept instructions by copies for this request; it
   must run before the fold plan, whose target may be one of them.
5. plan the fold (``_plan_fold``) — target, parts and encoding, computed once; it must precede
   rendering because which instruction carries the fold decides how the first one renders.
6. render (``rendering.render_turns``) — one part per turn and the current instruction, the
   target's taken from the plan.
7. guard (``_guard_current_turn``) — a current turn whose real text rendered empty is refused;
   it needs the current rendering.
8. durable copy (``durable_instruction``) — built last, so a failed compile allocates nothing
   the caller could record.

Purity: no stored message, content, progression or branch metadata is written, and no private
lionagi state (render caches included) is touched. No I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from uuid import UUID

from lionagi._errors import EmptyOutgoingContentError
from lionagi.protocols.messages.instruction import InstructionContent

from lionagi_turns.core.contracts import CompiledChatRequest, TurnRequest
from lionagi_turns.core.durable import durable_instruction
from lionagi_turns.core.fold import FoldParts, FoldPlan, guidance_text
from lionagi_turns.core.history import (
    InstructionTurn,
    Projection,
    project_history,
    select_ids,
)
from lionagi_turns.core.memo import using
from lionagi_turns.core.profile import (
    NO_MEMO,
    SEED_PROFILE,
    Bounded,
    CompileProfile,
    Kept,
    Memo,
    Walk,
    chosen_memo,
)
from lionagi_turns.core.react import react_step
from lionagi_turns.core.render import own_copy
from lionagi_turns.core.rendering import (
    RenderedPart,
    assistant_text,
    current_record,
    history_record,
    render_current,
    render_history,
    render_turns,
)
from lionagi_turns.core.values import check_text, naming_record

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("RenderedPart", "Trace", "compile_chat_request", "compile_traced")

# The names amendment1 and the prompt-cache profile imported from here before the render pass
# had a module of its own.
_assistant_text, _history_record, _current_record = (
    assistant_text,
    history_record,
    current_record,
)


def compile_chat_request(
    branch: Branch, request: TurnRequest, *, react_context: Sequence[Any] | None = None
) -> CompiledChatRequest:
    """Compile ``request`` against ``branch``'s stored history (see the module rules).

    ``react_context``: the caller's context items while one of ReAct's later calls runs (the
    integration reads lionagi's ``_react_context`` and passes it); without it this is the
    ADR's signature and behaviour. Deterministic for a given branch snapshot and arguments;
    raises ValueError/TypeError naming the ids, positions or keys at fault, before producing
    any output.
    """
    return compile_traced(branch, request, react_context=react_context).compiled

@dataclass(frozen=True, slots=True)
class Trace:
    """Everything one compile decided, for the CLI and for profiles built on the seam.

    ``projected`` is the projection as walked, ``projection`` what the profile's bound kept
    (the same object without a bound); ``fold`` is None when nothing is folded; ``parts``
    holds every rendered turn in order, the current instruction last; ``reused`` counts the
    leading rendered parts taken from the previous compile of the branch (``Memo.resume``;
    0 when nothing was); ``current_context`` is the current instruction's prompt context the
    ReAct step decided (None: its own); ``bounded`` is the profile bound's decision (None
    without a bound). Projections and turns are frozen and may be shared with other
    compiles' traces.
    """

    profile: CompileProfile
    view: tuple[UUID, ...]
    projected: Projection
    projection: Projection
    parts: FoldParts
    fold: FoldPlan | None
    rendered: tuple[RenderedPart, ...]
    stable_blocks: tuple[str, ...]
    compiled: CompiledChatRequest
    reused: int = 0
    current_context: list[Any] | None = None
    bounded: Bounded | None = None

    @property
    def fold_message_index(self) -> int | None:
        """Index in ``compiled.messages`` of the message that carries the fold, or None."""
        return next((p.message_index for p in self.rendered if p.folded), None)


def compile_traced(
    branch: Branch,
    request: TurnRequest,
    *,
    profile: CompileProfile = SEED_PROFILE,
    react_context: Sequence[Any] | None = None,
    memo: Memo | None = None,
) -> Trace:
    """The pipeline of the module docstring under ``profile``, with what each pass decided.

    ``memo``: what the compile may reuse (``core.profile.Memo``); None takes the installed
    chooser's pick (the fast path's switch, read once per compile), ``NO_MEMO`` without one.
    The output is the same under every memo."""
    memo = chosen_memo() if memo is None else memo
    token = _memo.set(memo)
    try:
        with memo.compiling(), using(memo):
            return _compile_traced(branch, request, profile, react_context)
    finally:
        _memo.reset(token)


_memo: ContextVar[Memo] = ContextVar("lionagi_turns_compile_memo", default=NO_MEMO)


def _compile_traced(
    branch: Branch,
    request: TurnRequest,
    profile: CompileProfile,
    react_context: Sequence[Any] | None,
) -> Trace:
    memo = _memo.get()  # the compile's (``compile_traced``)
    _check_request(request)
    items = _react_items(react_context)
    view = select_ids(branch, request.progression)
    key = profile.reuse
    resumable = key is not None and not items and memo.keeps
    resumed = memo.resume(branch, key, view) if resumable else None
    walk: Walk | None = None
    snap: object | None = None
    if resumed is None:
        snap = memo.snapshot(branch, view) if resumable else None
        projected = project_history(branch, view)
    else:
        walk, projected, snap = resumed
    projected.raise_first()  # from the full walk, before any bound
    bounded = None if profile.bound is None else profile.bound(projected, request)
    projection = projected if bounded is None else bounded.projection
    projection, current_context = react_step(projection, request.instruction.content, items)
    parts, plan = _plan_fold(branch, request, projection, profile, current_context, walk, memo)
    rendered, messages, reused = render_turns(
        branch, request, projection, profile, plan, current_context, walk, memo
    )
    current = rendered[-1]
    _guard_current_turn(request.instruction.content, current.content)
    with naming_record(functools.partial(current_record, request)):
        instruction = durable_instruction(request.instruction)
    compiled = CompiledChatRequest(
        instruction=instruction,
        messages=messages,
        provider_kwargs=request.provider_kwargs,
    )
    if snap is not None:
        history = rendered[:-1]
        sent = messages[:-1] if current.message_index is not None else messages
        memo.keep(Kept(branch, key, snap, walk, projected, projection, history, sent, reused, plan))
    return Trace(
        profile=profile,
        view=view,
        projected=projected,
        projection=projection,
        parts=parts,
        fold=plan,
        rendered=rendered,
        stable_blocks=profile.stable_blocks(branch, request),
        compiled=compiled,
        reused=reused,
        current_context=current_context,
        bounded=bounded,
    )


# --------------------------------------------------------------------------- pass 0


def _check_request(request: TurnRequest) -> None:
    """The supplied instruction's content must be an ``InstructionContent``. Its own transient
    fields (``tool_schemas``, ``response_format``, ``structure``) are ignored, neither rendered
    nor recorded (ADR D1: the compiler replaces the copy's content with the durable fields and
    takes the call options from the request only)."""
    content = request.instruction.content
    if not isinstance(content, InstructionContent):
        raise TypeError(
            f"TurnRequest.instruction.content is {type(content).__name__}, not "
            "InstructionContent; build the instruction with "
            "branch.msgs.create_instruction(instruction=...)"
        )


def _react_items(items: Sequence[Any] | None) -> tuple[Any, ...] | None:
    if items is None:
        return None
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Sequence):
        raise TypeError(
            "react_context must be a sequence of context items (lionagi's _react_context "
            f"list), got {type(items).__name__}"
        )
    return tuple(items)


# --------------------------------------------------------------------------- pass 5


def _plan_fold(
    branch: Branch,
    request: TurnRequest,
    projection: Projection,
    profile: CompileProfile,
    current_context: list[Any] | None,
    walk: Walk | None,
    memo: Memo,
) -> tuple[FoldParts, FoldPlan | None]:
    """The fold's parts (all of them, folded or not) and, when a system or context part is
    folded, the plan: the first retained instruction (else the current one) rendered with it.
    A resumed compile takes the walk's plan when its target is the same turn object and the
    folded parts are equal (the rendering reads nothing else)."""
    system = branch.msgs.system
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
        return parts, None
    if walk is not None and turn is not None and (old := walk.plan) is not None:
        turns = walk.projection.turns
        same = target is not None and old.target == target and target < len(turns)
        if same and turns[target] is turn and old.parts == folded:  # type: ignore[index]
            return parts, FoldPlan(target, folded, old.encoding, own_copy(old.rendered))
    if turn is not None:
        rendered, encoding = render_history(branch, turn, profile, folded, memo)
    else:
        rendered, encoding = render_current(
            branch, request, projection, profile, current_context, folded, memo
        )
    if encoding is None:  # pragma: no cover - render_view returns an encoding with a fold
        raise AssertionError("a rendering that carries the fold must report its encoding")
    return parts, FoldPlan(target, folded, encoding, rendered)


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

# --------------------------------------------------------------------------- pass 7


def _guard_current_turn(content: InstructionContent, current: Any) -> None:
    has_text = bool(content.instruction or content.plain_content or content.images)
    if has_text and not current:
        raise EmptyOutgoingContentError(
            "Refusing to compile: the current instruction has text "
            f"(instruction_len={len(content.instruction or '')}, "
            f"plain_content_len={len(content.plain_content or '')}, "
            f"images={len(content.images)}) but renders empty, so the model would receive "
            "no turn. Give it visible text (whitespace-only text renders empty)."
        )
