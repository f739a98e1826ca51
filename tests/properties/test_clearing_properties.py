"""Hypothesis properties of an input ceiling with tool-result clearing, over random tool loops
on real Branches (instructions, answers, ``ActionRequest``/``ActionResponse`` records), random
ceilings and random clearing options. For every request of the loop:

- it is under the ceiling by the profile's measure, and its text is too (a character measure);
- every tool result of the view is sent, cleared or dropped with its turn exactly once, and
  listed where it went (``tool_results.kept``, ``tool_results.left_out`` ``cleared``, history
  ``left_out`` ``truncated``);
- the current round's results are sent whole; no result of an excluded tool and none of the
  newest ``keep`` earlier results is cleared;
- between two steps the cleared set, the first kept turn and the request prefix are the same;

and a reloaded branch (``to_dict``/``from_dict``) compiles the next request identically.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lionagi import Branch
from lionagi.protocols.messages import ActionResponse
from unit._support import add_action_pair, add_assistant, text_of

from lionagi_turns.amendment1 import (
    CEILING_KEY,
    CompiledChatRequest,
    InputCeiling,
    ToolResultClearing,
    TurnRequest,
    compile_chat_request,
)
from lionagi_turns.cli._load import parse_branch

TOOLS = ("lookup", "search", "fetch")
ROUND = st.lists(st.tuples(st.sampled_from(TOOLS), st.integers(20, 1200)), min_size=0,
                 max_size=2)
CLEARING = st.builds(
    ToolResultClearing,
    keep=st.integers(0, 4),
    exclude_tools=st.lists(st.sampled_from(TOOLS), max_size=2, unique=True).map(tuple),
    clear_at_least=st.integers(0, 600),
)


def chars(text: str) -> int:
    return len(text)


def compile_next(b: Branch, text: str, ceiling: InputCeiling) -> CompiledChatRequest:
    ins = b.msgs.create_instruction(instruction=text)
    return compile_chat_request(b, TurnRequest(instruction=ins), measure=chars, ceiling=ceiling)


def bound(compiled: CompiledChatRequest, name: str) -> Any:
    return next(s for s in compiled.bounds if s.section == name)


def check_request(b: Branch, c: CompiledChatRequest, option: ToolResultClearing,
                  current: list[str]) -> None:
    record = c.instruction.metadata[CEILING_KEY]
    assert record["used"] <= record["ceiling"]
    assert sum(len(text_of(m)) for m in c.messages) <= record["ceiling"]
    responses = [m for m in b.msgs.messages if isinstance(m, ActionResponse)]
    results = bound(c, "tool_results")
    cleared = [e.name for e in results.left_out if e.reason == "cleared"]
    ids = {str(m.id) for m in responses}
    dropped = [e.name for e in bound(c, "history").left_out
               if e.reason == "truncated" and e.name in ids]  # a dropped turn's results
    places = [*results.kept, *cleared, *dropped]
    assert sorted(places) == sorted(ids)  # each exactly once
    assert cleared == record["cleared"]
    assert set(current) <= set(results.kept)
    last = text_of(c.messages[-1])
    for m in responses:
        if str(m.id) in current:
            assert m.content.output in last
    function = {str(m.id): m.content.function for m in responses}
    assert not {function[i] for i in cleared} & set(option.exclude_tools)
    earlier = [str(m.id) for m in responses if str(m.id) not in current]
    newest = earlier[len(earlier) - option.keep:] if option.keep else []
    assert not set(newest) & set(cleared)


@settings(max_examples=40)
@given(
    rounds=st.lists(ROUND, min_size=3, max_size=14),
    option=CLEARING,
    tokens=st.integers(4000, 9000),
    low=st.floats(0.3, 1.0),
)
def test_clearing_ceilings_hold_every_property_over_random_tool_loops(
    rounds: list[list[tuple[str, int]]], option: ToolResultClearing, tokens: int, low: float
) -> None:
    ceiling = InputCeiling(tokens, low_water=max(1, int(tokens * low)), clear_tool_results=option)
    b = Branch(system="You are the dispatcher. " * 10)
    previous: CompiledChatRequest | None = None
    current: list[str] = []
    for i, calls in enumerate(rounds):
        c = compile_next(b, f"round {i}", ceiling)
        check_request(b, c, option, current)
        record = c.instruction.metadata[CEILING_KEY]
        if previous is not None and not record["stepped"]:
            before = previous.instruction.metadata[CEILING_KEY]
            assert (record["first"], record["cleared"]) == (before["first"], before["cleared"])
            assert list(c.messages[: len(previous.messages) - 1]) == list(previous.messages[:-1])
        previous = c
        b.msgs.add_message(instruction=c.instruction)
        add_assistant(b, f"answer {i}")
        current = []
        for k, (tool, size) in enumerate(calls):
            output = f"{i}.{k}:" + "o" * size
            _, response = add_action_pair(b, tool, {"round": i, "call": k}, output)
            current.append(str(response.id))
    reloaded = parse_branch(json.loads(json.dumps(b.to_dict(), default=str))).branch
    ins = b.msgs.create_instruction(instruction="next")
    here = compile_chat_request(b, TurnRequest(instruction=ins), measure=chars, ceiling=ceiling)
    there = compile_chat_request(reloaded, TurnRequest(instruction=ins), measure=chars,
                                 ceiling=ceiling)
    assert there.messages == here.messages
    assert there.instruction.metadata[CEILING_KEY] == here.instruction.metadata[CEILING_KEY]
