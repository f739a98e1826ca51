"""ADR-0007 D2/D3: ``compile_chat_request`` — the one place history becomes a request.

Rules (input -> output):

- ``request.progression`` None -> ``branch.progression`` (a ``current_progression`` view wins);
  ``()`` -> no history; a tuple -> exactly those ids, in that order.
- Missing ids -> one ValueError naming all; repeated ids -> ValueError naming each.
- ``System`` / ``ActionRequest`` / role-unset records -> nothing.
- ``ActionResponse`` -> ``{"function", "arguments", "output"}`` appended to the next
  instruction's context (the current one if none follows), skipping dicts already present.
- ``AssistantResponse`` run -> one ``assistant`` message, texts joined by ``"\\n\\n"``.
- Historical ``Instruction`` -> one ``user`` message, durable sections only.
- Instruction right after instruction -> ValueError (``CONSECUTIVE_INSTRUCTIONS``).
- Branch with a system whose first retained record is an assistant -> ValueError
  (``FIRST_MESSAGE_RULE``).
- Any other message subclass -> TypeError.
- Current instruction -> last ``user`` message, durable sections plus the request's Tools,
  ResponseSchema and ResponseFormat.
- System text, the D3 context section and the target's guidance -> joined by ``"\\n\\n"`` as the
  guidance of the first retained instruction (the current one when there is no history).
- A falsy rendering -> omitted, except that a current instruction with real text that renders
  empty raises lionagi's ``EmptyOutgoingContentError``.

Passes, in order (each depends on the one before):

1. ``_check_request`` — reject call-level problems before reading history.
2. ``select_ids`` + ``project_history`` — the view, its turns, and every defect; the first defect
   kind in ADR order is raised, so no output exists for a bad history.
3. ``_fold_prefix`` — system, context section and guidance for the fold target; needs the
   projection to know which instruction is the target.
4. ``_render_turns`` — one ``CompiledMessage`` per turn, then the current instruction.
5. ``_guard_current_turn`` — refuse a current turn whose real text rendered empty.
6. ``durable_instruction`` — the record-ready instruction; built last so a failed compile
   allocates nothing the caller could record.

Purity: no stored message, content, progression or branch metadata is written, and no private
lionagi state (render caches included) is touched. No I/O.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from lionagi._errors import EmptyOutgoingContentError
from lionagi.protocols.messages import MessageRole
from lionagi.protocols.messages.instruction import InstructionContent

from ._contracts import CompiledChatRequest, CompiledMessage, TurnRequest
from ._durable import durable_instruction
from ._envelope import encode_context_section
from ._fast import cache as _cache
from ._history import AssistantTurn, InstructionTurn, Projection, project_history, select_ids
from ._render import guidance_text, render_instruction
from ._values import naming_record

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("compile_chat_request",)


def compile_chat_request(branch: Branch, request: TurnRequest) -> CompiledChatRequest:
    """Compile ``request`` against ``branch``'s stored history (see the module rules).

    Deterministic for a given branch snapshot and request; raises ValueError/TypeError naming
    the ids, positions or keys at fault, before producing any output.
    """
    _check_request(request)
    projection = project_history(branch, select_ids(branch, request.progression))
    projection.raise_first()

    system = branch.msgs.system
    prefix_parts = (
        system.rendered if system is not None else "",
        encode_context_section(request.context_blocks),
    )
    messages = _render_turns(projection, request, prefix_parts)
    _guard_current_turn(request.instruction.content, messages.current_rendered)
    with naming_record(f"current instruction, id {request.instruction.id}"):
        instruction = durable_instruction(request.instruction)
    return CompiledChatRequest(
        instruction=instruction,
        messages=tuple(messages.out),
        provider_kwargs=request.provider_kwargs,
    )


_TRANSIENT = ("tool_schemas", "response_format")


def _check_request(request: TurnRequest) -> None:
    """Call options embedded in the instruction must also be on the request, or be absent:
    the compiler takes them from the request only and would otherwise drop them unseen."""
    content = request.instruction.content
    if not isinstance(content, InstructionContent):
        raise TypeError(
            f"TurnRequest.instruction.content is {type(content).__name__}, not InstructionContent"
        )
    embedded = {
        "tool_schemas": list(content.tool_schemas),
        "response_format": content.response_format,
    }
    requested = {
        "tool_schemas": [dict(s) for s in request.tool_schemas],
        "response_format": request.response_format,
    }
    for name in _TRANSIENT:
        value = embedded[name]
        if value in (None, []):
            continue
        if not _same_option(value, requested[name]):
            raise ValueError(
                f"TurnRequest.instruction carries {name} in its content but the request's "
                f"{name} differs; call options belong on TurnRequest.{name} (ADR-0007 D1). "
                f"Pass TurnRequest({name}=...) or build the instruction without it."
            )


def _same_option(embedded: Any, requested: Any) -> bool:
    if embedded is requested:
        return True
    if isinstance(embedded, type) or isinstance(requested, type):
        return embedded is requested
    try:
        return bool(embedded == requested)
    except Exception:
        return False


def _fold_prefix(parts: tuple[str, str], guidance: Any) -> str:
    """``system\\n\\ncontext\\n\\nguidance`` from the non-empty parts, or "" when neither a
    system nor a context section exists (then guidance renders as the instruction has it)."""
    if not any(parts):
        return ""
    return "\n\n".join(p for p in (*parts, guidance_text(guidance)) if p)


class _Rendered:
    __slots__ = ("current_rendered", "out")

    def __init__(self) -> None:
        self.out: list[CompiledMessage] = []
        self.current_rendered: Any = None

    def add(self, role: MessageRole, content: Any) -> None:
        if content:
            self.out.append(CompiledMessage(role=role, content=content))


def _render_turns(
    projection: Projection, request: TurnRequest, prefix_parts: tuple[str, str]
) -> _Rendered:
    rendered = _Rendered()
    fold_pending = True
    for turn in projection.turns:
        if isinstance(turn, AssistantTurn):
            text = "\n\n".join(m.content.assistant_response for m in turn.messages)
            rendered.add(MessageRole.ASSISTANT, text)
        elif isinstance(turn, InstructionTurn):
            fold = ""
            with naming_record(f"history position {turn.position}, instruction id "
                               f"{turn.message.id}"):
                if fold_pending:
                    fold = _fold_prefix(prefix_parts, turn.message.content.guidance)
                    fold_pending = False
                text = _history_instruction(turn, fold, prefix_parts[1])
            rendered.add(MessageRole.USER, text)
        else:  # pragma: no cover - Turn is a closed union
            raise TypeError(f"unhandled turn kind {type(turn).__name__}")

    content = request.instruction.content
    with naming_record(f"current instruction, id {request.instruction.id}"):
        fold = _fold_prefix(prefix_parts, content.guidance) if fold_pending else ""
        current = render_instruction(
            content,
            results=projection.pending,
            fold=fold,
            section=prefix_parts[1] if fold else "",
            tool_schemas=request.tool_schemas,
            response_format=request.response_format,
            structure=request.structure,
        )
    rendered.current_rendered = current
    rendered.add(MessageRole.USER, _own(current))
    return rendered


def _history_instruction(turn: InstructionTurn, fold: str, section: str) -> Any:
    if not fold:
        return _cache.render_durable(turn.message, turn.results, turn.sources)
    return render_instruction(
        turn.message.content, results=turn.results, fold=fold, section=section
    )


def _own(rendered: Any) -> Any:
    """Rendered list content is deep-copied so no caller-visible object is shared."""
    return copy.deepcopy(rendered) if isinstance(rendered, list) else rendered


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
