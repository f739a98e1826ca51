"""ADR-0007 D2 step 5: render immutable provider-neutral messages."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from lionagi.protocols.messages import AssistantResponse, Instruction, MessageRole
from pydantic import BaseModel

from lionagi_turns import CompiledMessage, TurnRequest, compile_chat_request

from ._support import add_assistant, add_instruction, branch, include, loaded, roles, text_of


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
