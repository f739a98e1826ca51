"""Branch builders and observers for the fast-path tests (real lionagi Branches)."""

from __future__ import annotations

import copy
import json
from typing import Any

from lionagi import Branch
from lionagi.protocols.messages import (
    ActionResponse,
    AssistantResponse,
    Instruction,
    Message,
)

from lionagi_turns import TurnRequest, compile_chat_request, to_provider_messages
from lionagi_turns.memo.switch import no_fast_path

PNG = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+A8AAQUBAScY42YAAAAASUVORK5CYII="
)


def outcome(branch: Branch, request: TurnRequest) -> tuple[Any, ...]:
    """What a compile produced: the provider messages, kwargs and recorded instruction, or the
    error's type and text."""
    try:
        compiled = compile_chat_request(branch, request)
    except Exception as exc:
        return ("error", type(exc).__name__, str(exc))
    return (
        "ok",
        to_provider_messages(compiled),
        dict(compiled.provider_kwargs),
        compiled.instruction.to_dict(),
    )


def slow_outcome(branch: Branch, request: TurnRequest) -> tuple[Any, ...]:
    with no_fast_path():
        return outcome(branch, request)


def current(branch: Branch, text: str = "What next?") -> TurnRequest:
    return TurnRequest(instruction=branch.msgs.create_instruction(instruction=text))


class Convo:
    """system, I1 (fold target), A1, I2 (dict context), tool call, A2, I3 (results + images),
    A3 — every record kept for mutation."""

    def __init__(self, system: str | None = "Be careful.") -> None:
        self.branch = Branch(system=system) if system else Branch()
        m = self.branch.msgs
        self.i1: Instruction = m.add_message(instruction="first", guidance="g1")
        self.a1: AssistantResponse = m.add_message(assistant_response="one")
        self.i2: Instruction = m.add_message(
            instruction="second",
            guidance="g2",
            context=[{"doc": "a", "rows": [1, 2], "meta": {"k": "v"}}, "plain note"],
        )
        request = m.add_message(action_function="lookup", action_arguments={"q": "x", "n": [1]})
        self.resp: ActionResponse = m.add_message(
            action_request=request, action_output={"rows": [{"id": 1}], "ok": True}
        )
        self.a2: AssistantResponse = m.add_message(assistant_response="two")
        self.i3: Instruction = m.add_message(
            instruction="third", context=[{"n": 3}], images=[PNG], image_detail="low"
        )
        self.a3: AssistantResponse = m.add_message(assistant_response="three")


def private_state(branch: Branch) -> dict[Any, Any]:
    """Each record's pydantic private state: the objects and a deep copy of their values."""
    state: dict[Any, Any] = {}
    messages: list[Message] = list(branch.msgs.messages)
    if branch.msgs.system is not None:
        messages.append(branch.msgs.system)
    for msg in messages:
        private = dict(msg.__pydantic_private__ or {})
        state[msg.id] = (
            {k: id(v) for k, v in private.items()},
            copy.deepcopy({k: repr(v) for k, v in private.items()}),
            msg.content._revision,
        )
    return state


def error_outcome(exc: BaseException) -> tuple[Any, ...]:
    """An error as the resume tests compare it: type, text, notes and defects."""
    defects = getattr(exc, "defects", ())
    return (
        "error",
        type(exc).__name__,
        str(exc),
        tuple(getattr(exc, "__notes__", ())),
        tuple(d.to_dict() for d in defects),
    )


def full_outcome(branch: Branch, request: TurnRequest) -> tuple[Any, ...]:
    """``outcome`` plus the compiled messages themselves (a deep copy, so a later edit of a
    returned object cannot change it) and, for an error, its notes and defects."""
    try:
        compiled = compile_chat_request(branch, request)
    except Exception as exc:
        return error_outcome(exc)
    return (
        "ok",
        copy.deepcopy([(m.role, m.content) for m in compiled.messages]),
        to_provider_messages(compiled),
        dict(compiled.provider_kwargs),
        compiled.instruction.to_dict(),
    )


def full_slow_outcome(branch: Branch, request: TurnRequest) -> tuple[Any, ...]:
    with no_fast_path():
        return full_outcome(branch, request)


def rebuilt(branch: Branch) -> Branch:
    """An equivalent branch built from scratch: saved as JSON and loaded back (same ids, same
    view, every record a new object)."""
    from lionagi_turns.cli._load import parse_branch

    data = json.loads(json.dumps(branch.to_dict(mode="json"), default=str))
    return parse_branch(data).branch
