"""The input ceiling (``amendment1.InputCeiling``): a whole-request bound mapped onto the section
budgets, stepped truncation down to a low-water mark, the current round's results never
dropped, the first kept turn recorded on the compiled instruction and read back after a reload.

A loop here is real lionagi records: each round compiles, records the compiled instruction (as
lionagi does after a successful call), an answer and one tool call with its result.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from lionagi import Branch

import lionagi_turns
from lionagi_turns.amendment1 import (
    CEILING_KEY,
    CompiledChatRequest,
    InputCeiling,
    SectionBudgetRefused,
    SectionBudgets,
    TurnRequest,
    compile_chat_request,
    marker,
)
from lionagi_turns.cli._load import parse_branch

from ._support import add_action_pair, add_assistant, after_fold, branch, chars, snapshot, text_of

SYSTEM = "You are the dispatcher. " * 10


def next_request(b: Branch, text: str, ceiling: InputCeiling | None, **kw: Any
                 ) -> CompiledChatRequest:
    ins = b.msgs.create_instruction(instruction=text)
    return compile_chat_request(b, TurnRequest(instruction=ins), measure=chars, ceiling=ceiling,
                                **kw)


def record_round(b: Branch, compiled: CompiledChatRequest, i: int, output: str) -> None:
    b.msgs.add_message(instruction=compiled.instruction)
    add_assistant(b, f"answer {i} " + "a" * 30)
    add_action_pair(b, "lookup", {"round": i}, output)


def loop(b: Branch, rounds: int, ceiling: InputCeiling | None, output: str = "o" * 120
         ) -> list[CompiledChatRequest]:
    out = []
    for i in range(rounds):
        compiled = next_request(b, f"round {i}", ceiling)
        out.append(compiled)
        record_round(b, compiled, i, output)
    return out


def used(compiled: CompiledChatRequest) -> int:
    return compiled.instruction.metadata[CEILING_KEY]["used"]


# ------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("tokens", [0, -3])
def test_a_ceiling_at_or_below_zero_is_refused_naming_the_value(tokens: int) -> None:
    with pytest.raises(ValueError, match=rf"InputCeiling.tokens must be > 0, got {tokens}"):
        InputCeiling(tokens)


def test_a_low_water_mark_above_the_ceiling_is_refused_naming_both() -> None:
    with pytest.raises(ValueError, match="low_water 900 is above the ceiling of 800 tokens"):
        InputCeiling(800, low_water=900)
    with pytest.raises(ValueError, match="low_water must be > 0, got 0"):
        InputCeiling(800, low_water=0)
    with pytest.raises(TypeError):
        InputCeiling(True)  # type: ignore[arg-type]


def test_a_system_larger_than_the_ceiling_is_refused_before_any_output_branch_unchanged() -> None:
    b = branch(system=SYSTEM)
    loop(b, 2, None)
    before = snapshot(b)
    with pytest.raises(SectionBudgetRefused) as info:
        next_request(b, "go", InputCeiling(100))
    assert re.fullmatch(
        r"section budget refused: the system section measures \d+ tokens, over its budget of 100",
        str(info.value),
    )
    assert any("InputCeiling.tokens (now 100)" in n for n in info.value.__notes__)
    assert snapshot(b) == before


def test_a_ceiling_with_history_or_tool_results_budgets_is_refused() -> None:
    b = branch()
    with pytest.raises(ValueError, match="an InputCeiling sets the history and tool_results"):
        next_request(b, "go", InputCeiling(500), budgets=SectionBudgets(history=10))
    lionagi_turns.uninstall()
    with pytest.raises(ValueError, match="an InputCeiling sets the history"):
        lionagi_turns.install(profile="amendment1", budgets=SectionBudgets(tool_results=5),
                              ceiling=InputCeiling(500))
    assert not lionagi_turns.is_installed()
    with pytest.raises(ValueError, match="applies to profile='amendment1' only"):
        lionagi_turns.install(ceiling=InputCeiling(500))


# ------------------------------------------------------------------------- stepped truncation


def test_every_request_of_a_long_loop_is_under_the_ceiling_and_the_text_fits_too() -> None:
    ceiling = InputCeiling(1500, low_water=900)
    b = branch(system=SYSTEM)
    compiled = loop(b, 40, ceiling)
    assert max(used(c) for c in compiled) <= 1500
    # the profile's measure covers the text sent (chars: exact and additive)
    assert max(sum(len(text_of(m)) for m in c.messages) for c in compiled) <= 1500
    unbounded = loop(branch(system=SYSTEM), 40, None)
    assert sum(len(text_of(m)) for m in unbounded[-1].messages) > 3 * 1500


def test_between_drop_steps_the_prefix_and_the_marker_stay_the_same() -> None:
    b = branch(system=SYSTEM)
    compiled = loop(b, 40, InputCeiling(1500, low_water=900))
    steps = [i for i, c in enumerate(compiled) if c.instruction.metadata[CEILING_KEY]["stepped"]]
    assert len(steps) >= 3
    assert steps[1] - steps[0] > 2  # several requests between two steps
    for i in range(1, len(compiled)):
        before, after = compiled[i - 1].messages, compiled[i].messages
        same = list(after[: len(before) - 1]) == list(before[:-1])
        assert same is (i not in steps), i
    last = compiled[-1]
    left = last.bound("history").left_out
    assert after_fold(text_of(last.messages[0])).startswith(
        marker("history", len(left), "truncated"))
    assert {e.reason for e in left} == {"truncated"}


def test_a_drop_step_cuts_to_the_low_water_mark_the_adr_bound_drops_on_every_call() -> None:
    stepped = loop(branch(system=SYSTEM), 30, InputCeiling(1500, low_water=900))
    adr = loop(branch(system=SYSTEM), 30, InputCeiling(1500, low_water=1500))
    first_step = next(c for c in stepped if c.instruction.metadata[CEILING_KEY]["stepped"])
    assert used(first_step) <= 900
    after = [c.instruction.metadata[CEILING_KEY]["stepped"] for c in adr[12:]]
    assert all(after)  # over the ceiling once: one more turn dropped on every call
    steps = sum(c.instruction.metadata[CEILING_KEY]["stepped"] for c in stepped[12:])
    assert 0 < 2 * steps <= len(after)


def test_without_a_ceiling_nothing_is_recorded_and_the_output_is_the_bounds_as_before() -> None:
    b = branch(system=SYSTEM)
    loop(b, 6, None)
    ins = b.msgs.create_instruction(instruction="go")
    budgets = SectionBudgets(history=400)
    plain = compile_chat_request(b, TurnRequest(instruction=ins), budgets=budgets, measure=chars)
    again = compile_chat_request(b, TurnRequest(instruction=ins), budgets=budgets, measure=chars,
                                 ceiling=None)
    assert plain == again
    assert CEILING_KEY not in plain.instruction.metadata


# ----------------------------------------------------------------- the current round's results


def test_the_current_rounds_results_are_kept_when_older_turns_must_go() -> None:
    b = branch(system=SYSTEM)
    loop(b, 6, None)
    big = "R" * 600
    add_assistant(b, "calling the big one")
    add_action_pair(b, "fetch", {"all": True}, big)
    compiled = next_request(b, "use it", InputCeiling(1300, low_water=1200))
    assert big in text_of(compiled.messages[-1])
    assert compiled.bound("history").left_out  # older turns made room
    assert used(compiled) <= 1300


def test_current_results_alone_over_the_ceiling_refuse_naming_tool_results() -> None:
    b = branch(system=SYSTEM)
    loop(b, 2, None)
    add_assistant(b, "calling the big one")
    add_action_pair(b, "fetch", {"all": True}, "R" * 2000)
    before = snapshot(b)
    with pytest.raises(SectionBudgetRefused) as info:
        next_request(b, "use it", InputCeiling(1300))
    assert "the tool_results section measures" in str(info.value)
    assert any("current round's results" in n for n in info.value.__notes__)
    assert snapshot(b) == before


# ------------------------------------------------------------------------------- reload


def test_a_reloaded_branch_continues_from_the_same_first_kept_turn() -> None:
    ceiling = InputCeiling(1500, low_water=900)
    b = branch(system=SYSTEM)
    compiled = loop(b, 14, ceiling)
    while True:  # stop where the next request is between two steps
        ins = b.msgs.create_instruction(instruction="next")
        here = compile_chat_request(b, TurnRequest(instruction=ins), measure=chars,
                                    ceiling=ceiling)
        if not here.instruction.metadata[CEILING_KEY]["stepped"]:
            break
        compiled.append(next_request(b, "more", ceiling))
        record_round(b, compiled[-1], len(compiled), "o" * 120)
    first = compiled[-1].instruction.metadata[CEILING_KEY]["first"]
    assert first is not None
    reloaded = parse_branch(json.loads(json.dumps(b.to_dict(), default=str))).branch
    there = compile_chat_request(reloaded, TurnRequest(instruction=ins), measure=chars,
                                 ceiling=ceiling)
    assert here.instruction.metadata[CEILING_KEY]["first"] == first
    assert there.instruction.metadata[CEILING_KEY]["first"] == first
    assert there.messages == here.messages
    # the previous request's history is the prefix of the reloaded branch's next one
    previous = compiled[-1].messages
    assert list(there.messages[: len(previous) - 1]) == list(previous[:-1])


# ------------------------------------------------------------------------------ fast path


def _sent(compiled: CompiledChatRequest) -> tuple[Any, ...]:
    return compiled.messages, compiled.bounds, compiled.instruction.metadata[CEILING_KEY]


@pytest.mark.parametrize("cached", [False, True], ids=["amendment1", "with the cache layout"])
def test_the_fast_path_changes_nothing_a_ceiling_sends(cached: bool) -> None:
    from lionagi_turns import no_fast_path
    from lionagi_turns.amendment1 import compile_for_prompt_cache

    ceiling = InputCeiling(1500, low_water=900)

    def compile_next(b: Branch, ins: Any) -> CompiledChatRequest:
        request = TurnRequest(instruction=ins)
        if cached:
            return compile_for_prompt_cache(b, request, tool_schemas=[], measure=chars,
                                            ceiling=ceiling)[0]
        return compile_chat_request(b, request, measure=chars, ceiling=ceiling)

    b = branch(system=SYSTEM)
    for i in range(25):
        compiled = compile_next(b, b.msgs.create_instruction(instruction=f"round {i}"))
        record_round(b, compiled, i, "o" * 120)
    ins = b.msgs.create_instruction(instruction="next")
    warm = [_sent(compile_next(b, ins)) for _ in range(2)]
    with no_fast_path():
        cold = _sent(compile_next(b, ins))
    assert warm[0] == warm[1] == cold
