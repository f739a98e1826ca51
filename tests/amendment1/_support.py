"""Builders for the Amendment 1 tests: real lionagi branches, a character-count measure."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from uuid import UUID

from lionagi import Branch
from lionagi.protocols.generic.progression import Progression
from lionagi.protocols.messages import ActionRequest, ActionResponse, AssistantResponse, Instruction

from lionagi_turns.amendment1 import (
    CompiledChatRequest,
    CompiledMessage,
    SectionBudgets,
    TurnRequest,
    compile_chat_request,
)


def branch(system: str | None = None) -> Branch:
    return Branch(system=system) if system is not None else Branch()


def add_instruction(b: Branch, text: str = "ask", **kwargs: Any) -> Instruction:
    msg = b.msgs.add_message(instruction=text, **kwargs)
    assert isinstance(msg, Instruction)
    return msg


def add_assistant(b: Branch, text: str = "answer") -> AssistantResponse:
    msg = b.msgs.add_message(assistant_response=text)
    assert isinstance(msg, AssistantResponse)
    return msg


def add_action_pair(
    b: Branch, function: str = "lookup", arguments: dict[str, Any] | None = None, output: Any = 1
) -> tuple[ActionRequest, ActionResponse]:
    request = b.msgs.add_message(
        action_function=function, action_arguments=arguments if arguments is not None else {}
    )
    response = b.msgs.add_message(action_request=request, action_output=output)
    assert isinstance(request, ActionRequest) and isinstance(response, ActionResponse)
    return request, response


def set_current_progression(b: Branch, ids: Iterable[UUID]) -> None:
    b.metadata["current_progression"] = Progression(order=list(ids))


def text_of(message: CompiledMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content if p.get("type") == "text")


def chars(text: str) -> int:
    """A measure whose counts a test can work out by hand."""
    return len(text)


def compile_a1(
    b: Branch,
    now: str = "now",
    *,
    budgets: SectionBudgets | None = None,
    react_context: Any = None,
    measure: Any = chars,
    **request: Any,
) -> CompiledChatRequest:
    context = request.pop("context", None)
    kwargs = {"context": context} if context is not None else {}
    ins = b.msgs.create_instruction(instruction=now, **kwargs)
    return compile_chat_request(
        b,
        TurnRequest(instruction=ins, **request),
        budgets=budgets,
        measure=measure,
        react_context=react_context,
    )


def all_text(compiled: CompiledChatRequest) -> str:
    return "\n".join(text_of(m) for m in compiled.messages)


def snapshot(b: Branch) -> Any:
    """Everything compile could change, as comparable data."""
    return (
        [m.to_dict() for m in b.msgs.messages],
        list(b.msgs.progression),
        list(b.progression),
        {k: (list(v) if isinstance(v, Progression) else v) for k, v in b.metadata.items()},
    )
