"""Amendment 1's bound returns its decision as a value (``_bound.BoundDecision`` on
``Trace.bounded``): frozen, equal for two compiles of the same branch, the source of the
``SectionBound`` records, and the only thing the branch's memory is updated from
(``remember_decision``)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, replace

import pytest
from lionagi import Branch

from lionagi_turns import no_fast_path
from lionagi_turns.amendment1 import ContextBlock, SectionBudgets, TurnRequest
from lionagi_turns.core.contracts import TurnRequest as SeedRequest
from lionagi_turns.core.history import InstructionTurn
from lionagi_turns.core.pipeline import Trace, compile_traced
from lionagi_turns.core.profile import CompileProfile
from lionagi_turns.memo.fast import FAST
from lionagi_turns.profiles.amendment1 import _memory as _memory
from lionagi_turns.profiles.amendment1._bound import (
    Bound,
    BoundDecision,
    bound_decision,
    remember_decision,
)
from lionagi_turns.profiles.amendment1._bound import results_section as _results_section
from lionagi_turns.profiles.amendment1._compile import REUSE, compile_amended_traced
from lionagi_turns.profiles.amendment1._memory import FORGET, Remembered
from lionagi_turns.profiles.amendment1._meter import Meter

from ._support import add_action_pair, add_assistant, add_instruction, branch, chars

# a history budget that drops the oldest turns, a tool_results budget that drops results
BUDGETS = SectionBudgets(history=420, tool_results=60)


def _history(turns: int) -> Branch:
    b = branch("policy")
    for i in range(turns):
        if i % 2:
            add_action_pair(b, "search", {"query": f"q{i}"}, f"hit {i}")
        add_instruction(b, f"question {i}", context=[{"doc": f"report-{i}.md"}])
        add_assistant(b, f"answer {i}")
    add_action_pair(b, "fetch", {"id": 1}, {"rows": [1, 2]})
    return b


def _decision(trace: Trace) -> BoundDecision:
    assert trace.bounded is not None
    decision = trace.bounded.decision
    assert isinstance(decision, BoundDecision)
    return decision


def _compiled(b: Branch, request: TurnRequest, **kwargs: object) -> tuple[object, Trace]:
    return compile_amended_traced(b, request, budgets=BUDGETS, measure=chars, **kwargs)  # type: ignore[arg-type]


def test_the_decision_on_the_trace_is_immutable() -> None:
    b = _history(9)
    request = TurnRequest(instruction=b.msgs.create_instruction(instruction="now"))
    compiled, trace = _compiled(b, request)
    decision = _decision(trace)
    assert decision.truncated and decision.results_left  # the budgets cut history and results
    for name in ("exclusions", "truncated", "history_kept", "results_kept", "results_left",
                 "memory"):
        with pytest.raises(FrozenInstanceError):
            setattr(decision, name, ())
        value = getattr(decision, name)
        assert name == "memory" or isinstance(value, tuple)
    assert not hasattr(decision, "__dict__")  # slotted: no attribute can be added either
    memory = decision.memory
    assert isinstance(memory, Remembered)
    with pytest.raises(FrozenInstanceError):
        memory.first = 0  # type: ignore[misc]
    assert isinstance(memory.out, tuple)
    entries = [t for t in memory.out if isinstance(t, InstructionTurn)]
    assert any(t.results for t in entries)
    assert any(getattr(t.results, "marker", "") for t in entries)  # the cut entry's marker
    for turn in entries:  # the kept entries the decision holds are tuples too
        assert isinstance(turn.results, tuple) and isinstance(turn.sources, tuple)
    # the records are the decision's, read from the trace
    bounds = {bound.section: bound for bound in compiled.bounds}  # type: ignore[attr-defined]
    assert bounds["history"].kept == decision.history_kept
    assert bounds["history"].left_out == (*decision.exclusions, *decision.truncated)
    assert bounds["tool_results"].kept == decision.results_kept
    assert bounds["tool_results"].left_out == decision.results_left


def test_two_compiles_of_the_same_branch_give_equal_decisions() -> None:
    b = _history(9)
    request = TurnRequest(
        instruction=b.msgs.create_instruction(instruction="now"),
        context_blocks=(ContextBlock("catalog", "retrieved"),),
    )
    _memory.forget(b)
    _, first = _compiled(b, request)
    _, second = _compiled(b, request)  # resumes from the first one's memory
    assert second.reused > 0
    one, two = _decision(first), _decision(second)
    assert one is not two
    assert one == two
    assert _memory.recall(b) is two.memory  # the second compile's memory is the one kept
    with no_fast_path():
        _, off = _compiled(b, request)
    three = _decision(off)
    assert three.memory is None  # the fast path off: the memory is left as it is
    assert three == replace(one, memory=None)
    assert _memory.recall(b) is two.memory


def test_a_react_step_decides_to_forget() -> None:
    b = _history(4)
    request = TurnRequest(instruction=b.msgs.create_instruction(instruction="now"))
    _compiled(b, request)
    assert _memory.recall(b) is not None
    for fast in (True, False):
        _compiled(b, request)
        if fast:
            _, trace = _compiled(b, request, react_context=[{"carry": 1}])
        else:
            with no_fast_path():
                _, trace = _compiled(b, request, react_context=[{"carry": 1}])
        assert _decision(trace).memory is FORGET
        assert _memory.recall(b) is None


def test_running_the_bound_changes_neither_it_nor_the_memory() -> None:
    """Only ``remember_decision`` writes the memory; one ``Bound`` runs any number of calls."""
    b = _history(9)
    _memory.forget(b)
    now = b.msgs.create_instruction(instruction="now")
    bound = Bound(b, BUDGETS, Meter(chars), FAST, measure=chars)
    before = repr(bound)
    seed = SeedRequest(instruction=now)
    options = CompileProfile(
        name="bound only", bound=bound, results_section=_results_section, reuse=REUSE
    )
    trace = compile_traced(b, seed, profile=options)
    assert _memory.recall(b) is None
    assert repr(bound) == before
    with pytest.raises(FrozenInstanceError):
        bound.react = True  # type: ignore[misc]
    decision = bound_decision(trace)
    remember_decision(b, decision)
    assert _memory.recall(b) is decision.memory


def test_a_trace_without_the_decision_and_a_foreign_memory_are_errors() -> None:
    b = _history(2)
    trace = compile_traced(b, SeedRequest(instruction=b.msgs.create_instruction(instruction="x")))
    with pytest.raises(TypeError, match="carries no Amendment 1 bound decision"):
        bound_decision(trace)
    _, amended = _compiled(b, TurnRequest(instruction=b.msgs.create_instruction(instruction="y")))
    foreign = replace(_decision(amended), memory="forget")  # type: ignore[arg-type]
    remembered = _memory.recall(b)
    with pytest.raises(TypeError, match=r"BoundDecision\.memory must be"):
        remember_decision(b, foreign)
    assert _memory.recall(b) is remembered  # nothing written



def test_a_compile_that_fails_after_the_bound_leaves_the_memory_as_it_was() -> None:
    """The bound ran (pass 5) but the render pass refused the current instruction's value (a
    set, pass 8): the decision never reaches the memory, which keeps the previous one."""
    b = _history(9)
    add_instruction(b, "the results' turn")  # takes the pending results: none are left over
    add_assistant(b, "done")
    ok = TurnRequest(instruction=b.msgs.create_instruction(instruction="now"))
    _compiled(b, ok)
    kept = _memory.recall(b)
    assert isinstance(kept, Remembered)
    bad = b.msgs.create_instruction(instruction="now", context=[{"tags": {"a", "b"}}])
    with pytest.raises(TypeError, match="set"):
        _compiled(b, TurnRequest(instruction=bad))
    assert _memory.recall(b) is kept
