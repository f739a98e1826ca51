"""What a ceiling remembers between compiles of one branch (its whole turns, their weights, the
tier-1 tables and the fixed texts' counts) as a property: over random tool loops with edits,
removals, view changes, drop steps and clearing steps, every compile under a ceiling with the
memory on sends and records exactly what the same compile with the fast path off does, and
each sent instruction carries the record the next compiles read, as ``install()`` leaves it."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lionagi import Branch
from lionagi.protocols.messages import ActionResponse, Instruction

from lionagi_turns import no_fast_path
from lionagi_turns.amendment1 import (
    CEILING_KEY,
    InputCeiling,
    ToolResultClearing,
    TurnRequest,
    compile_chat_request,
)

from ._support import (
    add_action_pair,
    add_assistant,
    add_instruction,
    chars,
)
from .test_bound_memory_properties import _apply  # the same growth, edits, removals and views

CEILINGS = st.builds(
    InputCeiling,
    tokens=st.integers(300, 2500),
    low_water=st.none(),
    clear_tool_results=st.one_of(
        st.none(),
        st.just(True),
        st.builds(ToolResultClearing, keep=st.integers(0, 2), clear_at_least=st.integers(0, 60)),
    ),
)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("send"), st.integers(0, 3)),  # tool rounds before the answer
        st.tuples(st.just("pending"), st.integers(0, 1)),
        st.tuples(st.just("edit"), st.integers(0, 80)),
        st.tuples(st.just("remove"), st.integers(0, 80)),
        st.tuples(st.just("view"), st.integers(0, 3)),
    ),
    min_size=1,
    max_size=12,
)


def _branch() -> Branch:
    b = Branch(system="You answer from the tool results.")
    for n in range(4):
        add_instruction(b, f"question {n}", context=[{"n": n}])
        add_action_pair(b, "search", {"n": n}, {"rows": ["x" * (20 * n + 10)]})
        add_assistant(b, f"reply {n}")
    return b


def _compiled(b: Branch, now: Instruction, ceiling: InputCeiling) -> tuple[Any, ...]:
    try:
        c = compile_chat_request(b, TurnRequest(instruction=now), measure=chars, ceiling=ceiling)
    except Exception as exc:
        return ("error", type(exc).__name__, str(exc), None)
    sent = [(m.role, m.content) for m in c.messages]
    return ("ok", sent, c.bounds, c.instruction.metadata.get(CEILING_KEY))


@settings(max_examples=40, deadline=None)
@given(ceiling=CEILINGS, ops=OPS)
def test_every_compile_under_a_ceiling_equals_the_memory_off(
    ceiling: InputCeiling, ops: list[tuple[str, int]]
) -> None:
    b = _branch()
    for step, (op, k) in enumerate(ops):
        if op != "send":
            _apply(b, op, k, step)
            continue
        now = b.msgs.create_instruction(instruction=f"step {step}", context=[{"s": step}])
        on = _compiled(b, now, ceiling)
        with no_fast_path():
            off = _compiled(b, now, ceiling)
        assert on == off
        if on[0] == "ok":  # sent: the branch records the instruction with its ceiling record
            now.metadata[CEILING_KEY] = on[3]
            b.msgs.add_message(instruction=now)
            for i in range(k):
                add_action_pair(b, "search", {"s": step, "i": i}, {"rows": ["z" * (40 * i)]})
            add_assistant(b, f"answer {step}")
    now = b.msgs.create_instruction(instruction="last")
    on = _compiled(b, now, ceiling)
    with no_fast_path():
        assert on == _compiled(b, now, ceiling)


def test_a_long_loop_under_a_ceiling_steps_and_clears_with_the_memory_as_without() -> None:
    """A fixed loop long enough to make drop and clearing steps, compared call by call, with
    the results already cleared rewritten midway."""
    ceiling = InputCeiling(4000, clear_tool_results=ToolResultClearing(keep=1))
    b = _branch()
    stepped = cleared = 0
    for step in range(40):
        if step == 23:  # results already cleared rewritten shorter: their placeholders change
            for msg in [m for m in b.msgs.messages if isinstance(m, ActionResponse)][-8:-2]:
                msg.content.output = {"rows": [str(msg.content.output)[:-12]]}
        now = b.msgs.create_instruction(instruction=f"step {step}", context=[{"s": step}])
        on = _compiled(b, now, ceiling)
        with no_fast_path():
            assert on == _compiled(b, now, ceiling)
        record = on[3]
        stepped += bool(record["stepped"])
        cleared = max(cleared, len(record.get("cleared", ())))
        now.metadata[CEILING_KEY] = record
        b.msgs.add_message(instruction=now)
        add_action_pair(b, "search", {"s": step}, {"rows": ["w" * (300 + 70 * (step % 5))]})
        add_assistant(b, f"answer {step}")
    assert stepped >= 3 and cleared >= 1  # the loop did reach both tiers
