"""Helpers shared by the structured-output and ReAct matrices (test_matrix_structured.py,
test_matrix_react.py): independent expectations for calls whose request lionagi shapes itself.

Everything here is computed from the scenario catalogue and lionagi's own public shaping code
(``Step`` operatives, ``ReActAnalysis`` prompts); nothing reads the installed adapter.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any
from uuid import UUID

import scenarios as catalogue
from lionagi import Branch
from lionagi.protocols.action.tool import Tool
from lionagi.protocols.messages import Instruction

from lionagi_turns import compile_chat_request, to_provider_messages

__all__ = (
    "CALL_OPTIONS",
    "assert_no_call_options_recorded",
    "compiled_turn",
    "history_at",
    "lookup_tool",
    "new_instructions",
    "operative_format",
)

Messages = list[dict[str, Any]]

#: The call options a recorded instruction must never carry (D1).
CALL_OPTIONS = ("tool_schemas", "response_format", "structure")


def lookup(term: str) -> dict[str, Any]:
    """The catalogue's ``lookup`` tool, executable: three hits for any term."""
    return {"term": term, "hits": 3}


def lookup_tool() -> Tool:
    """``lookup`` registered with exactly the catalogue's schema (``scenarios.TOOL``)."""
    return Tool(func_callable=lookup, tool_schema=catalogue.TOOL)


def operative_format(base: Any, *, reason: bool, actions: bool) -> Any:
    """The response format lionagi's ``operate`` puts on the chat request for ``base`` (a model
    class or instance; a dict or None is passed through when no operative is built), computed
    with lionagi's own ``Step`` exactly as operate does it."""
    from lionagi.operations.operate.step import Step
    from pydantic import BaseModel

    model = base if isinstance(base, type) else type(base) if isinstance(base, BaseModel) else None
    if model is None and not (reason or actions):
        return base
    operative = Step.respond_operative(
        Step.request_operative(base_type=model, reason=reason, actions=actions, fields=None)
    )
    return operative.response_type or model


def compiled_turn(
    branch: Branch,
    scenario: catalogue.Scenario,
    *,
    call: Mapping[str, Any] | None = None,
    progression: Sequence[UUID] | None = None,
    react_context: Sequence[Any] | None = None,
) -> Messages:
    """``to_provider_messages(compile_chat_request(branch, request))`` for the scenario's turn
    with ``call`` replacing its call (the scenario's blocks stay), built by
    ``scenarios.request_for``; ``progression`` (a snapshot) replaces the scenario's selector.
    lionagi runs no provider on a branch without a system message, so there the request
    carries no blocks (as in test_matrix). ``react_context`` is passed to the compiler (ReAct's
    later calls)."""
    shaped = dataclasses.replace(scenario, call=dict(call if call is not None else scenario.call))
    request = catalogue.request_for(branch, shaped)
    if progression is not None:
        request = dataclasses.replace(request, progression=tuple(progression))
    if request.context_blocks and branch.msgs.system is None:
        request = dataclasses.replace(request, context_blocks=())
    return to_provider_messages(
        compile_chat_request(branch, request, react_context=react_context))


def new_instructions(branch: Branch, before: set[UUID]) -> list[Instruction]:
    """Instructions recorded on ``branch`` since ``before`` (ids), in recording order."""
    return [m for m in branch.messages if isinstance(m, Instruction) and m.id not in before]


def history_at(snapshot: Sequence[UUID] | None, current: Instruction) -> tuple[UUID, ...]:
    """The history a call compiled against: the progression snapshot taken at the model
    boundary without the call's own instruction (run records it before the model call, chat
    after)."""
    assert snapshot is not None
    return tuple(i for i in snapshot if i != current.id)


def assert_no_call_options_recorded(instructions: Sequence[Instruction]) -> None:
    """Each instruction's ``to_dict()`` (those a call recorded) is free of call options (D1)
    and its rendering shows neither tools nor a response format."""
    assert instructions
    for msg in instructions:
        content = msg.to_dict()["content"]
        leaked = [k for k in CALL_OPTIONS if k in content]
        assert not leaked, (leaked, content)
        assert "ResponseFormat" not in str(msg.rendered), msg.rendered
        assert "Tools" not in str(msg.rendered), msg.rendered
