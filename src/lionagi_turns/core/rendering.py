"""The render pass (ADR-0007 D2 §5): one part per turn and the current instruction.

Guarantees: each historical instruction renders with the profile's ``history_options`` (None:
the durable view, from the memo's ``cached_rendering`` / ``durable_rendering`` when it keeps
renderings), the fold target's part is the fold plan's rendering, and a part whose rendering
is falsy is omitted from the messages (``message_index`` None). Every answer equals what
``NO_MEMO`` renders; leading parts of a resumed walk are reused only for turns that are the
very objects the walk rendered.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, assert_never

from lionagi.protocols.messages import Instruction, MessageRole

from lionagi_turns.core.contracts import CompiledMessage, TurnRequest
from lionagi_turns.core.fold import Encoding, FoldParts, FoldPlan
from lionagi_turns.core.history import AssistantTurn, InstructionTurn, Projection
from lionagi_turns.core.plan import EARLY, Plan
from lionagi_turns.core.profile import CompileProfile, Memo, Walk
from lionagi_turns.core.render import (
    CallOptions,
    Content,
    ResultsSection,
    own_copy,
    render_view,
)
from lionagi_turns.core.rendered import RenderedPart
from lionagi_turns.core.values import check_text, check_value, naming_record

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = (
    "RenderedPart",
    "assistant_text",
    "current_record",
    "history_record",
    "render_current",
    "render_history",
    "render_turns",
)


def render_turns(
    plan: Plan,
) -> tuple[tuple[RenderedPart, ...], tuple[CompiledMessage, ...], int]:
    """Every rendered part of ``plan`` (the current instruction last), the compiled messages
    and how many leading parts ``plan.walk`` supplied (``memo.resume``: the turns that are the
    same objects as in the walk, its fold part replaced by this plan's)."""
    branch, profile, memo = plan.branch, plan.profile, plan.memo
    projection, fold, walk = plan.projection, plan.fold, plan.walk
    assert projection is not None, EARLY
    out: list[RenderedPart] = []
    messages: list[CompiledMessage] = []
    start = 0
    if walk is not None:
        start = _reusable(walk, fold, memo.reuse_prefix(walk, projection.turns))
        if start:
            out, messages = memo.reused(walk, start)
            if fold is not None and fold.target is not None and fold.target < start:
                _refold(out, messages, fold)
    _render_history_turns(branch, projection, profile, fold, memo, start, out, messages)
    folded = fold is not None and fold.target is None
    current = own_copy(
        fold.rendered if fold is not None and folded else render_current(plan, None)[0]
    )
    index = len(messages)
    user = MessageRole.USER
    out.append(RenderedPart("current", user, current, None, index if current else None, folded))
    if current:
        messages.append(CompiledMessage(user, current))
    return tuple(out), tuple(messages), start


def _render_history_turns(
    branch: Branch,
    projection: Projection,
    profile: CompileProfile,
    plan: FoldPlan | None,
    memo: Memo,
    start: int,
    out: list[RenderedPart],
    messages: list[CompiledMessage],
) -> None:
    """Append the parts and messages of ``projection.turns[start:]`` (the fold target's taken
    from ``plan``)."""
    index = len(messages)
    user, assistant = MessageRole.USER, MessageRole.ASSISTANT
    history_text = profile.history_text
    seed = (
        profile.history_options is None
        and profile.results_section is None
        and memo.keeps
    )
    cached = memo.cached_rendering
    content: Content
    turns = projection.turns
    for position in range(start, len(turns)):
        turn = turns[position]
        if isinstance(turn, AssistantTurn):
            content = assistant_text(turn)
            sent = index if content else None
            out.append(RenderedPart("history", assistant, content, turn, sent))
        elif isinstance(turn, InstructionTurn):
            folded = plan is not None and plan.target == position
            if plan is not None and folded:
                content = plan.rendered
            elif seed and turn.context is None and (
                (hit := cached(turn.message, turn.results, turn.sources)) is not None
            ):  # what render_history returns for this turn on a hit, without its calls
                content = hit
            else:  # a miss when ``seed`` (the cache was just asked): not asked again
                content = render_history(branch, turn, profile, None, memo, probed=seed)[0]
            if not folded and history_text is not None:
                content = history_text(branch, turn, content)
            sent = index if content else None
            out.append(RenderedPart("history", user, content, turn, sent, folded))
        else:
            assert_never(turn)
        if content:
            messages.append(CompiledMessage(out[-1].role, content))
            index += 1


def _reusable(walk: Walk, plan: FoldPlan | None, start: int) -> int:
    """``start`` lowered so the reused parts hold no fold this plan does not make, and so the
    plan's target, when reused, keeps its place among the messages (same truthiness)."""
    folded = walk.plan.target if walk.plan is not None else None
    if folded is not None and folded < start and (plan is None or plan.target != folded):
        start = folded
    if plan is not None and plan.target is not None and plan.target < start:
        before = walk.history[plan.target].content
        if bool(before) != bool(plan.rendered):
            start = plan.target
    return start


def _refold(out: list[RenderedPart], messages: list[CompiledMessage], plan: FoldPlan) -> None:
    """Put this plan's rendering in place of the reused fold target's part and message (the
    same objects when the text is the same)."""
    assert plan.target is not None
    part = out[plan.target]
    if part.folded and type(part.content) is str and part.content == plan.rendered:
        return
    out[plan.target] = RenderedPart(
        "history", part.role, plan.rendered, part.turn, part.message_index, True
    )
    if part.message_index is not None:
        messages[part.message_index] = CompiledMessage(part.role, plan.rendered)


def render_history(
    branch: Branch,
    turn: InstructionTurn,
    profile: CompileProfile,
    fold: FoldParts | None,
    memo: Memo,
    *,
    probed: bool = False,
) -> tuple[Content, Encoding | None]:
    """``turn``'s rendering under ``profile`` (with ``fold``) and the fold's encoding;
    ``probed``: the render cache has just answered MISS for this turn."""
    chooser = profile.history_options
    options = None if chooser is None else chooser(branch, turn)
    message = turn.message
    own_view = fold is None and options is None and turn.context is None
    durable = own_view and profile.results_section is None
    if durable and not probed and memo.keeps:  # a hit cannot fail
        hit = memo.cached_rendering(message, turn.results, turn.sources)
        if hit is not None:
            return hit, None
        probed = True
    with naming_record(functools.partial(history_record, turn)):
        if durable:
            rendering = memo.durable_rendering(message, turn.results, turn.sources, probed=probed)
            return rendering, None
        if own_view and profile.results_section is not None:
            return _sectioned(message, turn.results, profile.results_section, memo), None
        kwargs: dict[str, Any] = {} if options is None else {"options": options}
        return render_view(
            message.content,
            results=turn.results,
            context=turn.context,
            fold=fold.text if fold is not None else "",
            section=fold.context if fold is not None else "",
            results_section=profile.results_section,
            **kwargs,
        )


def _sectioned(
    message: Instruction, results: Sequence[dict[str, object]], section: ResultsSection, memo: Memo
) -> Content:
    """Exactly ``render_view(message.content, results=results, results_section=section)[0]``,
    its own part from the render cache: the durable rendering without results, then what
    ``render_view`` does after rendering an instruction that passed its checks (check each
    result, append the section as a last paragraph or text part)."""
    if memo.keeps:
        try:
            own = memo.durable_rendering(message)
        except Exception:  # deferral: render_view below raises its own error, in its order
            own = None
        if own is not None:
            for index, result in enumerate(results):
                check_value(result, f"folded action result {index}")
            tail = section(results, message.content.prompt_context) if results else ""
            if not tail:
                return own
            if isinstance(own, list):
                return [*own, {"type": "text", "text": tail}]
            return f"{own}\n\n{tail}" if own else tail
    return render_view(message.content, results=results, results_section=section)[0]


def assistant_text(turn: AssistantTurn) -> str:
    """The run's texts joined by a blank line; a stored response that is not text is a
    TypeError naming it."""
    if len(turn.messages) == 1:  # a one-message run is its text (``join`` of one returns it)
        text = turn.messages[0].content.assistant_response
        if type(text) is str and text.isascii():
            return text
    for message, position in zip(turn.messages, turn.positions, strict=True):
        text = message.content.assistant_response
        if not isinstance(text, str):
            raise TypeError(
                f"assistant_response is of type {type(text).__name__}, not text (history "
                f"position {position}, assistant response id {message.id}); store the reply "
                "as a string"
            )
        with naming_record(f"history position {position}, assistant response id {message.id}"):
            check_text(text, "assistant_response")
    return "\n\n".join(m.content.assistant_response for m in turn.messages)


def history_record(turn: InstructionTurn) -> str:
    return f"history position {turn.position}, instruction id {turn.message.id}"


def current_record(request: TurnRequest) -> str:
    return f"current instruction, id {request.instruction.id}"


def render_current(plan: Plan, fold: FoldParts | None) -> tuple[Content, Encoding | None]:
    """The current instruction's rendering under ``plan`` (its projection's pending results,
    the ReAct step's context) with ``fold``, and the fold's encoding (None without a fold)."""
    branch, request, profile, memo = plan.branch, plan.request, plan.profile, plan.memo
    projection, context = plan.projection, plan.current_context
    assert projection is not None, EARLY
    options = profile.current_options(branch, request)
    with naming_record(functools.partial(current_record, request)):
        if (
            fold is None
            and context is None
            and (profile.results_section is None or not projection.pending)
            and isinstance(options, CallOptions)
            and not options.tool_schemas
            and options.response_format is None
            and options.structure is None
            and memo.keeps
        ):  # a durable view (a results section renders nothing without results): exactly
            # render_instruction(content, results=pending)
            return memo.plain_rendering(request.instruction.content, projection.pending), None
        return render_view(
            request.instruction.content,
            results=projection.pending,
            context=context,
            fold=fold.text if fold is not None else "",
            section=fold.context if fold is not None else "",
            options=options,
            results_section=profile.results_section,
        )
