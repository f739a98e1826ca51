"""ADR-0007 D2 step 5: render immutable provider-neutral messages."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from lionagi._errors import EmptyOutgoingContentError
from lionagi.libs.schema.minimal_yaml import minimal_yaml as lionagi_minimal_yaml
from lionagi.protocols.messages import AssistantResponse, Instruction, MessageRole
from pydantic import BaseModel

from lionagi_turns import (
    CompiledMessage,
    ContextBlock,
    TurnRequest,
    compile_chat_request,
    encode_context_section,
)
from lionagi_turns.core.envelope import find_context_section
from lionagi_turns.memo.yaml import minimal_yaml as fast_minimal_yaml

from ._support import (
    add_action_pair,
    add_assistant,
    add_instruction,
    assert_same_state,
    branch,
    branch_state,
    compile_now,
    include,
    loaded,
    result,
    roles,
    text_of,
)


class Answer(BaseModel):
    text: str


TOOL = {"name": "lookup", "description": "find things", "parameters": {"type": "object"}}
CALL_SECTIONS = ("Tools", "ResponseSchema", "ResponseFormat")
RESPONSE_FORMATS = {
    "dict": {"text": "str"},
    "model_class": Answer,
    "model_instance": Answer(text="example"),
}


def _current(b, **content: Any) -> Instruction:
    return b.msgs.create_instruction(instruction="now", **content)


def test_instructions_are_user_and_assistant_responses_are_assistant() -> None:
    b = branch()
    add_instruction(b, "q")
    add_assistant(b, "a")
    compiled = compile_chat_request(b, TurnRequest(instruction=_current(b)))
    assert [m.role for m in compiled.messages] == [
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.USER,
    ]
    assert all(isinstance(m.role, MessageRole) for m in compiled.messages)


def test_historical_instruction_renders_with_lionagis_structured_renderer() -> None:
    b = branch()
    stored = add_instruction(b, "q", guidance="g", context=[{"k": [1, 2]}, "text"])
    add_assistant(b, "a")
    compiled = compile_chat_request(b, TurnRequest(instruction=_current(b)))
    assert compiled.messages[0].content == stored.content.rendered


@pytest.mark.parametrize("kind", list(RESPONSE_FORMATS))
def test_current_instruction_shows_tools_and_response_sections(kind: str) -> None:
    b = branch()
    response_format = RESPONSE_FORMATS[kind]
    request = TurnRequest(
        instruction=_current(b), tool_schemas=(TOOL,), response_format=response_format
    )
    rendered = loaded(compile_chat_request(b, request).messages[-1])
    assert rendered["Tools"] == [TOOL]
    assert "ResponseFormat" in rendered
    # lionagi shows a JSON schema for model formats and none for a dict format.
    assert ("ResponseSchema" in rendered) is (kind != "dict")
    if kind != "dict":
        assert rendered["ResponseSchema"]["properties"] == {
            "text": {"title": "Text", "type": "string"}
        }


@pytest.mark.parametrize("kind", list(RESPONSE_FORMATS))
def test_current_instruction_renders_exactly_as_lionagi_with_the_same_options(kind: str) -> None:
    b = branch()
    response_format = RESPONSE_FORMATS[kind]
    request = TurnRequest(
        instruction=_current(b), tool_schemas=(TOOL,), response_format=response_format
    )
    reference = _current(b, tool_schemas=TOOL, response_format=response_format)
    assert compile_chat_request(b, request).messages[-1].content == reference.content.rendered


@pytest.mark.parametrize("kind", list(RESPONSE_FORMATS))
def test_historical_instructions_never_show_call_sections(kind: str) -> None:
    b = branch()
    add_instruction(b, "old", tool_schemas=TOOL, response_format=RESPONSE_FORMATS[kind])
    add_assistant(b, "a")
    add_instruction(b, "older call options too", tool_schemas=TOOL)
    add_assistant(b, "a2")
    request = TurnRequest(
        instruction=_current(b), tool_schemas=(TOOL,), response_format=RESPONSE_FORMATS[kind]
    )
    compiled = compile_chat_request(b, request)
    for message in compiled.messages[:-1]:
        for section in CALL_SECTIONS:
            assert f"{section}:" not in text_of(message)
    assert "Tools" in loaded(compiled.messages[-1])


def test_current_instruction_without_call_options_shows_no_call_sections() -> None:
    b = branch()
    rendered = loaded(compile_chat_request(b, TurnRequest(instruction=_current(b))).messages[0])
    assert rendered == {"Instruction": "now"}


def test_images_render_as_a_text_part_followed_by_image_url_parts() -> None:
    b = branch()
    add_instruction(b, "look", images=["data:image/png;base64,AAAA"], image_detail="low")
    add_assistant(b, "seen")
    current = _current(b, images=["https://example.com/a.png", "QkFTRTY0"], image_detail="high")
    compiled = compile_chat_request(b, TurnRequest(instruction=current))
    assert compiled.messages[0].content == [
        {"type": "text", "text": "Instruction: look"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "low"}},
    ]
    assert compiled.messages[-1].content == [
        {"type": "text", "text": "Instruction: now"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png", "detail": "high"}},
        {
            "type": "image_url",
            "image_url": {"url": "data:image/jpeg;base64,QkFTRTY0", "detail": "high"},
        },
    ]


def test_falsy_assistant_rendering_is_omitted() -> None:
    b = branch()
    add_instruction(b, "q")
    empty = include(b, AssistantResponse(content={"assistant_response": ""}))
    assert empty.content.rendered == ""
    compiled = compile_chat_request(b, TurnRequest(instruction=_current(b)))
    assert roles(compiled) == ["user", "user"]
    assert all(m.content for m in compiled.messages)


def test_compiled_message_holds_only_role_and_content() -> None:
    b = branch("policy")
    stored = add_instruction(b, "q")
    reply = add_assistant(b, "a")
    compiled = compile_chat_request(b, TurnRequest(instruction=_current(b)))
    assert all(isinstance(m, CompiledMessage) for m in compiled.messages)
    for message in compiled.messages:
        assert {f.name for f in dataclasses.fields(message)} == {"role", "content"}
        text = str(message.content)
        for uid in (stored.id, reply.id, compiled.instruction.id, b.id):
            assert str(uid) not in text
        assert "lion_class" not in text


def test_messages_are_a_tuple_in_final_content_order() -> None:
    b = branch()
    for i in range(3):
        add_instruction(b, f"q{i}")
        add_assistant(b, f"a{i}")
    compiled = compile_chat_request(b, TurnRequest(instruction=_current(b)))
    assert isinstance(compiled.messages, tuple)
    assert [text_of(m) for m in compiled.messages] == [
        "Instruction: q0",
        "a0",
        "Instruction: q1",
        "a1",
        "Instruction: q2",
        "a2",
        "Instruction: now",
    ]


# --- plain_content, the empty-turn guard, YAML bytes and refused images (D2 §5)

ONE_BLOCK = ContextBlock(provider_name="catalog", content="retrieved")
ONE_SECTION = encode_context_section((ONE_BLOCK,))


def test_plain_content_fold_target_keeps_system_context_and_guidance() -> None:
    b = branch("policy")
    compiled = compile_now(
        b, blocks=(ONE_BLOCK,), instruction=None, plain_content="raw text", guidance="g"
    )
    text = text_of(compiled.messages[0])
    assert text == "policy\n\n" + ONE_SECTION + "\n\ng\n\nraw text"
    assert find_context_section(text) == ONE_SECTION


def test_historical_plain_content_fold_target_keeps_the_system() -> None:
    b = branch("policy")
    add_instruction(b, None, plain_content="old raw text")
    add_assistant(b, "a")
    compiled = compile_now(b)
    assert text_of(compiled.messages[0]) == "policy\n\nold raw text"


def test_plain_content_receiving_results_shows_them_after_the_text() -> None:
    b = branch()
    add_instruction(b, "q")
    add_assistant(b, "a")
    add_action_pair(b, "lookup", {"q": 1}, "hit")
    compiled = compile_now(b, instruction=None, plain_content="raw text", context=["own"])
    folded = [result("lookup", {"q": 1}, "hit")]
    expected_results = lionagi_minimal_yaml({"Context": folded}).strip()
    assert text_of(compiled.messages[-1]) == "raw text\n\n" + expected_results


def test_plain_content_without_fold_or_results_is_sent_as_is() -> None:
    b = branch()
    compiled = compile_now(b, instruction=None, plain_content="raw text", guidance="hidden")
    assert compiled.messages[0].content == "raw text"


def test_current_turn_with_text_that_renders_empty_raises() -> None:
    # No lionagi 0.36 input renders a texted instruction empty; the guard pass stands for a
    # renderer that would, so it is checked on its own inputs: the content and its rendering.
    from lionagi_turns.core.pipeline import _guard_current_turn

    content = branch().msgs.create_instruction(instruction="now").content
    with pytest.raises(EmptyOutgoingContentError, match=r"instruction_len=3, plain_content_len=0"):
        _guard_current_turn(content, "")
    with pytest.raises(EmptyOutgoingContentError, match=r"images=0\) but renders empty"):
        _guard_current_turn(content, [])
    _guard_current_turn(content, "Instruction: now")  # a rendering: no refusal


def test_current_turn_without_text_may_render_minimal_content() -> None:
    compiled = compile_now(branch(), instruction=None)
    assert compiled.messages[0].content == "{}"  # lionagi renders "{}" for an empty instruction


@pytest.mark.parametrize("length", [121, 122, 123, 125, 127, 128])
@pytest.mark.parametrize("tail", ["", "é"])
def test_fast_yaml_matches_lionagi_for_keys_of_123_to_127_characters(
    length: int, tail: str
) -> None:
    # PyYAML counts a key's characters plus its 5-character "!!str" tag and writes keys of 123+
    # characters as explicit "? key"; libyaml allowed up to 127 bytes, so the fast path wrote a
    # simple key where lionagi writes a complex one.
    key = "k" * (length - len(tail)) + tail
    for value in ({key: 1}, [{key: "v"}], {"Context": [{key: {"a": 1}}]}):
        assert fast_minimal_yaml(value) == lionagi_minimal_yaml(value)


def test_compiled_history_with_a_long_context_key_renders_as_lionagi_renders_it() -> None:
    b = branch("Sys")
    context = [{"q" * 124: 1}]
    add_instruction(b, "first", context=context)
    add_assistant(b)
    ins = b.msgs.create_instruction(instruction="now", context=context)
    compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    rendered = [m.content for m in compiled.messages]
    assert rendered[1] == "answer"
    expected = lionagi_minimal_yaml({"Instruction": "now", "Context": context}).strip()
    assert rendered[2] == expected
    assert "? " + "q" * 124 in rendered[2]


@pytest.mark.parametrize(
    "url", ["http:///no-host.png", "file:///etc/passwd", "data:text/html;base64,PHNjcmlwdD4="]
)
def test_refused_history_image_names_the_record_position_and_id(url: str) -> None:
    b = branch("Sys")
    add_instruction(b, "first")
    add_assistant(b)
    bad = add_instruction(b, "second", images=[url])
    add_assistant(b)
    before = branch_state(b)
    ins = b.msgs.create_instruction(instruction="now")
    with pytest.raises(ValueError, match=rf"history position 3, instruction id {bad.id}"):
        compile_chat_request(b, TurnRequest(instruction=ins))
    assert_same_state(before, branch_state(b))


def test_refused_current_image_names_the_current_instruction() -> None:
    b = branch("Sys")
    ins = b.msgs.create_instruction(instruction="now", images=["file:///etc/passwd"])
    with pytest.raises(ValueError, match=rf"(?s)^Image URL .*current instruction, id {ins.id}"):
        compile_chat_request(b, TurnRequest(instruction=ins))
