"""ADR-0007 D1: the typed contracts (fields, frozen/slots, read-only kwargs, deep copies,
the reserved key) and the invalid shapes each constructor refuses."""

from __future__ import annotations

import copy
import dataclasses
import re
from types import MappingProxyType
from typing import Any
from uuid import uuid4

import pytest
from lionagi import Branch
from lionagi.protocols.messages import MessageRole
from pydantic import BaseModel

from lionagi_turns import (
    CompiledChatRequest,
    CompiledMessage,
    ContextBlock,
    TurnRequest,
    compile_chat_request,
)

from ._support import add_assistant, add_instruction, branch, loaded, mutable_ids

RESERVED = "provider_kwargs must not contain reserved key 'messages'"


class Answer(BaseModel):
    text: str


@pytest.fixture
def ins():  # a fresh, unrecorded instruction
    return branch().msgs.create_instruction(instruction="now")


def _request(ins: Any, **kwargs: Any) -> TurnRequest:
    return TurnRequest(instruction=ins, **kwargs)


# --- exact fields, frozen, slots ---------------------------------------------------------------

EXPECTED_FIELDS = {
    ContextBlock: ("provider_name", "content"),
    CompiledMessage: ("role", "content"),
    TurnRequest: (
        "instruction",
        "progression",
        "tool_schemas",
        "response_format",
        "structure",
        "context_blocks",
        "provider_kwargs",
    ),
    CompiledChatRequest: ("instruction", "messages", "provider_kwargs"),
}


@pytest.mark.parametrize("cls", list(EXPECTED_FIELDS), ids=lambda c: c.__name__)
def test_contract_has_exactly_the_adr_fields_frozen_and_slotted(cls: type) -> None:
    assert tuple(f.name for f in dataclasses.fields(cls)) == EXPECTED_FIELDS[cls]
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen is True
    assert "__slots__" in cls.__dict__
    assert set(cls.__slots__) == set(EXPECTED_FIELDS[cls])


def _instances(ins: Any) -> list[Any]:
    block = ContextBlock(provider_name="catalog", content="value")
    message = CompiledMessage(role=MessageRole.USER, content="hi")
    request = _request(ins, context_blocks=(block,))
    compiled = CompiledChatRequest(instruction=ins, messages=(message,), provider_kwargs={})
    return [block, message, request, compiled]


def test_assignment_to_any_field_raises_frozen_instance_error(ins: Any) -> None:
    for obj in _instances(ins):
        for f in dataclasses.fields(obj):
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(obj, f.name, None)


def test_instances_have_no_instance_dict(ins: Any) -> None:
    for obj in _instances(ins):
        assert not hasattr(obj, "__dict__"), type(obj).__name__
        with pytest.raises((AttributeError, TypeError)):
            obj.extra = 1


def test_turn_request_defaults(ins: Any) -> None:
    request = _request(ins)
    assert request.instruction is ins
    assert request.progression is None
    assert request.tool_schemas == ()
    assert request.response_format is None
    assert request.structure is None
    assert request.context_blocks == ()
    assert isinstance(request.provider_kwargs, MappingProxyType)
    assert dict(request.provider_kwargs) == {}


def test_default_provider_kwargs_is_per_instance_and_read_only(ins: Any) -> None:
    a, b = _request(ins), _request(ins)
    assert a.provider_kwargs is not b.provider_kwargs
    with pytest.raises(TypeError):
        a.provider_kwargs["temperature"] = 0  # type: ignore[index]


def test_provider_kwargs_are_a_read_only_mapping_proxy(ins: Any) -> None:
    request = _request(ins, provider_kwargs={"temperature": 0.2})
    assert isinstance(request.provider_kwargs, MappingProxyType)
    assert dict(request.provider_kwargs) == {"temperature": 0.2}
    with pytest.raises(TypeError):
        request.provider_kwargs["temperature"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        del request.provider_kwargs["temperature"]  # type: ignore[attr-defined]


# --- no caller container is retained ------------------------------------------------------------


def test_request_deep_copies_caller_containers(ins: Any) -> None:
    kwargs = {"temperature": 0.1, "stop": ["END"], "extra": {"a": [1]}}
    schema = {"name": "lookup", "parameters": {"type": "object", "properties": {}}}
    schemas = [schema]
    response_format = {"answer": "str"}
    progression = [uuid4(), uuid4()]
    blocks = [ContextBlock(provider_name="catalog", content="v")]
    request = _request(
        ins,
        progression=progression,
        tool_schemas=schemas,
        response_format=response_format,
        context_blocks=blocks,
        provider_kwargs=kwargs,
    )
    expected_progression = tuple(progression)
    kwargs["stop"].append("STOP")
    kwargs["extra"]["a"].append(2)
    kwargs["new"] = True
    schema["parameters"]["properties"]["q"] = {"type": "string"}
    schemas.append({"name": "other"})
    response_format["extra"] = "int"
    progression.append(uuid4())
    blocks.append(ContextBlock(provider_name="memory", content="w"))

    assert dict(request.provider_kwargs) == {
        "temperature": 0.1,
        "stop": ["END"],
        "extra": {"a": [1]},
    }
    assert request.tool_schemas == (
        {"name": "lookup", "parameters": {"type": "object", "properties": {}}},
    )
    assert request.response_format == {"answer": "str"}
    assert request.progression == expected_progression
    assert request.context_blocks == (ContextBlock(provider_name="catalog", content="v"),)
    assert isinstance(request.progression, tuple)
    assert isinstance(request.tool_schemas, tuple)
    assert isinstance(request.context_blocks, tuple)


def test_response_format_model_class_is_kept_and_instance_is_copied(ins: Any) -> None:
    assert _request(ins, response_format=Answer).response_format is Answer
    model = Answer(text="x")
    request = _request(ins, response_format=model)
    assert request.response_format == model
    assert request.response_format is not model


def test_compiled_request_holds_no_caller_container() -> None:
    b = branch("policy")
    add_instruction(b, "first")
    add_assistant(b, "reply")
    kwargs = {"temperature": 0.0, "stop": ["END"], "nested": {"k": [1, 2]}}
    schema = {"name": "lookup", "parameters": {"type": "object"}}
    response_format = {"answer": "str"}
    ins = b.msgs.create_instruction(
        instruction="now",
        context=[{"doc": [1, 2]}],
        images=["data:image/png;base64,AAAA"],
    )
    ins.metadata["extra"] = {"tag": ["a"]}
    request = TurnRequest(
        instruction=ins,
        tool_schemas=(schema,),
        response_format=response_format,
        provider_kwargs=kwargs,
    )
    compiled = compile_chat_request(b, request)

    caller = mutable_ids(
        [
            kwargs,
            schema,
            response_format,
            ins,
            request.tool_schemas,
            request.response_format,
            request.provider_kwargs,
        ]
    )
    stored = mutable_ids(list(b.msgs.messages.collections.values()))
    reachable = mutable_ids(compiled)
    assert reachable.isdisjoint(caller)
    assert reachable.isdisjoint(stored)

    before = [(m.role, m.content) for m in compiled.messages]
    kwargs["stop"].append("X")
    kwargs["nested"]["k"].append(3)
    schema["parameters"]["type"] = "array"
    response_format["answer"] = "int"
    ins.content.prompt_context.append("late")
    assert dict(compiled.provider_kwargs) == {
        "temperature": 0.0,
        "stop": ["END"],
        "nested": {"k": [1, 2]},
    }
    assert [(m.role, m.content) for m in compiled.messages] == before
    assert "late" not in str(compiled.instruction.to_dict())


def test_compiled_provider_kwargs_are_read_only_and_equal_to_the_request() -> None:
    ins = branch().msgs.create_instruction(instruction="now")
    request = TurnRequest(instruction=ins, provider_kwargs={"temperature": 0.3})
    compiled = compile_chat_request(branch(), request)
    assert isinstance(compiled.provider_kwargs, MappingProxyType)
    assert dict(compiled.provider_kwargs) == {"temperature": 0.3}
    with pytest.raises(TypeError):
        compiled.provider_kwargs["temperature"] = 1  # type: ignore[index]


# --- the reserved key ----------------------------------------------------------------------------


def test_the_reserved_key_is_the_adrs_error_even_beside_a_non_string_key(ins: Any) -> None:
    with pytest.raises(ValueError) as raised:
        _request(ins, provider_kwargs={1: "x", "messages": []})
    assert str(raised.value) == RESERVED


def test_turn_request_reserved_messages_key_raises_the_exact_adr_error(ins: Any) -> None:
    with pytest.raises(ValueError) as raised:
        _request(ins, provider_kwargs={"messages": [], "temperature": 0})
    assert str(raised.value) == RESERVED


def test_compiled_chat_request_reserved_messages_key_raises_the_exact_adr_error(ins: Any) -> None:
    with pytest.raises(ValueError) as raised:
        CompiledChatRequest(instruction=ins, messages=(), provider_kwargs={"messages": []})
    assert str(raised.value) == RESERVED


# --- invalid shapes: one pytest.raises each -------------------------------------------------------


def test_instruction_must_be_an_instruction_not_text() -> None:
    with pytest.raises(
        TypeError,
        match=r"TurnRequest\.instruction must be a lionagi Instruction"
        r", got str",
    ):
        TurnRequest(instruction="hello")  # type: ignore[arg-type]


def test_progression_as_a_string_is_rejected(ins: Any) -> None:
    with pytest.raises(
        TypeError,
        match=r"TurnRequest\.progression must be None or a sequence "
        r"of UUIDs, got a single str",
    ):
        _request(ins, progression=str(uuid4()))


def test_progression_with_non_uuid_items_names_each_position(ins: Any) -> None:
    good = uuid4()
    with pytest.raises(TypeError) as raised:
        _request(ins, progression=(good, "abc", good, 7))
    text = str(raised.value)
    assert "[1]='abc'" in text
    assert "[3]=7" in text
    assert "[0]" not in text and "[2]" not in text


class _Unshowable:
    """A value whose repr raises: an error naming it must still be the intended error."""

    def __repr__(self) -> str:
        raise RuntimeError("no repr")

    __hash__ = object.__hash__


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"progression": (_Unshowable(),)}, r"TurnRequest\.progression holds non-UUID items at "
         r"\[0\]=<_Unshowable instance at 0x[0-9a-f]+>; convert ids"),
        ({"progression": ("x" * 10_000,)}, r"TurnRequest\.progression holds non-UUID items at "
         r"\[0\]='x{36}\.\.\.x{37}'; convert ids"),
        ({"structure": _Unshowable()}, r"TurnRequest\.structure must be a Structure subclass, a "
         r"string or None, got <_Unshowable instance at 0x[0-9a-f]+>$"),
        ({"provider_kwargs": {_Unshowable(): 1}}, r"TurnRequest\.provider_kwargs keys must be "
         r"strings; got <_Unshowable instance at 0x[0-9a-f]+>$"),
    ],
    ids=["progression-repr-raises", "progression-huge-item", "structure", "kwargs-key"],
)
def test_a_refused_value_is_shown_bounded_even_when_its_repr_raises(
    ins: Any, kwargs: dict[str, Any], expected: str
) -> None:
    with pytest.raises(TypeError) as raised:
        _request(ins, **kwargs)
    assert re.match(expected, str(raised.value)), str(raised.value)


def test_tool_schemas_as_a_single_dict_is_rejected(ins: Any) -> None:
    with pytest.raises(TypeError, match=r"TurnRequest\.tool_schemas .* got a single dict"):
        _request(ins, tool_schemas={"name": "lookup"})


def test_tool_schemas_with_non_dict_items_names_the_positions(ins: Any) -> None:
    with pytest.raises(TypeError, match=r"TurnRequest\.tool_schemas\[1\], \[2\] must be dicts"):
        _request(ins, tool_schemas=({"name": "a"}, "b", 3))


def test_response_format_of_unsupported_kind_is_rejected(ins: Any) -> None:
    with pytest.raises(TypeError, match=r"TurnRequest\.response_format .* got int"):
        _request(ins, response_format=5)


def test_structure_of_unsupported_kind_is_rejected(ins: Any) -> None:
    with pytest.raises(TypeError, match=r"TurnRequest\.structure .* got 42"):
        _request(ins, structure=42)


def test_context_blocks_as_a_single_mapping_is_rejected(ins: Any) -> None:
    with pytest.raises(TypeError, match=r"TurnRequest\.context_blocks .* single dict"):
        _request(ins, context_blocks={"provider_name": "p", "content": "c"})


def test_context_blocks_as_a_single_block_is_rejected(ins: Any) -> None:
    block = ContextBlock(provider_name="catalog", content="v")
    with pytest.raises(TypeError, match=r"TurnRequest\.context_blocks .* single ContextBlock"):
        _request(ins, context_blocks=block)


def test_context_blocks_with_non_block_items_names_the_positions(ins: Any) -> None:
    block = ContextBlock(provider_name="catalog", content="v")
    with pytest.raises(TypeError, match=r"TurnRequest\.context_blocks\[1\] \(dict\)"):
        _request(ins, context_blocks=(block, {"provider_name": "p", "content": "c"}))


def test_provider_kwargs_that_are_not_a_mapping_are_rejected(ins: Any) -> None:
    with pytest.raises(
        TypeError,
        match=r"TurnRequest\.provider_kwargs must be a mapping .* "
        r"got list",
    ):
        _request(ins, provider_kwargs=[("temperature", 0)])


def test_provider_kwargs_with_non_string_keys_names_the_keys(ins: Any) -> None:
    with pytest.raises(
        TypeError,
        match=r"TurnRequest\.provider_kwargs keys must be strings; "
        r"got 1",
    ):
        _request(ins, provider_kwargs={1: "x", "ok": 2})


def test_compiled_chat_request_messages_must_be_compiled_messages(ins: Any) -> None:
    good = CompiledMessage(role=MessageRole.USER, content="x")
    with pytest.raises(
        TypeError,
        match=r"CompiledChatRequest\.messages\[1\] are not "
        r"CompiledMessage",
    ):
        CompiledChatRequest(
            instruction=ins, messages=(good, {"role": "user", "content": "x"}), provider_kwargs={}
        )


def test_tool_schemas_that_are_not_iterable_are_rejected(ins: Any) -> None:
    with pytest.raises(TypeError, match=r"TurnRequest\.tool_schemas .* got a single int"):
        _request(ins, tool_schemas=3)


def test_context_blocks_that_are_not_iterable_are_rejected(ins: Any) -> None:
    with pytest.raises(TypeError, match=r"TurnRequest\.context_blocks .* single int"):
        _request(ins, context_blocks=3)


# --- The supplied instruction's call options; ordered, copyable request values (D1)

LOOKUP_TOOL = {"name": "lookup", "parameters": {"type": "object"}}
PNG = "data:image/png;base64,iVBORw0KGgo="


def test_instruction_carrying_tool_schemas_renders_only_the_requests_tools() -> None:
    b = branch()
    ins = b.msgs.create_instruction(instruction="now", tool_schemas=LOOKUP_TOOL)
    compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    assert "Tools" not in loaded(compiled.messages[0])
    assert list(compiled.instruction.content.tool_schemas) == []
    assert list(ins.content.tool_schemas) == [LOOKUP_TOOL]  # the supplied one is not changed


def test_instruction_carrying_another_response_format_renders_the_requests() -> None:
    b = branch()
    ins = b.msgs.create_instruction(instruction="now", response_format={"a": "str"})
    compiled = compile_chat_request(b, TurnRequest(instruction=ins, response_format={"b": "int"}))
    expected = b.msgs.create_instruction(instruction="now", response_format={"b": "int"})
    assert compiled.messages[0].content == expected.content.rendered
    assert compiled.instruction.content.response_format is None


def test_instruction_carrying_the_same_options_as_the_request_compiles() -> None:
    b = branch()
    ins = b.msgs.create_instruction(instruction="now", tool_schemas=LOOKUP_TOOL)
    compiled = compile_chat_request(b, TurnRequest(instruction=ins, tool_schemas=(LOOKUP_TOOL,)))
    assert loaded(compiled.messages[0])["Tools"] == [LOOKUP_TOOL]


@pytest.mark.parametrize("name", ["progression", "context_blocks", "tool_schemas"])
@pytest.mark.parametrize("kind", [set, frozenset])
def test_unordered_collections_are_refused_by_name(name: str, kind: type) -> None:
    b = Branch(system="s")
    ins = b.msgs.create_instruction(instruction="q")
    with pytest.raises(TypeError, match=rf"TurnRequest\.{name} must be an ordered sequence"):
        TurnRequest(instruction=ins, **{name: kind()})


def test_a_dict_is_not_taken_for_its_keys_as_a_progression() -> None:
    b = Branch(system="s")
    ins = b.msgs.create_instruction(instruction="q")
    with pytest.raises(
        TypeError, match=r"TurnRequest\.progression must be None or a sequence of UUIDs, got a "
        r"single dict"
    ):
        TurnRequest(instruction=ins, progression={ins.id: 1})  # type: ignore[arg-type]


def test_deepcopy_of_a_request_and_a_compiled_request_is_equal_and_independent() -> None:
    b = Branch(system="s")
    ins = b.msgs.create_instruction(instruction="q", images=[PNG])
    request = TurnRequest(
        instruction=ins,
        provider_kwargs={"temperature": 0.2, "extra": {"k": [1]}},
        context_blocks=(ContextBlock("p", "v"),),
    )
    clone = copy.deepcopy(request)
    assert clone == request and clone.instruction is not request.instruction
    compiled = compile_chat_request(b, request)
    twin = copy.deepcopy(compiled)
    assert twin.messages == compiled.messages
    assert twin.messages[-1].content is not compiled.messages[-1].content
    assert dict(twin.provider_kwargs) == {"temperature": 0.2, "extra": {"k": [1]}}
    assert twin.provider_kwargs["extra"] is not compiled.provider_kwargs["extra"]


def test_a_provider_kwarg_that_cannot_be_copied_is_named() -> None:
    import threading

    b = Branch(system="s")
    ins = b.msgs.create_instruction(instruction="q")
    with pytest.raises(TypeError, match=r"provider_kwargs\['lock'\] \(lock\) cannot be"):
        TurnRequest(instruction=ins, provider_kwargs={"temperature": 0, "lock": threading.Lock()})
