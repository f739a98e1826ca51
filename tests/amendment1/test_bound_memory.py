"""The bound's memory (``amendment1._bound``/``_memory``) changes nothing Amendment 1 sends or
records: every compile equals the same compile with the fast path off (``no_fast_path()``,
which switches the memory off), under growth, in-place edits, record removal, progression and
``current_progression`` edits, view exclusions and budgets changed between calls; it keeps
output turn objects for unchanged turns, and never keeps a dropped branch alive."""

from __future__ import annotations

import dataclasses
import gc
import weakref
from collections.abc import Callable
from typing import Any

import pytest
from equivalence._support import Convo
from equivalence.test_mutation_purity import MUTATIONS
from lionagi import Branch
from lionagi.ln.concurrency.utils import _is_coro_func_cached
from lionagi.protocols.messages import Instruction

import lionagi_turns.profiles.amendment1._compile as a1_compile
from lionagi_turns import no_fast_path
from lionagi_turns.amendment1 import ContextBlock, SectionBudgets, TurnRequest, compile_chat_request
from lionagi_turns.core.contracts import TurnRequest as SeedRequest
from lionagi_turns.core.history import Projection, project_history, select_ids
from lionagi_turns.memo.fast import FAST
from lionagi_turns.profiles.amendment1 import _memory as _memory
from lionagi_turns.profiles.amendment1._bound import Bound, BoundDecision, remember_decision
from lionagi_turns.profiles.amendment1._meter import Meter
from lionagi_turns.profiles.amendment1._splice import turn_ids as _ids

from ._support import (
    add_action_pair,
    add_assistant,
    add_instruction,
    branch,
    chars,
    set_current_progression,
)

BLOCKS = (ContextBlock("catalog", "retrieved"),)
BUDGETS: dict[str, SectionBudgets | None] = {
    "none": None,
    "history": SectionBudgets(history=300),
    "results": SectionBudgets(tool_results=80),
    "both": SectionBudgets(history=420, tool_results=60),
    "roomy": SectionBudgets(history=10**6, tool_results=10**6),
}


def _sent(
    b: Branch,
    now: Instruction,
    budgets: SectionBudgets | None = None,
    **request: Any,
) -> tuple[Any, ...]:
    """What one compile sends and records, or its error."""
    try:
        compiled = compile_chat_request(
            b, TurnRequest(instruction=now, **request), budgets=budgets, measure=chars
        )
    except Exception as exc:
        return ("error", type(exc).__name__, str(exc), getattr(exc, "bounds", None))
    return ("ok", compiled.messages, compiled.bounds)


def _both(b: Branch, now: Instruction, **kwargs: Any) -> tuple[Any, Any]:
    """(memory on, memory off) for one request; the "off" compile leaves the memory as is."""
    on = _sent(b, now, **kwargs)
    with no_fast_path():
        off = _sent(b, now, **kwargs)
    return on, off


def _turn(b: Branch, i: int) -> None:
    """One recorded turn: a tool call on odd turns (its result repeated in the next
    instruction's context every fourth turn, so the entry skips it), an instruction, an
    answer."""
    if i % 2:
        add_action_pair(b, "search", {"query": f"q{i}"}, f"hit {i}")
    context: list[Any] = [{"doc": f"report-{i}.md", "n": i}]
    if i % 4 == 1:
        context.append({"function": "search", "arguments": {"query": f"q{i}"},
                        "output": f"hit {i}"})
    add_instruction(b, f"step {i}", context=context, guidance="be brief")
    add_assistant(b, f"answer {i}")


def _history(turns: int, system: str | None = "policy") -> Branch:
    b = branch(system)
    for i in range(turns):
        _turn(b, i)
    return b


def _now(b: Branch, text: str = "now") -> Instruction:
    return b.msgs.create_instruction(instruction=text)


@pytest.mark.parametrize("name", list(BUDGETS))
def test_growth_turn_by_turn_equals_the_memory_off(name: str) -> None:
    budgets = BUDGETS[name]
    b = _history(6)
    for i in range(6, 14):
        now = _now(b, f"turn {i}")
        on, off = _both(b, now, budgets=budgets, context_blocks=BLOCKS)
        again = _sent(b, now, budgets=budgets, context_blocks=BLOCKS)
        assert on == off
        assert again == off
        b.msgs.add_message(instruction=now)
        if i % 3 == 0:  # results pending after an answer, and a continued assistant run
            add_action_pair(b, "fetch", {"id": i}, {"rows": [i]})
        add_assistant(b, f"reply {i}")
        if i % 3 == 1:
            add_assistant(b, f"more {i}")


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_in_place_edit_is_sent_with_the_memory_on(name: str) -> None:
    convo = Convo()
    now = _now(convo.branch)
    _sent(convo.branch, now)
    before = _sent(convo.branch, now)  # served from the memory
    MUTATIONS[name](convo)
    on, off = _both(convo.branch, now)
    assert on == off
    assert on != before


def test_budgets_changed_between_calls() -> None:
    b = _history(10)
    now = _now(b)
    order = ["none", "history", "both", "results", "none", "roomy", "both", "history", "none"]
    for name in order:
        on, off = _both(b, now, budgets=BUDGETS[name])
        assert on == off, name


def test_measure_changed_between_calls() -> None:
    b = _history(8)
    now = _now(b)
    budgets = SectionBudgets(history=300, tool_results=60)
    for measure in (chars, lambda text: 2 * len(text), chars):
        on = compile_chat_request(b, TurnRequest(instruction=now), budgets=budgets,
                                  measure=measure)
        with no_fast_path():
            off = compile_chat_request(b, TurnRequest(instruction=now), budgets=budgets,
                                       measure=measure)
        assert (on.messages, on.bounds) == (off.messages, off.bounds)


def test_view_exclusions_changed_between_calls() -> None:
    b = _history(8)
    now = _now(b)
    ids = list(b.msgs.progression)
    for view in (ids[3:], ids[:-4], ids, ids[1:], ids[3:]):
        set_current_progression(b, view)
        on, off = _both(b, now)
        assert on == off
    b.metadata.pop("current_progression")
    assert _both(b, now)[0] == _both(b, now)[1]


def _progression_edits() -> dict[str, Callable[[Branch], None]]:
    def remove_record(b: Branch) -> None:
        target = next(m for m in b.msgs.messages if isinstance(m, Instruction))
        b.msgs.messages.exclude(target)
        b.msgs.progression.exclude(target)

    def remove_from_progression(b: Branch) -> None:
        b.msgs.progression.exclude(list(b.msgs.progression)[4])

    def reorder(b: Branch) -> None:  # the first turn moves to the end
        order = list(b.msgs.progression)
        b.msgs.progression.clear()
        for uid in order[2:] + order[:2]:
            b.msgs.progression.append(uid)

    def current_view(b: Branch) -> None:
        set_current_progression(b, list(b.msgs.progression)[:-3])

    return {
        "remove record": remove_record,
        "remove from progression": remove_from_progression,
        "reorder": reorder,
        "current_progression set": current_view,
    }


@pytest.mark.parametrize("name", list(_progression_edits()))
@pytest.mark.parametrize("budget", ["none", "both"])
def test_record_and_progression_edits(name: str, budget: str) -> None:
    b = _history(8)
    now = _now(b)
    _sent(b, now, budgets=BUDGETS[budget])
    before = _sent(b, now, budgets=BUDGETS[budget])
    _progression_edits()[name](b)
    on, off = _both(b, now, budgets=BUDGETS[budget])
    assert on == off
    assert on != before


def test_current_progression_dropped() -> None:
    b = _history(8)
    now = _now(b)
    set_current_progression(b, list(b.msgs.progression)[2:])
    _sent(b, now)
    before = _sent(b, now)
    b.metadata.pop("current_progression")
    on, off = _both(b, now)
    assert on == off
    assert on != before


def test_explicit_progression_between_calls() -> None:
    b = _history(8)
    now = _now(b)
    ids = tuple(b.msgs.progression)
    for progression in (None, ids[:-2], ids, None, ids[4:], None):
        on, off = _both(b, now, progression=progression)
        assert on == off


def test_react_items_take_nothing_from_the_memory() -> None:
    b = _history(4)
    add_instruction(b, "carry", context=[{"carry": 1}, "x"])
    add_assistant(b, "ok")
    add_instruction(b, "carry again", context=[{"carry": 1}, "y"])
    add_assistant(b, "ok")
    now = _now(b)
    _sent(b, now)
    for items in ([{"carry": 1}], None, [{"carry": 1}], None):
        on = compile_chat_request(b, TurnRequest(instruction=now), react_context=items)
        with no_fast_path():
            off = compile_chat_request(b, TurnRequest(instruction=now), react_context=items)
        assert (on.messages, on.bounds) == (off.messages, off.bounds)
        assert (_memory.recall(b) is None) == bool(items)


def test_a_failed_compile_remembers_nothing() -> None:
    b = _history(4)
    now = _now(b)
    _memory.forget(b)
    add_action_pair(b, "bad", {"x": 1}, {"members": {1, 2}})  # a set: YAML cannot keep order
    add_instruction(b, "after the bad result")
    add_assistant(b, "ok")
    failed = _sent(b, now)
    assert failed[0] == "error"
    assert _memory.recall(b) is None
    refused = _sent(b, _now(b), budgets=SectionBudgets(system=1), progression=())
    assert refused[:2] == ("error", "SectionBudgetRefused")
    assert _memory.recall(b) is not None  # the pipeline ran: its walk is the next one's start


def test_the_memory_is_off_without_the_fast_path() -> None:
    b = _history(4)
    _memory.forget(b)
    with no_fast_path():
        _sent(b, _now(b))
    assert _memory.recall(b) is None


def _traced(
    b: Branch, now: Instruction, budgets: SectionBudgets | None, **request: Any
) -> Any:
    """The trace of one compile."""
    seen: list[Any] = []
    real = a1_compile.compile_traced

    def traced(*args: Any, **kw: Any) -> Any:
        seen.append(real(*args, **kw))
        return seen[-1]

    a1_compile.compile_traced = traced  # type: ignore[assignment]
    try:
        compile_chat_request(
            b, TurnRequest(instruction=now, **request), budgets=budgets, measure=chars
        )
    finally:
        a1_compile.compile_traced = real  # type: ignore[assignment]
    return seen[0]


@pytest.mark.parametrize("budget", ["none", "results", "roomy"])
def test_a_next_turn_resumes_and_reuses_the_unchanged_turns_renderings(
    budget: str, full_walks: list[int]
) -> None:
    b = _history(10)
    now = _now(b)
    first = _traced(b, now, budgets=BUDGETS[budget], context_blocks=BLOCKS)
    assert len(full_walks) == 1 and first.reused == 0
    b.msgs.add_message(instruction=now)
    add_assistant(b, "done")
    following = _now(b, "next")
    second = _traced(b, following, budgets=BUDGETS[budget], context_blocks=BLOCKS)
    assert len(full_walks) == 1  # resumed: the previous walk continued
    assert second.reused == len(first.projection.turns)  # every turn's rendering
    add_action_pair(b, "fetch", {"id": 1}, {"rows": ["a long enough row to drop others"]})
    third = _traced(b, following, budgets=BUDGETS[budget], context_blocks=BLOCKS)
    assert len(full_walks) == 1
    if budget == "results":  # the new result pushes older ones out: the marked entry moves
        assert 0 < third.reused < len(second.projection.turns)
    else:
        assert third.reused == len(second.projection.turns)
    on, off = _both(b, following, budgets=BUDGETS[budget], context_blocks=BLOCKS)
    assert on == off


def _walk(b: Branch, reuse: list[Any] | None = None) -> Projection:
    """The pipeline's projection of ``b``'s view; with ``reuse``, its leading turns are those
    objects where the walk found the same records (what the incremental next turn hands the
    bound: every previous turn but the last, which new records may extend)."""
    projected = project_history(b, select_ids(b, None))
    if reuse:
        k = len(reuse) - 1
        assert all(
            _ids(x) == _ids(y) for x, y in zip(projected.turns[:k], reuse[:k], strict=True)
        )
        return dataclasses.replace(projected, turns=(*reuse[:k], *projected.turns[k:]))
    return projected


def _decided(b: Branch, projected: Projection, budgets: SectionBudgets) -> tuple[Any, ...]:
    """One bound call on ``projected``, as comparable data, its decision and its output."""
    bounded = Bound(b, budgets, Meter(chars), FAST)(projected, SeedRequest(instruction=_now(b)))
    out, decision = bounded.projection, bounded.decision
    assert isinstance(decision, BoundDecision)
    turns = [
        (type(t).__name__, _ids(t), list(getattr(t, "results", ())),
         getattr(getattr(t, "results", None), "marker", ""),
         [s.id for s in getattr(t, "sources", ())])
        for t in out.turns
    ]
    records = (decision.exclusions, decision.truncated, decision.history_kept,
               decision.results_kept, decision.results_left)
    return (turns, list(out.pending), getattr(out.pending, "marker", ""),
            [s.id for s in out.pending_sources], records), decision, out


TRANSITIONS = [
    ("none", "none"), ("results", "results"), ("both", "both"), ("none", "results"),
    ("results", "none"), ("history", "both"), ("both", "history"), ("roomy", "none"),
    ("history", "none"), ("history", "results"),
]


@pytest.mark.parametrize(("before", "after"), TRANSITIONS)
def test_reused_walk_equals_a_fresh_bound(before: str, after: str) -> None:
    """The incremental next turn, reproduced here: the bound is given the previous walk's turn
    objects for the unchanged prefix; with the memory it decides exactly what a bound with no
    memory decides, and hands back the previous output turn where the decision is the same."""
    b = _history(9)
    _, decision, _ = _decided(b, _walk(b), BUDGETS[before] or SectionBudgets())
    remember_decision(b, decision)
    previous_in, previous_out = _memory.recall(b).turns, _memory.recall(b).out
    _turn(b, 9)
    add_action_pair(b, "fetch", {"id": 9}, {"rows": [9]})
    projected = _walk(b, previous_in)
    budgets = BUDGETS[after] or SectionBudgets()
    with no_fast_path():
        fresh, _, _ = _decided(b, _walk(b), budgets)
    remembered, _, out = _decided(b, projected, budgets)
    assert remembered == fresh
    if before == after == "none":  # every turn handed back keeps its output object
        k = len(previous_out) - 1
        assert len(out.turns) == k + 3  # the last turn walked again, one more turn
        assert all(x is y for x, y in zip(out.turns[:k], previous_out, strict=False))
        assert not any(x is y for x, y in zip(out.turns[k:], previous_out[k:], strict=False))


def test_a_dropped_branch_is_not_kept_alive() -> None:
    b = _history(6)
    _sent(b, _now(b))
    assert _memory.recall(b) is not None
    probe, key = weakref.ref(b), id(b)
    del b
    _is_coro_func_cached.cache_clear()  # lionagi 0.36 keeps branches in this cache
    gc.collect()
    assert probe() is None
    assert key not in _memory._values


class _Counting:
    """``chars``, counting the texts it is asked about."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, text: str) -> int:
        self.texts.append(text)
        return len(text)


@pytest.mark.parametrize("name", ["history", "results", "both"])
def test_a_bounded_next_turn_measures_only_what_is_new(name: str) -> None:
    """Under budgets, a resumed next turn measures the new turns' texts only (sizes of the
    unchanged turns, and the entries of turns dropped again, are the remembered ones), and
    sends and records exactly what the memory-off compile does, as the drop boundary moves."""
    budgets = BUDGETS[name]
    b = _history(12)
    measure = _Counting()
    before = 0
    for i in range(12, 20):
        now = _now(b, f"turn {i}")
        on = compile_chat_request(b, TurnRequest(instruction=now), budgets=budgets,
                                  measure=measure)
        counted = len(measure.texts)
        with no_fast_path():
            off = compile_chat_request(b, TurnRequest(instruction=now), budgets=budgets,
                                       measure=measure)
        assert (on.messages, on.bounds) == (off.messages, off.bounds)
        if i > 12:  # resumed: far fewer texts than the full measurement the off compile made
            assert counted - before < (len(measure.texts) - counted) / 2
        before = len(measure.texts)
        _turn(b, i)
