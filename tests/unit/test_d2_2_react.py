"""ADR-0007 D2 §2 (amended): within one of ReAct's later calls, the caller's context once.

Clause by clause: "of the kept instructions, the first that carries those items keeps them",
"every later rendered instruction carrying them, the current one included, renders without
them", "when the history section keeps no carrier, the current instruction keeps them", "the
unit is the prompt-context item", "only this request's ephemeral copies change"; plus
lionagi 0.36's equality for items and the keyword's absence being the ADR's behaviour.
"""

from __future__ import annotations

from typing import Any

import pytest
from lionagi.operations.chat._prepare import _react_context

from lionagi_turns import TurnRequest, compile_chat_request
from lionagi_turns.characterize.legacy import legacy_messages

from ._support import (
    add_action_pair,
    add_assistant,
    add_instruction,
    branch,
    branch_state,
    compile_now,
    loaded,
)

CTX = {"doc": "caller context", "size": 3}


def _contexts(compiled) -> list[Any]:
    return [loaded(m).get("Context") for m in compiled.messages if m.role.value == "user"]


def _rounds(b, n: int, context: list[Any]) -> None:
    for i in range(n):
        add_instruction(b, f"round {i}", context=list(context))
        add_assistant(b, f"reply {i}")


def test_without_the_keyword_every_instruction_renders_its_own_context() -> None:
    b = branch()
    _rounds(b, 2, [CTX])
    ins = b.msgs.create_instruction(instruction="now", context=[CTX])
    plain = compile_chat_request(b, TurnRequest(instruction=ins))
    assert _contexts(plain) == [[CTX], [CTX], [CTX]]
    for items in (None, []):
        again = compile_chat_request(b, TurnRequest(instruction=ins), react_context=items)
        assert again.messages == plain.messages


def test_the_first_kept_carrier_keeps_the_items_and_later_ones_render_without() -> None:
    b = branch()
    _rounds(b, 3, [CTX])
    compiled = compile_now(b, react_context=[CTX], context=[CTX])
    assert _contexts(compiled) == [[CTX], None, None, None]


def test_the_current_instruction_keeps_them_when_no_history_instruction_carries_them() -> None:
    b = branch()
    _rounds(b, 2, ["something else"])
    compiled = compile_now(b, react_context=[CTX], context=[CTX])
    assert _contexts(compiled) == [["something else"], ["something else"], [CTX]]


def test_kept_means_in_the_view_an_instruction_outside_it_does_not_count() -> None:
    b = branch()
    _rounds(b, 2, [CTX])
    later = list(b.msgs.progression)[2:]  # the first round is not in the view
    ins = b.msgs.create_instruction(instruction="now", context=[CTX])
    compiled = compile_chat_request(
        b, TurnRequest(instruction=ins, progression=tuple(later)), react_context=[CTX]
    )
    assert _contexts(compiled) == [[CTX], None]


def test_the_unit_is_the_item_other_items_of_a_later_carrier_stay() -> None:
    b = branch()
    add_instruction(b, "round 0", context=[CTX])
    add_assistant(b, "reply")
    add_instruction(b, "round 1", context=["own note", CTX, "own tail"])
    add_assistant(b, "reply")
    compiled = compile_now(b, react_context=[CTX], context=[CTX, "current note"])
    assert _contexts(compiled) == [[CTX], ["own note", "own tail"], ["current note"]]


def test_an_instruction_missing_one_item_is_not_a_carrier() -> None:
    b = branch()
    _rounds(b, 1, [CTX, "second"])
    add_instruction(b, "partial", context=[CTX])
    add_assistant(b, "reply")
    compiled = compile_now(b, react_context=[CTX, "second"], context=[CTX, "second"])
    assert _contexts(compiled) == [[CTX, "second"], [CTX], None]


def test_items_compare_as_lionagi_renders_them_true_is_not_one() -> None:
    b = branch()
    _rounds(b, 1, [True])
    add_instruction(b, "ones", context=[1])
    add_assistant(b, "reply")
    compiled = compile_now(b, react_context=[True], context=[True])
    assert _contexts(compiled) == [[True], [1], None]


def test_a_repeated_item_is_carried_only_by_an_instruction_holding_it_as_often() -> None:
    b = branch()
    _rounds(b, 1, ["x", "x"])
    add_instruction(b, "once", context=["x"])
    add_assistant(b, "reply")
    compiled = compile_now(b, react_context=["x", "x"], context=["x", "x", "x"])
    assert _contexts(compiled) == [["x", "x"], ["x"], ["x"]]


def test_a_plain_content_instruction_is_not_a_carrier() -> None:
    b = branch()
    add_instruction(b, None, plain_content="raw text", context=[CTX])
    add_assistant(b, "reply")
    compiled = compile_now(b, react_context=[CTX], context=[CTX])
    assert compiled.messages[0].content == "raw text"
    assert loaded(compiled.messages[-1])["Context"] == [CTX]  # no kept carrier: current keeps


def test_results_still_fold_into_an_instruction_the_step_shortened() -> None:
    b = branch()
    _rounds(b, 1, [CTX])
    add_instruction(b, "round 1", context=[CTX])
    add_assistant(b, "calling")
    add_action_pair(b, "lookup", {"q": 1}, "found")
    compiled = compile_now(b, react_context=[CTX], context=[CTX])
    result = {"function": "lookup", "arguments": {"q": 1}, "output": "found"}
    assert _contexts(compiled) == [[CTX], None, [result]]


def test_only_the_requests_copies_change() -> None:
    b = branch()
    _rounds(b, 2, [CTX])
    before = branch_state(b)
    ins = b.msgs.create_instruction(instruction="now", context=[CTX])
    compiled = compile_chat_request(b, TurnRequest(instruction=ins), react_context=[CTX])
    assert branch_state(b) == before
    assert list(ins.content.prompt_context) == [CTX]
    assert list(compiled.instruction.content.prompt_context) == [CTX]  # the record keeps it


def test_an_item_that_cannot_be_rendered_disables_the_step() -> None:
    b = branch()
    _rounds(b, 2, [CTX])
    unrenderable = object()
    compiled = compile_now(b, react_context=[unrenderable], context=[CTX])
    assert _contexts(compiled) == [[CTX], [CTX], [CTX]]


@pytest.mark.parametrize("bad", ["a string", {"a": 1}, 3])
def test_react_context_must_be_a_sequence_of_items(bad: Any) -> None:
    with pytest.raises(TypeError, match=r"react_context must be a sequence of context items"):
        compile_now(branch(), react_context=bad)


def test_same_messages_as_lionagi_within_a_react_call() -> None:
    # lionagi 0.36 with its _react_context set, and the compiler with react_context, on one
    # systemless branch (no fold): the same provider messages.
    b = branch()
    _rounds(b, 3, [CTX, "extra"])
    ins = b.msgs.create_instruction(instruction="now", context=[CTX, "extra"])
    request = TurnRequest(instruction=ins)
    token = _react_context.set([CTX, "extra"])
    try:
        expected = legacy_messages(b, request)
    finally:
        _react_context.reset(token)
    compiled = compile_chat_request(b, request, react_context=[CTX, "extra"])
    assert [{"role": m.role.value, "content": m.content} for m in compiled.messages] == expected
