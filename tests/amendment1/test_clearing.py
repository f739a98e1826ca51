"""Tier 1 of the input ceiling (``InputCeiling(..., clear_tool_results=...)``): older tool
results are cleared, as placeholders, before any whole turn is dropped; clearing is stepped
like the drops, recorded, and continued after a reload.

A loop here is real lionagi records: each round compiles, records the compiled instruction, an
answer and one tool call with its result (``ActionRequest``/``ActionResponse``).
"""

from __future__ import annotations

import json
import re
from itertools import pairwise
from typing import Any

import pytest
from lionagi import Branch
from lionagi.protocols.messages import ActionResponse

from lionagi_turns.amendment1 import (
    CEILING_KEY,
    CompiledChatRequest,
    InputCeiling,
    ToolResultClearing,
    TurnRequest,
    compile_chat_request,
    marker,
)
from lionagi_turns.cli._load import parse_branch

from ._support import add_action_pair, add_assistant, branch, chars, text_of

SYSTEM = "You are the dispatcher. " * 10
CLEARED = re.compile(r"\[LIONAGI_TOOL_RESULT_CLEARED tool=(\w+) id=([0-9a-f-]+) tokens=(\d+)\]")


def next_request(b: Branch, text: str, ceiling: InputCeiling | None) -> CompiledChatRequest:
    ins = b.msgs.create_instruction(instruction=text)
    return compile_chat_request(b, TurnRequest(instruction=ins), measure=chars, ceiling=ceiling)


def record_round(b: Branch, compiled: CompiledChatRequest, i: int, tool: str, size: int) -> None:
    b.msgs.add_message(instruction=compiled.instruction)
    add_assistant(b, f"answer {i} " + "a" * 30)
    add_action_pair(b, tool, {"round": i}, "o" * size)


def size_of(i: int) -> int:
    return 600 + 300 * (i % 5)


def loop(b: Branch, rounds: int, ceiling: InputCeiling | None, tools: tuple[str, ...] = ("lookup",)
         ) -> list[CompiledChatRequest]:
    out = []
    for i in range(rounds):
        compiled = next_request(b, f"round {i}", ceiling)
        out.append(compiled)
        record_round(b, compiled, i, tools[i % len(tools)], size_of(i))
    return out


def record(compiled: CompiledChatRequest) -> dict[str, Any]:
    return compiled.instruction.metadata[CEILING_KEY]


def section(compiled: CompiledChatRequest, name: str) -> Any:
    return next(s for s in compiled.bounds if s.section == name)


def sent_text(compiled: CompiledChatRequest) -> str:
    return "\n".join(text_of(m) for m in compiled.messages)


# ------------------------------------------------------------------------------ bad input


def test_bad_clearing_options_are_refused_at_construction_naming_the_value() -> None:
    with pytest.raises(ValueError, match=r"ToolResultClearing.keep must be >= 0, got -1"):
        ToolResultClearing(keep=-1)
    with pytest.raises(ValueError, match=r"clear_at_least must be >= 0, got -5"):
        ToolResultClearing(clear_at_least=-5)
    with pytest.raises(TypeError, match=r"exclude_tools holds tool names .*got 3"):
        ToolResultClearing(exclude_tools=("search", 3))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"exclude_tools must be a tuple of tool names, got 'x'"):
        ToolResultClearing(exclude_tools="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"clear_at_least 2000 is above the ceiling of 1000"):
        InputCeiling(1000, clear_tool_results=ToolResultClearing(clear_at_least=2000))
    with pytest.raises(TypeError, match=r"clear_tool_results must be True, False, None or a "
                       r"ToolResultClearing, got 3"):
        InputCeiling(1000, clear_tool_results=3)  # type: ignore[arg-type]


def test_true_is_the_default_options_and_false_is_off() -> None:
    assert InputCeiling(900, clear_tool_results=True).clearing == ToolResultClearing()
    assert InputCeiling(900, clear_tool_results=False).clearing is None
    assert InputCeiling(900).clearing is None


# ----------------------------------------------------------------------------- defaults off


def test_without_clearing_the_record_and_the_request_are_todays() -> None:
    off = loop(branch(system=SYSTEM), 30, InputCeiling(8000, low_water=5000))
    false = loop(branch(system=SYSTEM), 30,
                 InputCeiling(8000, low_water=5000, clear_tool_results=False))
    for a, b in zip(off, false, strict=True):
        assert "cleared" not in record(a) and "cleared_tokens" not in record(a)
        assert [text_of(m) for m in a.messages] == [text_of(m) for m in b.messages]
        assert "LIONAGI_TOOL_RESULT_CLEARED" not in sent_text(a)
        assert all(e.reason != "cleared" for e in section(a, "tool_results").left_out)


# ------------------------------------------------------------------------- clearing first


def test_old_results_are_cleared_before_any_turn_is_dropped() -> None:
    ceiling = InputCeiling(8000, low_water=5000, clear_tool_results=ToolResultClearing(keep=1))
    plain = loop(branch(system=SYSTEM), 12, InputCeiling(8000, low_water=5000))
    tiered = loop(branch(system=SYSTEM), 12, ceiling)
    first_drop = next(i for i, c in enumerate(plain) if record(c)["first"] is not None)
    # at the round where today's ceiling drops whole turns, clearing drops none
    at = tiered[first_drop]
    assert record(at)["first"] is None and record(at)["stepped"]
    assert section(at, "history").left_out == ()
    cleared = section(at, "tool_results").left_out
    assert cleared and {e.reason for e in cleared} == {"cleared"}
    assert record(at)["cleared"] == [e.name for e in cleared]
    assert record(at)["used"] <= 5000
    assert max(record(c)["used"] for c in tiered) <= 8000


def test_a_cleared_result_is_a_placeholder_naming_tool_id_and_size_counted_by_a_marker() -> None:
    ceiling = InputCeiling(8000, low_water=5000, clear_tool_results=ToolResultClearing(keep=1))
    b = branch(system=SYSTEM)
    compiled = loop(b, 12, ceiling)[-1]
    text = sent_text(compiled)
    left = {e.name: e.tokens for e in section(compiled, "tool_results").left_out}
    found = CLEARED.findall(text)
    assert found and {i: int(t) for _, i, t in found} == left
    pile = b.msgs.messages
    for tool, rid, tokens in found:
        response = next(m for m in pile if str(m.id) == rid)
        assert isinstance(response, ActionResponse) and response.content.function == tool
        assert ("o" * size_of(0)) not in text or int(tokens) >= size_of(0)
    # one marker line per entry, counting that entry's cleared results
    counts = re.findall(r"section=tool_results left_out=(\d+) reason=cleared", text)
    assert sum(map(int, counts)) == len(left)
    assert marker("tool_results", 1, "cleared") in text
    assert "call lookup again if you need it" in text


def test_the_newest_results_and_excluded_tools_are_never_cleared() -> None:
    clearing = ToolResultClearing(keep=2, exclude_tools=("search",))
    b = branch(system=SYSTEM)
    compiled = loop(b, 30, InputCeiling(6000, low_water=4000, clear_tool_results=clearing),
                    tools=("lookup", "search"))
    responses = [m for m in b.msgs.messages if isinstance(m, ActionResponse)]
    by_id = {str(m.id): m for m in responses}
    for c in compiled:
        cleared = record(c)["cleared"]
        assert all(by_id[i].content.function != "search" for i in cleared)
        sent = [i for i in section(c, "tool_results").kept]
        historical = sent[:-1] if sent else []  # the current round's result is the last one
        assert not set(historical[-2:]) & set(cleared)
    assert any(record(c)["cleared"] for c in compiled)


def test_the_current_rounds_results_are_never_cleared() -> None:
    ceiling = InputCeiling(8000, low_water=5000, clear_tool_results=ToolResultClearing(keep=0))
    b = branch(system=SYSTEM)
    for i, c in enumerate(loop(b, 20, ceiling)):
        if i:
            last = [m for m in b.msgs.messages if isinstance(m, ActionResponse)][i - 1]
            assert str(last.id) in section(c, "tool_results").kept
            assert str(last.id) not in record(c)["cleared"]
            assert ("o" * size_of(i - 1)) in text_of(c.messages[-1])


def test_a_step_clears_at_least_clear_at_least_tokens() -> None:
    def first_step(least: int) -> dict[str, Any]:
        ceiling = InputCeiling(8000, low_water=5000,
                               clear_tool_results=ToolResultClearing(keep=0, clear_at_least=least))
        return next(record(c) for c in loop(branch(system=SYSTEM), 12, ceiling)
                    if record(c)["stepped"])

    small = first_step(0)
    least = small["cleared_tokens"] + 300
    large = first_step(least)
    # what a step saves is at most the cleared results' whole size
    assert large["cleared_tokens"] >= least
    assert len(large["cleared"]) > len(small["cleared"])


# ---------------------------------------------------------------------------- stepped


def test_between_steps_the_cleared_set_and_the_prefix_stay_the_same() -> None:
    ceiling = InputCeiling(8000, low_water=5000, clear_tool_results=ToolResultClearing(keep=1))
    compiled = loop(branch(system=SYSTEM), 40, ceiling)
    steps = 0
    for before, now in pairwise(compiled):
        if record(now)["stepped"]:
            steps += 1
            continue
        assert record(now)["cleared"] == record(before)["cleared"]
        assert record(now)["first"] == record(before)["first"]
        assert list(now.messages[: len(before.messages) - 1]) == list(before.messages[:-1])
    assert steps >= 3


def test_a_reloaded_branch_continues_the_same_cleared_set() -> None:
    ceiling = InputCeiling(8000, low_water=5000, clear_tool_results=ToolResultClearing(keep=1))
    b = branch(system=SYSTEM)
    compiled = loop(b, 13, ceiling)
    assert record(compiled[-1])["cleared"]
    reloaded = parse_branch(json.loads(json.dumps(b.to_dict(), default=str))).branch
    ins = b.msgs.create_instruction(instruction="next")
    here = compile_chat_request(b, TurnRequest(instruction=ins), measure=chars, ceiling=ceiling)
    there = compile_chat_request(reloaded, TurnRequest(instruction=ins), measure=chars,
                                 ceiling=ceiling)
    assert there.messages == here.messages
    assert record(there) == record(here)
    assert section(there, "tool_results") == section(here, "tool_results")


def test_the_fast_path_changes_nothing_a_clearing_ceiling_sends() -> None:
    from lionagi_turns import no_fast_path

    ceiling = InputCeiling(8000, low_water=5000, clear_tool_results=ToolResultClearing(keep=1))
    b = branch(system=SYSTEM)
    loop(b, 14, ceiling)
    ins = b.msgs.create_instruction(instruction="next")

    def sent() -> tuple[Any, ...]:
        c = compile_chat_request(b, TurnRequest(instruction=ins), measure=chars, ceiling=ceiling)
        return c.messages, c.bounds, record(c)

    warm = [sent() for _ in range(2)]
    with no_fast_path():
        cold = sent()
    assert warm[0] == warm[1] == cold
    assert warm[0][2]["cleared"]
