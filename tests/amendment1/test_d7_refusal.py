"""D7's refuse posture: the system and instruction sections raise ``SectionBudgetRefused``
before any provider call, carrying all five bound records; bound records stay transient."""

from __future__ import annotations

import json

import pytest

from lionagi_turns.amendment1 import (
    SectionAuthority,
    SectionBudgetRefused,
    SectionBudgets,
    TurnRequest,
    compile_chat_request,
)

from ._support import add_assistant, add_instruction, branch, chars, compile_a1, snapshot

SECTIONS = ("system", "instruction", "history", "context", "tool_results")


def test_every_compiled_request_has_one_record_per_section_in_order() -> None:
    compiled = compile_a1(branch("policy"))
    assert tuple(b.section for b in compiled.bounds) == SECTIONS
    assert [b.authority for b in compiled.bounds] == [
        SectionAuthority.OPERATOR,
        SectionAuthority.RUN_INSTRUCTION,
        SectionAuthority.MATERIAL,
        SectionAuthority.MATERIAL,
        SectionAuthority.MATERIAL,
    ]
    assert [b.posture for b in compiled.bounds] == [
        "refuse", "refuse", "truncate", "skip", "truncate"
    ]
    assert all(b.left_out == () for b in compiled.bounds)


def test_the_system_record_is_built_from_branch_msgs_system() -> None:
    b = branch("policy")
    compiled = compile_a1(b)
    assert compiled.bound("system").kept == (str(b.msgs.system.id),)
    assert compile_a1(branch()).bound("system").kept == ()


def test_a_system_over_its_budget_refuses_with_all_records() -> None:
    b = branch("a long policy text")
    add_instruction(b, "q1")
    add_assistant(b, "a1")
    before = snapshot(b)
    with pytest.raises(SectionBudgetRefused) as info:
        compile_a1(b, budgets=SectionBudgets(system=5, history=0))
    exc = info.value
    assert isinstance(exc, ValueError)
    assert tuple(r.section for r in exc.bounds) == SECTIONS
    assert exc.bounds[0].budget == 5
    assert "system section measures" in str(exc)
    # the other sections' records are the ones the compile would have produced
    assert len(exc.bounds[2].left_out) == 2
    assert snapshot(b) == before


def test_an_instruction_over_its_budget_refuses() -> None:
    b = branch("policy")
    with pytest.raises(SectionBudgetRefused) as info:
        compile_a1(b, "x" * 50, budgets=SectionBudgets(instruction=20))
    assert "instruction section measures" in str(info.value)
    assert info.value.bounds[1].section == "instruction"


def test_the_instruction_bound_does_not_count_the_folded_system_and_context() -> None:
    b = branch("p" * 500)
    own = len("Instruction: now")
    compiled = compile_a1(b, budgets=SectionBudgets(instruction=own))
    assert compiled.bound("instruction").budget == own
    with pytest.raises(SectionBudgetRefused):
        compile_a1(b, budgets=SectionBudgets(instruction=own - 1))


def test_both_refusals_are_named_in_one_error() -> None:
    with pytest.raises(SectionBudgetRefused) as info:
        compile_a1(branch("policy"), budgets=SectionBudgets(system=1, instruction=1))
    assert "system section" in str(info.value) and "instruction section" in str(info.value)


def test_refusal_happens_before_any_provider_call() -> None:
    """The compiler calls nothing but ``measure``; a refused turn never reaches a model."""
    calls: list[str] = []

    def measure(text: str) -> int:
        calls.append(text)
        return len(text)

    b = branch("policy")
    ins = b.msgs.create_instruction(instruction="now")
    with pytest.raises(SectionBudgetRefused):
        compile_chat_request(b, TurnRequest(instruction=ins), budgets=SectionBudgets(system=1),
                             measure=measure)
    assert calls == [b.msgs.system.rendered] == ["policy"]  # only the bounded system section


def test_bound_records_never_reach_the_durable_instruction() -> None:
    b = branch("policy")
    add_instruction(b, "q1")
    add_assistant(b, "a1")
    compiled = compile_a1(b, budgets=SectionBudgets(history=0))
    dumped = json.dumps(compiled.instruction.to_dict(), default=str)
    for word in ("LIONAGI_SECTION_TRUNCATED", "left_out", "bounds", "truncated"):
        assert word not in dumped
    assert compiled.instruction.content.instruction == "now"


def test_unbounded_sections_are_never_measured() -> None:
    def measure(text: str) -> int:
        raise AssertionError("measured an unbounded section")

    b = branch("policy")
    add_instruction(b, "q1")
    add_assistant(b, "a1")
    compile_a1(b, measure=measure)


def test_a_measure_returning_a_non_count_is_refused() -> None:
    with pytest.raises(TypeError, match="measure"):
        compile_a1(branch("p"), budgets=SectionBudgets(system=5), measure=lambda s: "3")


def test_content_measures_text_parts_and_refuses_a_text_that_is_not_a_string() -> None:
    from lionagi_turns.profiles.amendment1._meter import Meter

    meter = Meter(len)
    parts = [{"type": "text", "text": "abc"}, {"type": "image_url", "image_url": "x"}]
    assert meter.content([*parts, {"type": "text", "text": "de"}]) == 5
    assert (meter.content(""), meter.content(None), meter.content("abcd")) == (0, 0, 4)
    with pytest.raises(TypeError, match="a text part of rendered content holds list"):
        meter.content([*parts, {"type": "text", "text": ["de"]}])


def test_the_default_measure_is_the_o200k_count() -> None:
    from lionagi_turns.core.measure import count_tokens

    b = branch("policy text")
    ins = b.msgs.create_instruction(instruction="now")
    n = count_tokens(b.msgs.system.rendered)
    compile_chat_request(b, TurnRequest(instruction=ins), budgets=SectionBudgets(system=n))
    with pytest.raises(SectionBudgetRefused, match=f"measures {n} tokens"):
        compile_chat_request(b, TurnRequest(instruction=ins), budgets=SectionBudgets(system=n - 1))
    assert chars("ab") == 2
