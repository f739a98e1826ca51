"""The bound's memory as a property: over random sequences of growth, in-place edits, record
removal, active-view changes, budgets and measures, every Amendment 1 compile (memory on, the
previous compiles' walks and memory in place) sends and records exactly what the same compile
with the fast path off does; and concurrent compiles of one branch agree."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st
from lionagi import Branch
from lionagi.protocols.messages import ActionResponse, AssistantResponse, Instruction

from lionagi_turns import no_fast_path
from lionagi_turns.amendment1 import SectionBudgets, TurnRequest, compile_chat_request

from ._support import (
    add_action_pair,
    add_assistant,
    add_instruction,
    chars,
    set_current_progression,
)


def _doubled(text: str) -> int:
    return 2 * len(text)


BUDGETS = st.one_of(
    st.none(),
    st.builds(
        SectionBudgets,
        history=st.one_of(st.none(), st.integers(0, 400)),
        tool_results=st.one_of(st.none(), st.integers(0, 150)),
    ),
)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.integers(0, 2)),  # action pairs before it
        st.tuples(st.just("reply"), st.integers(0, 1)),
        st.tuples(st.just("pending"), st.integers(0, 1)),
        st.tuples(st.just("edit"), st.integers(0, 50)),
        st.tuples(st.just("remove"), st.integers(0, 50)),
        st.tuples(st.just("view"), st.integers(0, 3)),
    ),
    max_size=7,
)


def _branch() -> Branch:
    b = Branch(system="policy")
    for n in range(3):
        if n % 2:
            add_action_pair(b, "f", {"n": n}, {"rows": [n]})
        add_instruction(b, f"question {n}", context=[{"n": n}])
        add_assistant(b, f"reply {n}")
    return b


def _apply(b: Branch, op: str, k: int, step: int) -> None:
    """Apply one op; an edit or removal once every record is gone has nothing to act on and
    leaves the branch as it is (the compiles that follow still run and are compared)."""
    records = list(b.msgs.messages)
    if op in ("edit", "remove") and not records:
        return
    if op == "turn":
        for i in range(k):
            add_action_pair(b, "f", {"step": step, "i": i}, f"out {step}.{i}")
        add_instruction(b, f"step {step}", context=[{"step": step}])
        add_assistant(b, f"answer {step}")
    elif op == "reply":
        add_assistant(b, f"more {step}.{k}")
    elif op == "pending":
        add_action_pair(b, "g", {"step": step}, {"k": k})
    elif op == "edit":
        target = records[k % len(records)]
        if isinstance(target, Instruction):
            target.content.prompt_context.append({"edited": step})
        elif isinstance(target, ActionResponse):
            target.content.output = f"edited {step}"
        elif isinstance(target, AssistantResponse):
            target.content.assistant_response = f"edited {step}"
    elif op == "remove":
        target = records[k % len(records)]
        b.msgs.messages.exclude(target)
    elif op == "view":
        ids = list(b.msgs.progression)
        if k == 0:
            b.metadata.pop("current_progression", None)
        else:
            set_current_progression(b, ids[k:])


def _sent(
    b: Branch, now: Instruction, budgets: SectionBudgets | None, measure: Any
) -> tuple[Any, ...]:
    try:
        compiled = compile_chat_request(
            b, TurnRequest(instruction=now), budgets=budgets, measure=measure
        )
    except Exception as exc:
        return ("error", type(exc).__name__, str(exc))
    return ("ok", [(m.role, m.content) for m in compiled.messages], compiled.bounds)


# Every record removed (the system included), then edits and removals of nothing, then growth.
_EMPTIED = [([("remove", 0)] * 7, None, chars), ([("remove", 0)] * 7 + [("edit", 3)], None, chars),
            ([("edit", 1), ("view", 2), ("turn", 1), ("pending", 0)], None, chars)]


@settings(max_examples=60)
@example(steps=_EMPTIED)
@given(steps=st.lists(st.tuples(OPS, BUDGETS, st.sampled_from([chars, _doubled])), max_size=5))
def test_every_compile_equals_the_memory_off(steps: list[Any]) -> None:
    b = _branch()
    now = b.msgs.create_instruction(instruction="now")
    _sent(b, now, None, chars)
    for n, (ops, budgets, measure) in enumerate(steps):
        for op, k in ops:
            _apply(b, op, k, n)
        on = _sent(b, now, budgets, measure)
        with no_fast_path():
            off = _sent(b, now, budgets, measure)
        assert on == off


def test_concurrent_compiles_of_one_branch_agree() -> None:
    b = _branch()
    for step in range(6):
        _apply(b, "turn", step % 3, step)
    now = b.msgs.create_instruction(instruction="now")
    budgets = [None, SectionBudgets(history=300, tool_results=60)] * 8
    with no_fast_path():
        expected = [_sent(b, now, x, chars) for x in budgets[:2]]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda x: _sent(b, now, x, chars), budgets))
    assert results == expected * 8
