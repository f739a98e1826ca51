"""ADR-0007 D2 step 3: conversation ordering and assistant-run merging."""

from __future__ import annotations

import pytest

from lionagi_turns import HistoryError

from ._support import (
    add_action_pair,
    add_assistant,
    add_base_message,
    add_instruction,
    add_stray_system,
    branch,
    compile_now,
    loaded,
    roles,
    text_of,
)

CONSECUTIVE = "Consecutive instructions require an intervening assistant response"
FIRST_RULE = "First message in progression must be an Instruction or System"


def test_consecutive_assistant_responses_merge_with_exactly_two_newlines() -> None:
    b = branch()
    add_instruction(b, "q")
    add_assistant(b, "one")
    add_assistant(b, "two\n")
    add_assistant(b, "three")
    compiled = compile_now(b)
    assert roles(compiled) == ["user", "assistant", "user"]
    assert compiled.messages[1].content == "one\n\ntwo\n\n\nthree"


def test_assistant_run_separated_by_ignored_records_still_merges() -> None:
    b = branch()
    add_instruction(b, "q")
    add_assistant(b, "one")
    add_base_message(b)
    add_stray_system(b)
    add_assistant(b, "two")
    compiled = compile_now(b)
    assert [m.content for m in compiled.messages[1:2]] == ["one\n\ntwo"]


def test_adjacent_instructions_raise_the_adr_error_naming_both() -> None:
    b = branch()
    i1 = add_instruction(b, "q1")
    i2 = add_instruction(b, "q2")
    add_assistant(b, "a")
    with pytest.raises(ValueError) as raised:
        compile_now(b)
    err = raised.value
    assert isinstance(err, HistoryError)
    assert str(err) == CONSECUTIVE  # exactly the ADR's sentence; details are notes
    assert err.defects[0].positions == (0, 1)
    assert err.defects[0].ids == (str(i1.id), str(i2.id))
    assert err.__notes__ == [
        f"instruction at position 1 (id {i2.id}) directly follows the instruction at "
        f"position 0 (id {i1.id})",
        "next step: await lionagi_turns.mark_unanswered_turns(branch) records an assistant "
        "marker after each unanswered instruction (install() does so before every call); or "
        "record an assistant response between them, or leave one out of the progression.",
    ]


def test_instructions_separated_only_by_action_records_are_adjacent() -> None:
    b = branch()
    add_instruction(b, "q1")
    add_action_pair(b)
    i2 = add_instruction(b, "q2")
    add_assistant(b, "a")
    with pytest.raises(HistoryError) as raised:
        compile_now(b)
    assert str(raised.value) == CONSECUTIVE
    assert raised.value.__notes__[0].startswith(f"instruction at position 3 (id {i2.id})")


def test_every_consecutive_pair_is_reported() -> None:
    b = branch()
    add_instruction(b, "q1")
    add_instruction(b, "q2")
    add_assistant(b, "a")
    add_instruction(b, "q3")
    add_instruction(b, "q4")
    with pytest.raises(HistoryError) as raised:
        compile_now(b)
    assert [d.positions for d in raised.value.defects] == [(0, 1), (3, 4)]
    assert len(raised.value.__notes__) == 3  # one per defect, then the next step


def test_a_third_adjacent_instruction_is_said_to_follow_the_second() -> None:
    """The unretained middle instruction sits between the first and the third: each defect
    names the instruction directly before it."""
    b = branch()
    i1 = add_instruction(b, "q1")
    i2 = add_instruction(b, "q2")
    i3 = add_instruction(b, "q3")
    add_assistant(b, "a")
    with pytest.raises(HistoryError) as raised:
        compile_now(b)
    assert [(d.positions, d.ids) for d in raised.value.defects] == [
        ((0, 1), (str(i1.id), str(i2.id))),
        ((1, 2), (str(i2.id), str(i3.id))),
    ]
    assert raised.value.__notes__[1] == (
        f"instruction at position 2 (id {i3.id}) directly follows the instruction at "
        f"position 1 (id {i2.id})"
    )


def test_systemful_history_starting_with_an_assistant_raises_the_adr_error() -> None:
    b = branch("policy")
    a0 = add_assistant(b, "hello first")
    add_instruction(b, "q")
    with pytest.raises(ValueError) as raised:
        compile_now(b)
    err = raised.value
    assert isinstance(err, HistoryError)
    assert str(err) == FIRST_RULE
    assert err.defects[0].positions == (1,)  # position 0 is the system record
    assert f"position 1 (id {a0.id})" in err.__notes__[0]
    assert err.__notes__[-1] == "next step: Start the progression at an instruction."


def test_first_instruction_rule_applies_to_retained_content_only() -> None:
    b = branch("policy")
    add_action_pair(b)  # not retained content
    add_base_message(b)  # not retained content
    add_instruction(b, "q")
    add_assistant(b, "a")
    assert roles(compile_now(b)) == ["user", "assistant", "user"]


def test_systemless_history_may_start_with_an_assistant() -> None:
    b = branch()
    add_assistant(b, "greeting")
    add_instruction(b, "q")
    add_assistant(b, "a")
    assert roles(compile_now(b)) == ["assistant", "user", "assistant", "user"]


def test_without_retained_history_the_current_instruction_is_first() -> None:
    b = branch("policy")
    compiled = compile_now(b)
    assert roles(compiled) == ["user"]
    assert loaded(compiled.messages[0]) == {"Guidance": "policy", "Instruction": "now"}


def test_current_instruction_is_appended_exactly_once_after_history() -> None:
    b = branch()
    add_instruction(b, "q")
    add_assistant(b, "a")
    compiled = compile_now(b, instruction="unique current text")
    texts = [text_of(m) for m in compiled.messages]
    assert sum("unique current text" in t for t in texts) == 1
    assert texts[-1] == "Instruction: unique current text"


def test_history_ending_in_an_instruction_is_allowed() -> None:
    b = branch("policy")
    add_instruction(b, "q1")
    add_assistant(b, "a1")
    add_instruction(b, "unanswered")
    compiled = compile_now(b)
    assert roles(compiled) == ["user", "assistant", "user", "user"]
    assert loaded(compiled.messages[2]) == {"Instruction": "unanswered"}
    assert loaded(compiled.messages[3]) == {"Instruction": "now"}


def test_history_of_only_an_instruction_is_allowed() -> None:
    b = branch()
    add_instruction(b, "unanswered")
    assert roles(compile_now(b)) == ["user", "user"]


def test_an_ordering_defect_is_raised_before_any_later_pass_runs() -> None:
    # D2 pass order: step 3 validates before the ReAct step, the fold (D3 section) and the
    # render (D2 §5) run, so a value those passes would refuse is never reached.
    b = branch("policy")
    add_instruction(b, "q1", context=["shared", {1, 2}])  # a set: the render pass refuses it
    add_instruction(b, "q2")
    add_assistant(b, "a")
    with pytest.raises(HistoryError) as raised:
        compile_now(b, react_context=["shared"], context=["shared"], images=["../etc/passwd"])
    assert str(raised.value) == CONSECUTIVE
