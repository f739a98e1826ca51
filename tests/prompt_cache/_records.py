"""A conversation compiled under the prompt-cache profile, and the bad record shapes the record
tests write into it (in memory and in saved branches)."""

import math
from typing import Any

from lionagi import Branch
from pydantic import BaseModel

from lionagi_turns import ContextBlock, TurnRequest
from lionagi_turns.integration._cache import compile_for_prompt_cache, prompt_cache_view
from lionagi_turns.profiles.prompt_cache._compile import RECORD_KEY

from ._tools import lookup


class Answer(BaseModel):
    answer: str


def conversation(system: str = "SYSTEM-ONE") -> Branch:
    """Three calls through the call surface's compile: a first call with a context block (its
    text is its durable rendering), a call with tools and a response format (its text adds
    those sections), a plain last call. View positions: system 0, instructions 1, 3, 5."""
    branch = Branch(system=system, tools=[lookup])
    calls: list[dict[str, Any]] = [
        {"context_blocks": (ContextBlock("catalog", "SKU 12 costs $3"),)},
        {"response_format": Answer, "tool_schemas": tuple(branch.acts.schema_list)},
        {},
    ]
    for i, call in enumerate(calls):
        request = TurnRequest(
            instruction=branch.msgs.create_instruction(instruction=f"q{i}"), **call
        )
        compiled, _ = compile_for_prompt_cache(branch, request)
        branch.msgs.add_message(instruction=compiled.instruction)
        branch.msgs.add_message(assistant_response=f"a{i}")
    return branch


def instructions(branch: Branch) -> list[Any]:
    return [m for m in branch.messages if type(m).__name__ == "Instruction"]


def next_view(branch: Branch, tools: bool = True) -> dict[str, Any]:
    """The next call's prompt-cache view (the live tool set, or None: as a saved branch)."""
    request = TurnRequest(instruction=branch.msgs.create_instruction(instruction="next"))
    return prompt_cache_view(branch, request, list(branch.acts.schema_list) if tools else None)


def sent(view: dict[str, Any]) -> dict[str, Any]:
    """What reaches the model: the system blocks and the messages."""
    return {"system": view["system"], "messages": view["messages"]}


def well_formed(view: dict[str, Any]) -> None:
    """Every message's content is a string or a list of text/image parts."""
    for message in view["messages"]:
        content = message["content"]
        if isinstance(content, list):
            assert all(isinstance(p, dict) and isinstance(p.get("text", ""), str)
                       for p in content)
        else:
            assert isinstance(content, str)


class Raising(dict):  # type: ignore[type-arg]
    """A record mapping whose reads fail."""

    def __getitem__(self, key: Any) -> Any:
        raise RuntimeError("unreadable record")

    def get(self, key: Any, default: Any = None) -> Any:
        raise RuntimeError("unreadable record")


# "text" values written on the first instruction (its text is its durable rendering)
TEXT_SHAPES: dict[str, Any] = {
    "null": None,
    "empty": "",
    "int": 5,
    "object": {"a": 1},
    "list-of-ints": [1, 2],
    "part-without-text": [{"type": "text"}],
}

# whole-record edits on the last instruction, as JSON can save them
SAVED_RECORD_SHAPES: dict[str, Any] = {
    "messages-negative": lambda r: {**r, "messages": -1},
    "messages-zero": lambda r: {**r, "messages": 0},
    "messages-text": lambda r: {**r, "messages": "5"},
    "basis-not-digest": lambda r: {**r, "basis": 7},
    "changes-not-object": lambda r: {**r, "changes": [True]},
    "record-a-list": lambda r: [r],
    "record-a-string": lambda r: "record",
}

# only in memory: values JSON does not save
MEMORY_RECORD_SHAPES: dict[str, Any] = {
    **SAVED_RECORD_SHAPES,
    "messages-inf": lambda r: {**r, "messages": math.inf},
    "raising-mapping": lambda r: Raising(r),
}


def set_record(message: Any, value: Any) -> None:
    message.metadata[RECORD_KEY] = value
