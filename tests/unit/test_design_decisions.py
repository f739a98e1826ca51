"""design.md §4 (intended differences) and §5 (decisions where the ADR is silent).

Where a decision is tested with its ADR clause, the test lives there:
§4.1-3 test_d2_4_fold / test_d3_envelope; §4.4 and §4.5 test_d2_3_ordering /
test_d2_1_selection; §4.6 test_d2_1_selection; §4.7 test_d2_2_projection; §4.8 test_d1_contracts;
§4.9 test_durable; §4.12 test_d4_provider; §5 "history ending in an instruction"
test_d2_3_ordering; §5 "dict guidance with nothing to fold" test_d2_4_fold; §5 envelope lines
test_d3_envelope. This module holds the rest.
"""

from __future__ import annotations

from typing import Any

import pytest
from lionagi._errors import EmptyOutgoingContentError
from lionagi.libs.schema.minimal_yaml import minimal_yaml

from lionagi_turns import ContextBlock, TurnRequest, compile_chat_request, encode_context_section
from lionagi_turns._envelope import find_context_section

from ._support import (
    add_action_pair,
    add_assistant,
    add_instruction,
    branch,
    loaded,
    result,
    roles,
    text_of,
)

TOOL = {"name": "lookup", "parameters": {"type": "object"}}
BLOCK = ContextBlock(provider_name="catalog", content="retrieved")
SECTION = encode_context_section((BLOCK,))


def _compile(b, blocks=(), progression=None, **current: Any):
    ins = b.msgs.create_instruction(**{"instruction": "now", **current})
    request = TurnRequest(instruction=ins, context_blocks=blocks, progression=progression)
    return compile_chat_request(b, request)


# §4.10 pending action results reach the current instruction even with nothing before them


def test_results_with_no_conversational_record_before_them_reach_the_current_turn() -> None:
    b = branch("policy")
    add_action_pair(b, "lookup", {"q": 1}, "hit")
    compiled = _compile(b)
    assert roles(compiled) == ["user"]
    rendered = loaded(compiled.messages[0])
    assert rendered["Guidance"] == "policy"
    assert rendered["Context"] == [result("lookup", {"q": 1}, "hit")]


def test_results_before_the_first_instruction_fold_into_it() -> None:
    b = branch("policy")
    add_action_pair(b, "lookup", {"q": 1}, "hit")
    add_instruction(b, "q1")
    add_assistant(b, "a1")
    compiled = _compile(b)
    assert loaded(compiled.messages[0])["Context"] == [result("lookup", {"q": 1}, "hit")]
    assert "Context" not in loaded(compiled.messages[-1])


# §4.11 plain_content never swallows policy


def test_plain_content_fold_target_keeps_system_context_and_guidance() -> None:
    b = branch("policy")
    compiled = _compile(
        b, blocks=(BLOCK,), instruction=None, plain_content="raw text", guidance="g"
    )
    text = text_of(compiled.messages[0])
    assert text == "policy\n\n" + SECTION + "\n\ng\n\nraw text"
    assert find_context_section(text) == SECTION


def test_historical_plain_content_fold_target_keeps_the_system() -> None:
    b = branch("policy")
    add_instruction(b, None, plain_content="old raw text")
    add_assistant(b, "a")
    compiled = _compile(b)
    assert text_of(compiled.messages[0]) == "policy\n\nold raw text"


def test_plain_content_receiving_results_shows_them_after_the_text() -> None:
    b = branch()
    add_instruction(b, "q")
    add_assistant(b, "a")
    add_action_pair(b, "lookup", {"q": 1}, "hit")
    compiled = _compile(b, instruction=None, plain_content="raw text", context=["own"])
    expected_results = minimal_yaml({"Context": [result("lookup", {"q": 1}, "hit")]}).strip()
    assert text_of(compiled.messages[-1]) == "raw text\n\n" + expected_results


def test_plain_content_without_fold_or_results_is_sent_as_is() -> None:
    b = branch()
    compiled = _compile(b, instruction=None, plain_content="raw text", guidance="hidden")
    assert compiled.messages[0].content == "raw text"


# §5 equal action results are not appended twice, within one batch too


def test_equal_results_in_one_batch_are_appended_once() -> None:
    b = branch()
    add_instruction(b, "q")
    add_assistant(b, "calling twice")
    add_action_pair(b, "lookup", {"q": 1}, "same")
    add_action_pair(b, "lookup", {"q": 1}, "same")
    add_action_pair(b, "lookup", {"q": 1}, "different")
    context = loaded(_compile(b).messages[-1])["Context"]
    assert context == [
        result("lookup", {"q": 1}, "same"),
        result("lookup", {"q": 1}, "different"),
    ]


# §5 the empty-current-turn guard stays


def test_current_turn_with_text_that_renders_empty_raises() -> None:
    # No lionagi 0.36 input renders a texted instruction empty; the guard pass stands for a
    # renderer that would, so it is checked on its own inputs: the content and its rendering.
    from lionagi_turns._compiler import _guard_current_turn

    content = branch().msgs.create_instruction(instruction="now").content
    with pytest.raises(EmptyOutgoingContentError, match=r"instruction_len=3, plain_content_len=0"):
        _guard_current_turn(content, "")
    with pytest.raises(EmptyOutgoingContentError, match=r"images=0\) but renders empty"):
        _guard_current_turn(content, [])
    _guard_current_turn(content, "Instruction: now")  # a rendering: no refusal


def test_current_turn_without_text_may_render_minimal_content() -> None:
    compiled = _compile(branch(), instruction=None)
    assert compiled.messages[0].content == "{}"  # lionagi renders "{}" for an empty instruction


# D1: the supplied instruction's own call options are ignored, neither rendered nor recorded


def test_instruction_carrying_tool_schemas_renders_only_the_requests_tools() -> None:
    b = branch()
    ins = b.msgs.create_instruction(instruction="now", tool_schemas=TOOL)
    compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    assert "Tools" not in loaded(compiled.messages[0])
    assert list(compiled.instruction.content.tool_schemas) == []
    assert list(ins.content.tool_schemas) == [TOOL]  # the supplied instruction is not changed


def test_instruction_carrying_another_response_format_renders_the_requests() -> None:
    b = branch()
    ins = b.msgs.create_instruction(instruction="now", response_format={"a": "str"})
    compiled = compile_chat_request(b, TurnRequest(instruction=ins, response_format={"b": "int"}))
    expected = b.msgs.create_instruction(instruction="now", response_format={"b": "int"})
    assert compiled.messages[0].content == expected.content.rendered
    assert compiled.instruction.content.response_format is None


def test_instruction_carrying_the_same_options_as_the_request_compiles() -> None:
    b = branch()
    ins = b.msgs.create_instruction(instruction="now", tool_schemas=TOOL)
    compiled = compile_chat_request(b, TurnRequest(instruction=ins, tool_schemas=(TOOL,)))
    assert loaded(compiled.messages[0])["Tools"] == [TOOL]


# §5 envelope on lines of its own "whatever the system text holds": when YAML can carry the
# fold neither as lionagi's emitter writes it nor as a literal block, the fold stands verbatim
# as a section of its own before the YAML sections (docs/architecture.md decision 4).


@pytest.mark.parametrize("system", ["line one\r\nline two", "bell\x07 in policy"])
def test_envelope_keeps_its_lines_with_carriage_returns_or_controls_in_system(system: str) -> None:
    compiled = _compile(branch(system), blocks=(BLOCK,))
    text = text_of(compiled.messages[0])
    assert find_context_section(text) == SECTION
    assert text == f"{system}\n\n{SECTION}\n\nInstruction: now"


@pytest.mark.parametrize("char", ["\x7f", "\x9b", "\x85", "\u2028"])
def test_envelope_is_byte_exact_with_any_character_in_block_content(char: str) -> None:
    block = ContextBlock(provider_name="web", content=f"a{char}b")
    compiled = _compile(branch("policy"), blocks=(block,))
    text = text_of(compiled.messages[0])
    section = encode_context_section((block,))
    assert find_context_section(text) == section
    assert text == f"policy\n\n{section}\n\nInstruction: now"
