"""Builders and observers shared by the unit and property tests.

Branches are real lionagi ``Branch`` objects; records are added through lionagi's own
``MessageManager`` factories, except for kinds lionagi has no factory for (a stray ``System``
record, a base ``Message``, an unknown fixed-role subtype), which are included in the branch's
pile directly, exactly as a deserialized branch would hold them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, ClassVar
from uuid import UUID

import yaml
from lionagi import Branch
from lionagi.protocols.generic.progression import Progression
from lionagi.protocols.messages import (
    ActionRequest,
    ActionResponse,
    AssistantResponse,
    Instruction,
    Message,
    MessageRole,
    System,
)

from lionagi_turns import (
    CompiledChatRequest,
    CompiledMessage,
    ContextBlock,
    TurnRequest,
    compile_chat_request,
)


class MemoNote(Message):
    """A fixed-role conversational kind the compiler has no rule for (ADR D2 step 2)."""

    _role: ClassVar[MessageRole] = MessageRole.ASSISTANT


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
    assert isinstance(request, ActionRequest)
    response = b.msgs.add_message(action_request=request, action_output=output)
    assert isinstance(response, ActionResponse)
    return request, response


def add_action_request(b: Branch, function: str = "lookup") -> ActionRequest:
    request = b.msgs.add_message(action_function=function, action_arguments={"q": 1})
    assert isinstance(request, ActionRequest)
    return request


def include(b: Branch, msg: Message) -> Message:
    """Put a record lionagi has no factory call for into the branch's pile and progression."""
    b.msgs.messages.include(msg)
    return msg


def add_stray_system(b: Branch, text: str = "stray system record") -> System:
    msg = System(content={"system_message": text})
    include(b, msg)
    return msg


def add_base_message(b: Branch) -> Message:
    return include(b, Message(content={"routed": "traffic"}))


def add_memo(b: Branch) -> MemoNote:
    msg = MemoNote(content={"note": "unknown kind"})
    include(b, msg)
    return msg


def set_current_progression(b: Branch, ids: Iterable[UUID]) -> None:
    b.metadata["current_progression"] = Progression(order=list(ids))


def compile_now(
    b: Branch,
    blocks: tuple[ContextBlock, ...] = (),
    *,
    progression: tuple[UUID, ...] | None = None,
    react_context: list[Any] | None = None,
    **current: Any,
) -> CompiledChatRequest:
    """Compile ``b`` with a new current instruction ``"now"`` (``current`` holds its other
    fields, ``instruction`` included, for lionagi's ``create_instruction``)."""
    ins = b.msgs.create_instruction(**{"instruction": "now", **current})
    request = TurnRequest(instruction=ins, context_blocks=blocks, progression=progression)
    return compile_chat_request(b, request, react_context=react_context)


def result(function: str, arguments: dict[str, Any], output: Any) -> dict[str, Any]:
    """The ADR's provider-visible action-result projection."""
    return {"function": function, "arguments": arguments, "output": output}


def text_of(message: CompiledMessage) -> str:
    """The text of a compiled message (the text part of multimodal content)."""
    content = message.content
    if isinstance(content, str):
        return content
    assert content[0]["type"] == "text"
    text = content[0]["text"]
    assert isinstance(text, str)
    return text


def loaded(message: CompiledMessage) -> dict[str, Any]:
    """A structured instruction's rendered YAML, parsed."""
    data = yaml.safe_load(text_of(message))
    assert isinstance(data, dict), text_of(message)
    return data


def roles(compiled: CompiledChatRequest) -> list[str]:
    return [m.role.value for m in compiled.messages]


# --- observation of purity and independence -------------------------------------------------


def _content_state(content: Any) -> Any:
    if not dataclasses.is_dataclass(content):
        return ("value", content)
    slots = {}
    for f in dataclasses.fields(content):
        # Keep the objects themselves: identity shows a replaced container, equality a
        # changed value, and holding them prevents id reuse.
        slots[f.name] = getattr(content, f.name)
    return (
        "dataclass",
        slots,
        {name: _freeze(value) for name, value in slots.items()},
        getattr(content, "_revision", None),
    )


def _freeze(value: Any) -> Any:
    """A structural copy for equality comparison that does not share containers."""
    if isinstance(value, Mapping):
        return ("map", tuple((repr(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(_freeze(v) for v in value))
    if isinstance(value, set | frozenset):
        return ("set", frozenset(repr(v) for v in value))
    return value


def message_state(msg: Message) -> dict[str, Any]:
    private = getattr(msg, "__pydantic_private__", None) or {}
    return {
        "type": type(msg),
        "to_dict": msg.to_dict(),
        "private": {k: _freeze(v) if isinstance(v, dict) else v for k, v in private.items()},
        "private_objects": dict(private),
        "content_object": msg.content,
        "content": _content_state(msg.content),
        "metadata_object": msg.metadata,
    }


def branch_state(b: Branch) -> dict[str, Any]:
    """Everything compile could change: every stored record (``to_dict()``, private pydantic
    state, content slots and revision), the pile order, both progressions, the system and the
    branch metadata."""
    pile = b.msgs.messages
    metadata = {
        k: ("progression", list(v), id(v)) if isinstance(v, Progression) else _freeze(v)
        for k, v in b.metadata.items()
    }
    system = b.msgs.system
    return {
        "records": {uid: message_state(msg) for uid, msg in pile.collections.items()},
        "pile_order": list(pile.progression),
        "progression": list(b.msgs.progression),
        "view": list(b.progression),
        "system": None if system is None else (system, message_state(system)),
        "metadata": metadata,
        "metadata_keys": list(b.metadata),
    }


def assert_same_state(before: dict[str, Any], after: dict[str, Any]) -> None:
    assert before["records"].keys() == after["records"].keys()
    for uid, old in before["records"].items():
        new = after["records"][uid]
        assert new["type"] is old["type"], uid
        assert new["to_dict"] == old["to_dict"], uid
        assert new["private"] == old["private"], uid
        assert new["content_object"] is old["content_object"], uid
        assert new["metadata_object"] is old["metadata_object"], uid
        assert new["content"][0] == old["content"][0], uid
        if old["content"][0] == "dataclass":
            _, old_slots, old_frozen, old_rev = old["content"]
            _, new_slots, new_frozen, new_rev = new["content"]
            assert new_frozen == old_frozen, uid
            assert new_rev == old_rev, uid
            for name, obj in old_slots.items():
                assert new_slots[name] is obj, (uid, name)
        for key, obj in old["private_objects"].items():
            assert new["private_objects"][key] is obj or new["private_objects"][key] == obj
    for key in ("pile_order", "progression", "view", "metadata", "metadata_keys"):
        assert after[key] == before[key], key
    if before["system"] is None:
        assert after["system"] is None
    else:
        assert after["system"][0] is before["system"][0]
        assert after["system"][1]["to_dict"] == before["system"][1]["to_dict"]


def mutable_ids(obj: Any, _seen: set[int] | None = None) -> set[int]:
    """Ids of every mutable container reachable from ``obj`` (dicts, lists, sets, content
    dataclasses, pydantic messages), following compiled values, mappings and sequences."""
    seen: set[int] = set() if _seen is None else _seen
    found: set[int] = set()

    def walk(value: Any) -> None:
        if id(value) in seen or isinstance(value, str | bytes | int | float | bool | type(None)):
            return
        seen.add(id(value))
        if isinstance(value, dict | list | set):
            found.add(id(value))
        if isinstance(value, Mapping | MappingProxyType):
            for k, v in value.items():
                walk(k)
                walk(v)
        elif isinstance(value, list | tuple | set | frozenset):
            for v in value:
                walk(v)
        elif isinstance(value, CompiledChatRequest):
            walk(value.instruction)
            walk(value.messages)
            walk(value.provider_kwargs)
        elif isinstance(value, CompiledMessage):
            walk(value.content)
        elif isinstance(value, Message):
            found.add(id(value))
            walk(value.content)
            walk(value.metadata)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            found.add(id(value))
            for f in dataclasses.fields(value):
                walk(getattr(value, f.name))

    walk(obj)
    return found
