"""ADR-0007 D1 lifetime split: DurableInstructionContent, the record-ready instruction, and
the supplied instruction that is never mutated."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from lionagi.protocols.messages import Instruction
from lionagi.protocols.messages.instruction import InstructionContent
from pydantic import BaseModel

from lionagi_turns import (
    ContextBlock,
    DurableInstructionContent,
    TurnRequest,
    compile_chat_request,
    durable_instruction,
)

from ._support import (
    add_action_pair,
    add_assistant,
    add_instruction,
    branch,
    message_state,
    text_of,
)

SIX = ("instruction", "guidance", "prompt_context", "plain_content", "images", "image_detail")
CALL_KEYS = {"tool_schemas", "response_format", "structure", "_structure_instance"}
TOOL = {"name": "lookup", "parameters": {"type": "object"}}


class Answer(BaseModel):
    text: str


def test_durable_content_has_exactly_the_six_fields_in_adr_order() -> None:
    assert tuple(f.name for f in dataclasses.fields(DurableInstructionContent)) == SIX
    assert "__slots__" in DurableInstructionContent.__dict__
    assert not hasattr(DurableInstructionContent(), "__dict__")


def test_durable_content_defaults_and_per_instance_lists() -> None:
    a, b = DurableInstructionContent(), DurableInstructionContent()
    assert a.to_dict() == {
        "instruction": None,
        "guidance": None,
        "prompt_context": [],
        "plain_content": None,
        "images": [],
        "image_detail": None,
    }
    assert a.prompt_context is not b.prompt_context
    assert a.images is not b.images


def test_from_dict_accepts_and_ignores_legacy_call_keys() -> None:
    legacy = {
        "instruction": "q",
        "guidance": "g",
        "prompt_context": [{"k": 1}],
        "plain_content": None,
        "images": ["data:image/png;base64,AAAA"],
        "image_detail": "low",
        "tool_schemas": [TOOL],
        "response_format": {"answer": "str"},
        "structure": "json",
    }
    content = DurableInstructionContent.from_dict(legacy)
    assert content.to_dict() == {k: legacy[k] for k in SIX}
    assert set(content.to_dict()) == set(SIX)


def test_from_dict_reads_lionagis_serialized_legacy_content() -> None:
    ins = branch().msgs.create_instruction(
        instruction="q", tool_schemas=TOOL, response_format={"answer": "str"}, context=["c"]
    )
    serialized = ins.content.to_dict()
    assert "tool_schemas" in serialized and "response_format" in serialized
    content = DurableInstructionContent.from_dict(serialized)
    assert content.instruction == "q"
    assert content.prompt_context == ["c"]


def test_from_dict_reads_the_context_alias_and_wraps_a_scalar() -> None:
    assert DurableInstructionContent.from_dict({"context": "one"}).prompt_context == ["one"]
    assert DurableInstructionContent.from_dict({"context": [1, 2]}).prompt_context == [1, 2]


def test_from_dict_deep_copies_its_input() -> None:
    data: dict[str, Any] = {"prompt_context": [{"k": [1]}], "images": ["x"]}
    content = DurableInstructionContent.from_dict(data)
    data["prompt_context"][0]["k"].append(2)
    data["images"].append("y")
    assert content.prompt_context == [{"k": [1]}]
    assert content.images == ["x"]


def test_from_dict_rejects_unknown_keys_naming_them() -> None:
    with pytest.raises(ValueError, match=r"unknown instruction content keys \['bogus', 'zz'\]"):
        DurableInstructionContent.from_dict({"instruction": "q", "bogus": 1, "zz": 2})


@pytest.mark.parametrize("data", ["instruction", ["instruction"], None])
def test_from_dict_refuses_what_is_not_a_mapping(data: Any) -> None:
    with pytest.raises(TypeError) as raised:
        DurableInstructionContent.from_dict(data)
    assert str(raised.value) == (
        f"serialized instruction content must be a mapping of field names, got "
        f"{type(data).__name__}; pass the content dict (e.g. Instruction.content.to_dict())"
    )


def test_from_dict_names_unknown_keys_of_any_type() -> None:
    with pytest.raises(ValueError, match=r"unknown instruction content keys \['x', 1\]"):
        DurableInstructionContent.from_dict({"instruction": "q", "x": 1, 1: 2})


def test_invalid_image_detail_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"image_detail must be one of .* got 'ultra'"):
        DurableInstructionContent(image_detail="ultra")  # type: ignore[arg-type]


def test_prompt_context_must_be_a_list() -> None:
    with pytest.raises(TypeError, match="prompt_context must be a list, got str"):
        DurableInstructionContent(prompt_context="x")  # type: ignore[arg-type]


def test_images_must_be_a_list() -> None:
    with pytest.raises(TypeError, match="images must be a list, got tuple"):
        DurableInstructionContent(images=("x",))  # type: ignore[arg-type]


def test_to_instruction_content_carries_no_call_options() -> None:
    source = InstructionContent(
        instruction="q", tool_schemas=[TOOL], response_format=Answer, guidance="g"
    )
    content = DurableInstructionContent.from_instruction(source).to_instruction_content()
    assert content.tool_schemas == []
    assert content.response_format is None
    assert content._structure_instance is None
    assert (content.instruction, content.guidance) == ("q", "g")


def test_durable_instruction_keeps_identity_fields_and_drops_call_options() -> None:
    b = branch()
    source = b.msgs.create_instruction(
        instruction="q",
        tool_schemas=TOOL,
        response_format=Answer,
        sender="user",
        recipient=b.id,
    )
    source.metadata["extra"] = {"tag": ["a"]}
    before = message_state(source)
    copy = durable_instruction(source)
    assert copy is not source and isinstance(copy, Instruction)
    assert (copy.id, copy.created_at, copy.sender, copy.recipient) == (
        source.id,
        source.created_at,
        source.sender,
        source.recipient,
    )
    assert copy.metadata == source.metadata
    assert copy.metadata is not source.metadata
    assert copy.metadata["extra"] is not source.metadata["extra"]
    assert copy.content.tool_schemas == [] and copy.content.response_format is None
    assert "Tools" not in copy.content.rendered  # rendering the copy touches only the copy
    after = message_state(source)
    assert after["to_dict"] == before["to_dict"]
    assert after["private"] == before["private"]
    assert after["content_object"] is before["content_object"]


# --- compiled.instruction ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "response_format", [{"answer": "str"}, Answer, Answer(text="x")], ids=["dict", "cls", "inst"]
)
def test_compiled_instruction_is_record_ready(response_format: Any) -> None:
    b = branch("policy")
    add_instruction(b, "q")
    add_assistant(b, "a")
    ins = b.msgs.create_instruction(
        instruction="now",
        guidance="g",
        context=["c"],
        images=["data:image/png;base64,AAAA"],
        image_detail="low",
        tool_schemas=TOOL,
        response_format=response_format,
        sender="user",
        recipient=b.id,
    )
    ins.metadata["extra"] = {"trace": "t-1"}
    request = TurnRequest(
        instruction=ins,
        tool_schemas=(TOOL,),
        response_format=response_format,
        context_blocks=(ContextBlock(provider_name="catalog", content="retrieved"),),
        provider_kwargs={"temperature": 0},
    )
    compiled = compile_chat_request(b, request)
    record = compiled.instruction
    assert isinstance(record, Instruction) and record is not ins
    assert record.id == ins.id
    assert record.created_at == ins.created_at
    assert record.sender == ins.sender and record.recipient == ins.recipient
    assert record.metadata == ins.metadata and record.metadata is not ins.metadata
    content = record.to_dict()["content"]
    assert set(content) & CALL_KEYS == set()
    assert content == {
        "instruction": "now",
        "guidance": "g",
        "prompt_context": ["c"],
        "images": ["data:image/png;base64,AAAA"],
        "image_detail": "low",
    }
    rendered = text_of(compile_chat_request(b, TurnRequest(instruction=record)).messages[-1])
    for section in ("Tools:", "ResponseSchema:", "ResponseFormat:"):
        assert section not in rendered
    assert "temperature" not in str(record.to_dict())
    assert "retrieved" not in str(record.to_dict())


def test_the_supplied_instruction_is_never_mutated() -> None:
    b = branch("policy")
    add_instruction(b, "q")
    add_assistant(b, "a")
    ins = b.msgs.create_instruction(
        instruction="now",
        guidance={"style": "terse"},
        context=[{"doc": 1}],
        images=["https://example.com/x.png"],
        tool_schemas=TOOL,
        response_format={"answer": "str"},
    )
    add_action_pair(b, "f", {"x": 1}, "out")  # pending: appended to the current turn's view
    before = message_state(ins)
    revision = ins.content._revision
    compiled = compile_chat_request(
        b,
        TurnRequest(
            instruction=ins,
            tool_schemas=(TOOL,),
            response_format={"answer": "str"},
            context_blocks=(ContextBlock(provider_name="p", content="v"),),
        ),
    )
    to_dict_after = ins.to_dict()
    after = message_state(ins)
    assert to_dict_after == before["to_dict"]
    assert after["private"] == before["private"]
    assert after["content_object"] is before["content_object"]
    assert after["content"][2] == before["content"][2]
    assert ins.content._revision == revision
    assert compiled.instruction.content is not ins.content
    assert "output: out" in text_of(compiled.messages[-1])
    assert ins.content.prompt_context == [{"doc": 1}]


@pytest.mark.parametrize("source", ["an instruction", None], ids=["str", "none"])
def test_durable_instruction_refuses_what_is_not_an_instruction(source: Any) -> None:
    with pytest.raises(TypeError) as raised:
        durable_instruction(source)
    assert str(raised.value) == (
        f"durable_instruction needs a lionagi Instruction with InstructionContent, got a "
        f"{type(source).__name__}; build one with branch.msgs.create_instruction(instruction=...)"
    )


def _containers(value: Any, found: dict[int, Any]) -> dict[int, Any]:
    """Every list and dict reachable from ``value`` (through lists, dicts and tuples), by id."""
    if isinstance(value, list | dict):
        found[id(value)] = value
    if isinstance(value, dict):
        for item in value.values():
            _containers(item, found)
    elif isinstance(value, list | tuple):
        for item in value:
            _containers(item, found)
    return found


class _Note:
    """An untracked value: its instruction is deep-copied the long way."""

    def __init__(self, rows: list[int]) -> None:
        self.rows = rows

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Note) and other.rows == self.rows

    __hash__ = None  # type: ignore[assignment]


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "no-fast-path"])
@pytest.mark.parametrize(
    "context, tracked",
    [
        ([{"doc": "a", "rows": [1, [2, {"k": "v"}]]}, "plain", 3, None], True),
        ([{"doc": "a", "pair": ([1], {"k": [2]})}], False),  # a tuple holding lists
        ([{"doc": "a", "note": _Note([1, 2])}], False),  # an arbitrary object
    ],
    ids=["tracked", "tuple", "object"],
)
def test_the_durable_copy_shares_no_container_with_its_source(
    context: list[Any], tracked: bool, fast: bool
) -> None:
    from lionagi_turns import no_fast_path
    from lionagi_turns.memo.track import trackable

    b = branch()
    source = b.msgs.create_instruction(instruction="q", guidance="g", context=context)
    expected = DurableInstructionContent.from_instruction(source.content)
    if fast:
        copy = durable_instruction(source)
    else:
        with no_fast_path():
            copy = durable_instruction(source)
    assert trackable(source.content) is tracked  # which copy durable_instruction makes
    assert list(copy.content.prompt_context) == list(source.content.prompt_context)
    assert list(copy.content.prompt_context) == expected.prompt_context
    shared = set(_containers(source.content.prompt_context, {})) & set(
        _containers(copy.content.prompt_context, {})
    )
    assert shared == set()
    copy.content.prompt_context[0]["doc"] = "changed"
    assert source.content.prompt_context[0]["doc"] == "a"
    if "note" in context[0]:
        note = source.content.prompt_context[0]["note"]
        assert copy.content.prompt_context[0]["note"] is not note
