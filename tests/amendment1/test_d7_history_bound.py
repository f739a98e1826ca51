"""D2 §6 step 1 (amended by D7): the history bound keeps or drops whole turns, newest kept;
every record of a dropped turn is a ``truncated`` entry; the marker sits on its own line at
the top of the history section."""

from __future__ import annotations

import itertools

import pytest

from lionagi_turns.amendment1 import LeftOut, SectionBudgets, marker

from ._support import (
    add_action_pair,
    add_assistant,
    add_instruction,
    after_fold,
    all_text,
    branch,
    compile_a1,
    snapshot,
    text_of,
)


def _three_turns(system: str | None = "policy"):
    b = branch(system)
    t1 = [add_instruction(b, "q1"), add_assistant(b, "a1")]
    req, resp = add_action_pair(b, "f", {"x": 1}, "out")
    t2 = [add_instruction(b, "q2"), add_assistant(b, "a2")]
    t3 = [add_instruction(b, "q3"), add_assistant(b, "a3")]
    return b, t1, [req, resp, *t2], t3


# "Instruction: qN" is 15 characters, "aN" 2: each turn measures 17.
TURN = len("Instruction: q1") + len("a1")


def test_unbounded_history_keeps_everything_with_an_empty_left_out() -> None:
    b, t1, t2, t3 = _three_turns()
    compiled = compile_a1(b)
    history = compiled.bound("history")
    assert history.budget is None and history.left_out == ()
    assert history.kept == tuple(str(m.id) for m in (t1[0], t1[1], t2[2], t2[3], *t3))
    assert "LIONAGI_SECTION_TRUNCATED" not in all_text(compiled)


def test_newest_whole_turns_that_fit_are_kept_older_turns_dropped() -> None:
    b, t1, t2, t3 = _three_turns()
    compiled = compile_a1(b, budgets=SectionBudgets(history=2 * TURN))
    history = compiled.bound("history")
    assert history.kept == tuple(str(m.id) for m in (t2[2], t2[3], *t3))
    assert history.left_out == (
        LeftOut(str(t1[0].id), "truncated", len("Instruction: q1")),
        LeftOut(str(t1[1].id), "truncated", 2),
    )
    assert "q1" not in all_text(compiled) and "a1" not in all_text(compiled)


def test_a_dropped_turn_takes_its_action_records_with_it() -> None:
    b, t1, t2, _ = _three_turns()
    compiled = compile_a1(b, budgets=SectionBudgets(history=TURN))
    names = [e.name for e in compiled.bound("history").left_out]
    # turn 2 = the action request and response before q2, q2, a2
    assert names == [str(m.id) for m in (*t1, *t2)]
    assert all(e.reason == "truncated" for e in compiled.bound("history").left_out)
    request_entry = compiled.bound("history").left_out[2]
    assert request_entry.tokens is None  # an action request never renders
    # the dropped turn's tool_results entry is never built
    assert compiled.bound("tool_results").kept == ()
    assert compiled.bound("tool_results").left_out == ()
    assert "LIONAGI_TOOL_RESULTS_JSON" not in all_text(compiled)


def test_the_bound_stops_at_the_first_turn_that_does_not_fit() -> None:
    b = branch("policy")
    add_instruction(b, "q1")
    add_assistant(b, "a1")
    big = add_instruction(b, "q2" * 50)
    add_assistant(b, "a2")
    add_instruction(b, "q3")
    add_assistant(b, "a3")
    compiled = compile_a1(b, budgets=SectionBudgets(history=2 * TURN))
    # turn 1 would fit the room left, but the kept turns stay adjacent: it is dropped too.
    dropped = [e.name for e in compiled.bound("history").left_out]
    assert str(big.id) in dropped and len(dropped) == 4


def test_marker_is_its_own_line_at_the_top_of_the_first_history_message() -> None:
    b, *_ = _three_turns()
    compiled = compile_a1(b, budgets=SectionBudgets(history=TURN))
    whole = text_of(compiled.messages[0])
    first = after_fold(whole)
    line = marker("history", 6, "truncated")
    assert line == "[LIONAGI_SECTION_TRUNCATED section=history left_out=6 reason=truncated]"
    assert first.split("\n")[0] == line
    assert first.startswith(line + "\n\n")
    assert first.count("LIONAGI_SECTION_TRUNCATED") == 1
    # the fold (the system text) leads the message; the marker heads the history after it
    assert whole.startswith("Guidance: policy\n" + line) and "Instruction: q3" in first


def test_a_budget_of_zero_keeps_no_history_and_the_marker_leads_the_current_turn() -> None:
    b, *_ = _three_turns()
    compiled = compile_a1(b, budgets=SectionBudgets(history=0))
    assert [m.role.value for m in compiled.messages] == ["user"]
    whole = text_of(compiled.messages[0])
    text = after_fold(whole)
    assert text.startswith(marker("history", 8, "truncated") + "\n\n")
    assert "Instruction: now" in text and whole.startswith("Guidance: policy\n")
    assert compiled.bound("history").kept == ()


def test_kept_history_still_passes_the_ordering_rules() -> None:
    b = branch("policy")
    for i in range(6):
        add_instruction(b, f"q{i}")
        add_assistant(b, f"a{i}")
    for budget in range(0, 6 * TURN + 1, 7):
        compiled = compile_a1(b, budgets=SectionBudgets(history=budget))
        roles = [m.role.value for m in compiled.messages]
        assert roles[0] == "user" and roles[-1] == "user"
        assert all(x != y for x, y in itertools.pairwise(roles))


def test_a_lead_turn_without_instruction_is_a_turn_of_its_own() -> None:
    b = branch()  # systemless: history may start with an assistant response
    lead = add_assistant(b, "hello")
    add_instruction(b, "q1")
    add_assistant(b, "a1")
    compiled = compile_a1(b, budgets=SectionBudgets(history=TURN))
    assert compiled.bound("history").left_out == (LeftOut(str(lead.id), "truncated", 5),)


def test_history_measures_instructions_with_the_react_items_in() -> None:
    b = branch("policy")
    first = add_instruction(b, "q1", context=["BIG" * 20])
    add_assistant(b, "a1")
    size = len(text_of_durable(first)) + 2
    # the ReAct step would drop the item from a later instruction; the bound measured it in
    kept = compile_a1(b, budgets=SectionBudgets(history=size), react_context=["BIG" * 20],
                      context=["BIG" * 20])
    assert kept.bound("history").left_out == ()
    dropped = compile_a1(b, budgets=SectionBudgets(history=size - 1),
                         react_context=["BIG" * 20], context=["BIG" * 20])
    assert len(dropped.bound("history").left_out) == 2


def text_of_durable(message) -> str:
    from lionagi_turns.memo.renders import render_durable

    rendered = render_durable(message)
    assert isinstance(rendered, str)
    return rendered


@pytest.mark.parametrize("budget", [0, TURN, 3 * TURN])
def test_compile_never_changes_the_branch(budget: int) -> None:
    b, *_ = _three_turns()
    before = snapshot(b)
    compile_a1(b, budgets=SectionBudgets(history=budget))
    assert snapshot(b) == before


def test_all_history_left_out_is_named_in_the_one_record() -> None:
    b, *_ = _three_turns()
    compiled = compile_a1(b, budgets=SectionBudgets(history=0))
    assert len(compiled.bound("history").left_out) == 8
    assert "q1" not in all_text(compiled)


def test_a_hostile_record_is_refused_as_the_default_profile_refuses_it() -> None:
    from lionagi_turns import TurnRequest as SeedRequest
    from lionagi_turns import compile_chat_request as seed_compile

    b = branch("policy")
    add_instruction(b, "q1")
    bad = add_assistant(b, "a1")
    bad.content.assistant_response = {"not": "text"}  # type: ignore[assignment]
    with pytest.raises(TypeError) as seed:
        seed_compile(b, SeedRequest(instruction=b.msgs.create_instruction(instruction="now")))
    for budget in (None, 0, 100):
        with pytest.raises(TypeError) as ours:
            compile_a1(b, budgets=SectionBudgets(history=budget))
        assert str(ours.value) == str(seed.value)


def test_on_multimodal_content_the_marker_joins_the_leading_text_part() -> None:
    b = branch("policy")
    add_instruction(b, "q1")
    add_assistant(b, "a1")
    add_instruction(b, "look", images=["https://example.com/a.png"])
    add_assistant(b, "seen")
    compiled = compile_a1(b, budgets=SectionBudgets(history=len("Instruction: look") + 4))
    first = compiled.messages[0].content
    assert isinstance(first, list) and first[1]["type"] == "image_url"
    assert after_fold(first[0]["text"]).startswith(marker("history", 2, "truncated") + "\n\n")
