"""D2 §2/§5 (amended by D7): action results form the ``tool_results`` section, one entry per
target instruction, rendered after its content as a canonical JSON block; D7's truncate
posture applies to the section's entries independently of the instructions."""

from __future__ import annotations

import json

from lionagi.ln import json_dumps

from lionagi_turns.amendment1 import LeftOut, SectionBudgets, marker

from ._support import (
    add_action_pair,
    add_assistant,
    add_instruction,
    all_text,
    branch,
    compile_a1,
    text_of,
)


def _block(results) -> str:
    return (
        "LIONAGI_TOOL_RESULTS_JSON\n"
        + json_dumps(results, sort_keys=True)
        + "\nEND_LIONAGI_TOOL_RESULTS_JSON"
    )


R1 = {"function": "f", "arguments": {"x": 1}, "output": "one"}
R2 = {"function": "g", "arguments": {"y": 2}, "output": "two"}


def _react_history():
    b = branch("policy")
    add_instruction(b, "q1")
    add_assistant(b, "calling")
    _, first = add_action_pair(b, "f", {"x": 1}, "one")
    add_instruction(b, "q2")
    add_assistant(b, "calling again")
    _, second = add_action_pair(b, "g", {"y": 2}, "two")
    return b, first, second


def test_results_render_after_their_instruction_never_in_its_prompt_context() -> None:
    b, first, second = _react_history()
    compiled = compile_a1(b)
    q2 = text_of(compiled.messages[2])
    assert q2 == "Instruction: q2\n\n" + _block([R1])
    current = text_of(compiled.messages[-1])
    assert current == "Instruction: now\n\n" + _block([R2])
    assert "Context:" not in all_text(compiled)
    assert compiled.bound("tool_results").kept == (str(first.id), str(second.id))


def test_the_block_is_a_parseable_canonical_json_array_on_three_lines() -> None:
    b, *_ = _react_history()
    text = text_of(compile_a1(b).messages[-1])
    lines = text.split("\n")
    assert lines[-3] == "LIONAGI_TOOL_RESULTS_JSON" and lines[-1] == "END_LIONAGI_TOOL_RESULTS_JSON"
    assert json.loads(lines[-2]) == [R2]
    assert lines[-2] == json.dumps([R2], sort_keys=True, separators=(",", ":"))


def test_no_compiled_message_is_added_for_results() -> None:
    b, *_ = _react_history()
    roles = [m.role.value for m in compile_a1(b).messages]
    assert roles == ["user", "assistant", "user", "assistant", "user"]


def test_an_entry_skips_results_equal_to_one_in_it_or_in_the_instruction_context() -> None:
    b = branch()
    add_instruction(b, "q1")
    add_assistant(b, "calling")
    _, a = add_action_pair(b, "f", {"x": 1}, "one")
    _, dup = add_action_pair(b, "f", {"x": 1}, "one")
    _, c = add_action_pair(b, "g", {"y": 2}, "two")
    compiled = compile_a1(b, context=[R2])
    current = text_of(compiled.messages[-1])
    assert current.endswith(_block([R1]))
    # the duplicates still render (once), so they are kept, not left out
    assert compiled.bound("tool_results").kept == (str(a.id), str(dup.id), str(c.id))
    assert compiled.bound("tool_results").left_out == ()


def test_multimodal_content_gets_a_trailing_text_part() -> None:
    b = branch()
    add_instruction(b, "q1")
    add_assistant(b, "calling")
    add_action_pair(b, "f", {"x": 1}, "one")
    ins = b.msgs.create_instruction(instruction="look", images=["https://example.com/a.png"])
    from lionagi_turns.amendment1 import TurnRequest, compile_chat_request

    compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    content = compiled.messages[-1].content
    assert isinstance(content, list)
    assert content[0]["type"] == "text" and content[1]["type"] == "image_url"
    assert content[-1] == {"type": "text", "text": _block([R1])}


def test_truncation_keeps_the_newest_results_and_names_the_older_ones() -> None:
    b, first, second = _react_history()
    size = len(json_dumps(R2, sort_keys=True))
    compiled = compile_a1(b, budgets=SectionBudgets(tool_results=size))
    bound = compiled.bound("tool_results")
    assert bound.kept == (str(second.id),)
    assert bound.left_out == (
        LeftOut(str(first.id), "truncated", len(json_dumps(R1, sort_keys=True))),
    )
    q2 = text_of(compiled.messages[2])
    # the entry that lost everything keeps the marker alone, where its block would be
    assert q2 == "Instruction: q2\n\n" + marker("tool_results", 1, "truncated")
    assert text_of(compiled.messages[-1]).endswith(_block([R2]))
    assert "one" not in all_text(compiled)


def test_the_marker_sits_one_line_above_a_block_that_lost_results() -> None:
    b = branch()
    add_instruction(b, "q1")
    add_assistant(b, "calling")
    add_action_pair(b, "f", {"x": 1}, "one")
    add_action_pair(b, "g", {"y": 2}, "two")
    size = len(json_dumps(R2, sort_keys=True))
    compiled = compile_a1(b, budgets=SectionBudgets(tool_results=size))
    assert text_of(compiled.messages[-1]) == (
        "Instruction: now\n\n" + marker("tool_results", 1, "truncated") + "\n" + _block([R2])
    )


def test_tool_results_bound_is_independent_of_the_history_bound() -> None:
    b, first, second = _react_history()
    # history keeps everything; tool results keep nothing
    compiled = compile_a1(b, budgets=SectionBudgets(tool_results=0))
    assert compiled.bound("history").left_out == ()
    assert [e.name for e in compiled.bound("tool_results").left_out] == [
        str(first.id), str(second.id)
    ]


def test_a_plain_content_instruction_gets_its_block_after_the_plain_text() -> None:
    b = branch()
    add_instruction(b, "q1")
    add_assistant(b, "calling")
    add_action_pair(b, "f", {"x": 1}, "one")
    from lionagi_turns.amendment1 import TurnRequest, compile_chat_request

    ins = b.msgs.create_instruction(plain_content="raw text")
    compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    assert text_of(compiled.messages[-1]) == "raw text\n\n" + _block([R1])
