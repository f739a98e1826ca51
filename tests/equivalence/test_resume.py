"""The incremental next turn (issue 13 item 3): whatever changed since the last compile of a
branch — the view grew, a record was edited in place, removed or replaced, the progression or
``current_progression`` was edited, the fold's inputs changed — the next compile sends exactly
what a compile with the fast path off sends on the same branch, and what a cold compile of the
same branch rebuilt from scratch sends; a refusal has the same type, text, notes and defects.

Every test compiles a real lionagi Branch once (the warm state), changes it, and compiles again
(``check``). The reference is behaviour, not the resume machinery.
"""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar
from uuid import UUID, uuid4

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, rule
from lionagi import Branch
from lionagi.protocols.generic.progression import Progression
from lionagi.protocols.messages import (
    ActionResponse,
    AssistantResponse,
    Instruction,
    Message,
    MessageRole,
)
from lionagi.protocols.messages.instruction import InstructionContent
from prompt_cache._tools import lookup

from lionagi_turns import (
    ContextBlock,
    HistoryError,
    TurnRequest,
    amendment1,
    compile_chat_request,
    no_fast_path,
    to_provider_messages,
)
from lionagi_turns.core.errors import CONSECUTIVE_INSTRUCTIONS, FIRST_MESSAGE_RULE
from lionagi_turns.core.history import Projection
from lionagi_turns.core.pipeline import compile_traced
from lionagi_turns.core.profile import Bounded, CompileProfile
from lionagi_turns.profiles.prompt_cache._compile import RECORD_KEY, compile_cached

from ._support import (
    PNG,
    Convo,
    current,
    error_outcome,
    full_outcome,
    full_slow_outcome,
    rebuilt,
)
from .test_mutation_purity import MUTATIONS


def check(branch: Branch, request: TurnRequest, *, rebuild: bool = True) -> tuple[Any, ...]:
    """Compile with the fast path on; it must equal the compile with it off on the same branch
    and (``rebuild``) a cold compile of the branch rebuilt from scratch. Returns the outcome."""
    fast = full_outcome(branch, request)
    assert fast == full_slow_outcome(branch, request)
    if rebuild:
        assert full_outcome(rebuilt(branch), request) == fast
    return fast


def view(branch: Branch) -> Progression:
    """Give ``branch`` a ``current_progression`` equal to its whole progression; return it."""
    cp = Progression(order=list(branch.msgs.progression))
    branch.metadata["current_progression"] = cp
    return cp


def add_turn(branch: Branch, n: int, *, tool: bool = False, images: bool = False) -> Instruction:
    """One whole turn: an instruction (with context), optionally a tool call and its response,
    and an assistant answer."""
    m = branch.msgs
    extra: dict[str, Any] = {"images": [PNG], "image_detail": "low"} if images else {}
    ins = m.add_message(
        instruction=f"step {n}", guidance=f"g{n}" if n % 2 else None,
        context=[{"n": n, "rows": list(range(n % 3))}], **extra,
    )
    if tool:
        add_result(branch, n)
    m.add_message(assistant_response=f"answer {n}")
    return ins


def add_result(branch: Branch, n: int, output: Any = None) -> ActionResponse:
    m = branch.msgs
    request = m.add_message(action_function="lookup", action_arguments={"q": n})
    return m.add_message(
        action_request=request, action_output={"hit": n} if output is None else output
    )


def replace_record(branch: Branch, old: Message, new: Message) -> None:
    """Put ``new`` (same id) where ``old`` is in the pile and its progression."""
    pile = branch.msgs.messages
    position = pile.progression.index(old.id)
    pile.pop(old.id)
    pile.insert(position, new)


def distinct(outcomes: list[tuple[Any, ...]]) -> int:
    return len({repr(o) for o in outcomes})


class MemoNote(Message):
    """A fixed-role kind the compiler has no rule for."""

    _role: ClassVar[MessageRole] = MessageRole.ASSISTANT


# ============================================================================ 1. growth only


GROWTH: dict[str, Callable[[Branch, int], object]] = {
    "plain": lambda b, n: add_turn(b, n),
    "tool": lambda b, n: add_turn(b, n, tool=True),
    "images": lambda b, n: add_turn(b, n, images=True),
    "assistant-only": lambda b, n: b.msgs.add_message(assistant_response=f"more {n}"),
    "result-only": lambda b, n: add_result(b, n),
}


@pytest.mark.parametrize("system", ["Be careful.", None], ids=["system", "no-system"])
@pytest.mark.parametrize("kind", list(GROWTH))
def test_each_growth_step_equals_slow_and_rebuilt(kind: str, system: str | None) -> None:
    convo = Convo(system=system)
    b = convo.branch
    request = current(b)
    seen = [check(b, request, rebuild=False)]
    for n in range(1, 5):
        GROWTH[kind](b, n)
        seen.append(check(b, request, rebuild=n == 4))
    assert distinct(seen) == len(seen)  # every step changed what is sent


def test_the_real_next_turn_loop() -> None:
    """compile -> record the compiled instruction -> record the answer (and sometimes a tool
    round) -> compile the next turn, as the integration does."""
    b = Convo().branch
    seen = []
    for n in range(8):
        request = TurnRequest(
            instruction=b.msgs.create_instruction(instruction=f"turn {n}", context=[{"n": n}]),
            context_blocks=(ContextBlock("memory", f"fact {n % 3}"),),
        )
        seen.append(check(b, request))
        compiled = compile_chat_request(b, request)
        b.msgs.add_message(instruction=compiled.instruction)
        if n % 3 == 1:
            add_result(b, n)
        b.msgs.add_message(assistant_response=f"reply {n}")
    assert distinct(seen) == len(seen)


def test_one_record_at_a_time_through_every_kind_of_tail() -> None:
    """Compiling after every single record: an unanswered instruction, a pending result, two
    pending results, an assistant run of three, a tool result between instruction and
    answer."""
    b = Branch(system="S.")
    m = b.msgs
    request = current(b)
    steps: list[Callable[[], Any]] = [
        lambda: m.add_message(instruction="q1"),
        lambda: m.add_message(assistant_response="a1"),
        lambda: m.add_message(assistant_response="a1 continued"),
        lambda: m.add_message(assistant_response="a1 continued again"),
        lambda: m.add_message(action_function="f", action_arguments={"x": 1}),
        lambda: m.add_message(action_request=m.messages[-1], action_output="r1"),
        lambda: add_result(b, 2),
        lambda: m.add_message(instruction="q2", context=["c"]),
        lambda: add_result(b, 3),
        lambda: m.add_message(assistant_response="a2"),
        lambda: m.add_message(instruction="q3"),
        lambda: m.add_message(assistant_response="a3"),
    ]
    seen = [check(b, request)]
    for step in steps:
        step()
        seen.append(check(b, request))
    assert all(s[0] == "ok" for s in seen)


def test_assistant_run_continued_across_compiles() -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    before = check(b, request)
    b.msgs.add_message(assistant_response="three, continued")
    after = check(b, request)
    assert after != before
    # The run is one message: the count did not change, the last message grew.
    assert len(after[2]) == len(before[2])
    assert after[2][-2]["content"] == "three\n\nthree, continued"
    b.msgs.add_message(assistant_response="and more")
    assert check(b, request)[2][-2]["content"] == "three\n\nthree, continued\n\nand more"
    b.msgs.add_message(instruction="fourth")
    b.msgs.add_message(assistant_response="four")
    check(b, request)


def test_trailing_result_folds_into_current_then_into_a_history_instruction() -> None:
    convo = Convo()
    b = convo.branch
    plain = check(b, current(b))
    add_result(b, 1, output={"rows": [1, 2]})
    request = current(b, "use the result")
    pending = check(b, request)
    assert pending[2][:-1] == plain[2][:-1]  # history unchanged, the result is in the current
    assert "rows" in str(pending[2][-1]["content"])
    add_result(b, 2, output="second")  # two pending results
    both = check(b, request)
    assert "second" in str(both[2][-1]["content"]) and "rows" in str(both[2][-1]["content"])
    compiled = compile_chat_request(b, request)
    b.msgs.add_message(instruction=compiled.instruction)  # the results now fold into it
    folded = check(b, current(b, "next"))
    assert "rows" in str(folded[2][-2]["content"]) and "second" in str(folded[2][-2]["content"])
    assert "rows" not in str(folded[2][-1]["content"])
    b.msgs.add_message(assistant_response="used them")
    check(b, current(b, "next"))


def test_history_ending_with_an_unanswered_instruction_then_growing() -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    b.msgs.add_message(instruction="unanswered", context=[{"k": 1}])
    check(b, request)
    add_result(b, 1)  # a result after it: pending for the current instruction
    check(b, request)
    b.msgs.add_message(assistant_response="late answer")
    check(b, request)
    add_turn(b, 5, tool=True)
    check(b, request)


def test_growth_from_an_empty_history() -> None:
    """No retained instruction: the fold goes into the current one; the first history
    instruction then takes it."""
    for system in ("Only a system.", None):
        b = Branch(system=system) if system else Branch()
        request = TurnRequest(
            instruction=b.msgs.create_instruction(instruction="hi"),
            context_blocks=(ContextBlock("memory", "m"),),
        )
        empty = check(b, request)
        assert len(empty[2]) == 1
        if system is None:
            b.msgs.add_message(assistant_response="leading assistant, allowed without system")
            check(b, request)
        add_turn(b, 1)
        grown = check(b, request)
        assert "Only a system." not in str(grown[2][-1]) if system else True
        add_turn(b, 2, tool=True)
        check(b, request)


def test_thirty_compiles_on_a_growing_branch() -> None:
    b = Convo().branch
    request = current(b)
    for n in range(30):
        add_turn(b, n, tool=n % 4 == 0, images=n % 7 == 3)
        check(b, request, rebuild=n % 10 == 9)


def test_previous_trace_is_not_changed_by_the_next_compile() -> None:
    """A trace handed out once stays as it was when the next compile extends its last turn
    (an assistant run continued, pending results gaining one)."""
    convo = Convo()
    b = convo.branch
    add_result(b, 1)
    first = compile_traced(b, current(b))

    def shape(trace: Any) -> Any:
        turns = [
            (type(t).__name__, [m.id for m in getattr(t, "messages", [])],
             list(getattr(t, "positions", [])), repr(getattr(t, "results", None)),
             [m.id for m in getattr(t, "sources", [])])
            for t in trace.projected.turns
        ]
        return (turns, repr(trace.projected.pending),
                [m.id for m in trace.projected.pending_sources],
                [(p.role, repr(p.content)) for p in trace.rendered])

    before = shape(first)
    add_result(b, 2)
    second = compile_traced(b, current(b))
    b.msgs.add_message(instruction="q")
    b.msgs.add_message(assistant_response="a")
    third = compile_traced(b, current(b))
    shapes = (shape(second), shape(third))
    b.msgs.add_message(assistant_response="a, continued")
    compile_traced(b, current(b))
    assert shape(first) == before
    assert (shape(second), shape(third)) == shapes


# ================================================================ 2. every in-place mutation


@pytest.mark.parametrize("grow", [False, True], ids=["same-view", "grown"])
@pytest.mark.parametrize("name", list(MUTATIONS))
def test_mutation_between_compiles(name: str, grow: bool) -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    check(b, request, rebuild=False)
    before = check(b, request, rebuild=False)  # a second compile of the unchanged branch
    MUTATIONS[name](convo)
    if grow:
        add_turn(b, 9, tool=True)
    after = check(b, request)
    assert after != before
    assert check(b, request, rebuild=False) == after


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_mutation_after_growth_with_no_compile_between(name: str) -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    check(b, request, rebuild=False)
    add_turn(b, 9)
    b.msgs.add_message(assistant_response="run continued")
    MUTATIONS[name](convo)
    check(b, request, rebuild=False)
    add_result(b, 10)
    check(b, request)


def test_mutation_of_the_newest_turn_after_it_was_compiled() -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    ins = add_turn(b, 4, tool=True)
    check(b, request)
    ins.content.prompt_context[0]["n"] = "edited"
    check(b, request)
    last = b.msgs.messages[-1]
    assert isinstance(last, AssistantResponse)
    last.content.assistant_response = "edited answer"
    b.msgs.add_message(assistant_response="continued")
    check(b, request)


def test_untracked_context_value_edited_in_place() -> None:
    """A value lionagi cannot see change (a list inside a tuple: no revision bump)."""
    convo = Convo()
    b = convo.branch
    inner = ["seen"]
    b.msgs.add_message(instruction="untracked", context=[("pair", inner)])
    b.msgs.add_message(assistant_response="ok")
    request = current(b)
    first = check(b, request, rebuild=False)
    inner.append("changed in place")
    assert check(b, request, rebuild=False) != first
    add_turn(b, 3)
    inner.append("again")
    check(b, request, rebuild=False)


def test_untracked_action_output_edited_in_place() -> None:
    convo = Convo()
    b = convo.branch
    output = ["a"]
    add_result(b, 1, output=("wrapped", output))
    b.msgs.add_message(instruction="after the tool")
    b.msgs.add_message(assistant_response="ok")
    request = current(b)
    first = check(b, request, rebuild=False)
    output.append("b")
    assert check(b, request, rebuild=False) != first
    add_turn(b, 2)
    output.append("c")
    check(b, request, rebuild=False)


def test_pending_result_edited_then_folded_into_history() -> None:
    convo = Convo()
    b = convo.branch
    response = add_result(b, 1, output={"rows": [1]})
    request = current(b)
    check(b, request)
    response.content.output["rows"].append(2)
    check(b, request)
    b.msgs.add_message(instruction="takes the result")
    response.content.output["rows"].append(3)
    check(b, request)


def test_a_history_value_that_cannot_render_is_refused_as_slow_then_repaired() -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    good = check(b, request)
    convo.i2.content.prompt_context.append({"members": {1, 2}})  # a set cannot be rendered
    bad = check(b, request, rebuild=False)
    assert bad[0] == "error"
    convo.i2.content.prompt_context.pop()
    assert check(b, request) == good
    add_result(b, 1, output={"members": {3}})  # the same defect in the new tail
    b.msgs.add_message(instruction="after the bad result")
    assert check(b, request, rebuild=False)[0] == "error"


def test_an_assistant_reply_that_is_not_text_is_refused_as_slow() -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    check(b, request)
    convo.a3.content.assistant_response = 7  # type: ignore[assignment]
    assert check(b, request, rebuild=False)[0] == "error"
    convo.a3.content.assistant_response = "three"
    b.msgs.add_message(assistant_response=["not", "text"])  # type: ignore[arg-type]
    assert check(b, request, rebuild=False)[0] == "error"


# ===================================================================== 3. progression edits


def _active(b: Branch, where: str) -> Progression:
    return view(b) if where == "view" else b.msgs.progression


def _pop_two(c: Convo, p: Progression) -> None:
    p.pop()
    p.pop()


def _swap_turns(c: Convo, p: Progression) -> None:
    p.swap(p.index(c.i1.id), p.index(c.i3.id))
    p.swap(p.index(c.a1.id), p.index(c.a3.id))


def _replace_whole(c: Convo, p: Progression) -> None:
    p.clear()
    p.extend(Progression(order=[c.i3.id, c.a3.id, c.i1.id, c.a1.id]))


PROGRESSION_EDITS: dict[str, Callable[[Convo, Progression], None]] = {
    "remove-middle-assistant": lambda c, p: p.remove(c.a1.id),
    "remove-middle-turn": lambda c, p: p.remove([c.i2.id, c.resp.id, c.a2.id]),
    "remove-tool-response": lambda c, p: p.remove(c.resp.id),
    "remove-last": lambda c, p: p.pop(),
    "remove-last-turn": _pop_two,
    "insert-in-middle": lambda c, p: p.insert(3, list(_new_turn(c))),
    "insert-at-start": lambda c, p: p.insert(1, list(_new_turn(c))),
    "swap-turns": _swap_turns,
    "move-result-to-end": lambda c, p: p.move(p.index(c.resp.id), len(p)),
    "reverse": lambda c, p: p.reverse(),
    "replace-whole": _replace_whole,
    "clear": lambda c, p: p.clear(),
}


def _new_turn(c: Convo) -> tuple[UUID, UUID]:
    """A new instruction and answer in the pile, not in any view (taken out of them again)."""
    b = c.branch
    ins = b.msgs.add_message(instruction="inserted", context=[{"new": True}])
    ans = b.msgs.add_message(assistant_response="inserted answer")
    for p in (b.msgs.progression, b.metadata.get("current_progression")):
        if p is not None:
            p.remove([ins.id, ans.id])
    return ins.id, ans.id


@pytest.mark.parametrize("where", ["pile", "view"])
@pytest.mark.parametrize("edit", list(PROGRESSION_EDITS))
def test_progression_edit_between_compiles(edit: str, where: str) -> None:
    convo = Convo()
    b = convo.branch
    progression = _active(b, where)
    request = current(b)
    before = check(b, request, rebuild=False)
    PROGRESSION_EDITS[edit](convo, progression)
    after = check(b, request, rebuild=where == "view")
    assert after != before
    add_turn(b, 7)  # lionagi appends it to the view too
    check(b, request, rebuild=False)


def test_current_progression_set_changed_grown_and_removed() -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    full = check(b, request)
    system = b.msgs.system.id
    b.metadata["current_progression"] = Progression(order=[system, convo.i3.id, convo.a3.id])
    short = check(b, request)
    b.metadata["current_progression"] = Progression(
        order=[system, convo.i1.id, convo.a1.id, convo.i3.id, convo.a3.id]
    )
    changed = check(b, request)
    b.metadata["current_progression"].append(convo.i2.id)  # an evicted record comes back
    b.metadata["current_progression"].append(convo.a2.id)
    check(b, request)
    add_turn(b, 5, tool=True)  # lionagi adds new records to the view
    grown = check(b, request)
    b.metadata["current_progression"] = Progression(order=list(b.metadata["current_progression"]))
    assert check(b, request) == grown  # an equal view in a new object
    del b.metadata["current_progression"]
    back = check(b, request)
    assert len({repr(x) for x in (full, short, changed, grown, back)}) == 5


def test_current_progression_shrunk_in_place_then_regrown() -> None:
    convo = Convo()
    b = convo.branch
    cp = view(b)
    request = current(b)
    before = check(b, request)
    removed = [cp.pop(), cp.pop()]
    check(b, request)
    for uid in reversed(removed):
        cp.append(uid)
    assert check(b, request) == before


def test_explicit_progression_grows_and_shrinks() -> None:
    convo = Convo()
    b = convo.branch
    ids = tuple(b.msgs.progression)
    instruction = current(b).instruction
    outcomes = []
    for k in (2, 3, 6, 9, 4, 2, 0, 9):
        outcomes.append(check(b, TurnRequest(instruction=instruction, progression=ids[:k])))
    # the same prefix gives the same outcome however it was reached
    assert outcomes[0] == outcomes[5] and outcomes[3] == outcomes[7]
    assert check(b, TurnRequest(instruction=instruction)) == outcomes[3]
    add_turn(b, 3)
    check(b, TurnRequest(instruction=instruction, progression=ids))
    check(b, TurnRequest(instruction=instruction))
    check(b, TurnRequest(instruction=instruction, progression=()))


# ====================================================== 4. record removal and replacement


@pytest.mark.parametrize("which", ["i2", "resp", "a2", "a3", "i1"])
def test_record_popped_while_its_id_stays_in_the_view(which: str) -> None:
    convo = Convo()
    b = convo.branch
    view(b)
    request = current(b)
    before = check(b, request)
    record = getattr(convo, which)
    b.msgs.messages.pop(record.id)
    missing = check(b, request)
    assert missing[:2] == ("error", "MissingIdsError")
    assert str(record.id) in missing[2]
    add_turn(b, 4)  # still missing after growth
    assert check(b, request)[:2] == ("error", "MissingIdsError")
    b.msgs.messages.include(record)  # the same object back
    check(b, request)
    b.metadata["current_progression"].pop()
    b.metadata["current_progression"].pop()
    assert check(b, request) == before


def test_record_popped_from_the_pile_leaves_the_default_view() -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    check(b, request)
    b.msgs.messages.pop(convo.a3.id)
    check(b, request)  # history ends with an unanswered instruction
    b.msgs.messages.pop(convo.resp.id)
    check(b, request)
    add_turn(b, 4)
    check(b, request)


REPLACEMENTS: dict[str, Callable[[Message], Message]] = {
    "equal-copy": lambda old: type(old).from_dict(old.to_dict()),
    "changed-copy": lambda old: _changed(type(old).from_dict(old.to_dict())),
}


def _changed(msg: Message) -> Message:
    content = msg.content
    if isinstance(content, InstructionContent):
        content.instruction = "replaced instruction"
    elif isinstance(msg, AssistantResponse):
        msg.content.assistant_response = "replaced answer"
    elif isinstance(msg, ActionResponse):
        msg.content.output = "replaced output"
    return msg


@pytest.mark.parametrize("how", list(REPLACEMENTS))
@pytest.mark.parametrize("which", ["i1", "i2", "i3", "a1", "a3", "resp"])
def test_record_replaced_by_another_object_under_the_same_id(which: str, how: str) -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    before = check(b, request, rebuild=False)
    old = getattr(convo, which)
    new = REPLACEMENTS[how](old)
    assert new.id == old.id and new is not old
    replace_record(b, old, new)
    after = check(b, request)
    assert (after == before) == (how == "equal-copy")
    old.content = type(old.content)()  # the dropped object no longer counts
    assert check(b, request, rebuild=False) == after
    add_turn(b, 2)
    check(b, request, rebuild=False)


def test_system_message_replaced_added_and_removed() -> None:
    convo = Convo(system=None)
    b = convo.branch
    request = current(b)
    none = check(b, request)
    b.msgs.add_message(system="Now there is a system.")
    added = check(b, request)
    b.msgs.add_message(system="A different system.")
    replaced = check(b, request)
    add_turn(b, 3)
    check(b, request)
    system = b.msgs.system
    b.msgs.messages.pop(system.id)
    b.msgs.system = None
    removed = check(b, request)
    assert len({repr(x) for x in (none, added, replaced, removed)}) == 4


def test_system_replaced_while_not_in_the_view() -> None:
    """The view (no system id in it) is unchanged; only the folded system text changed."""
    convo = Convo()
    b = convo.branch
    b.metadata["current_progression"] = Progression(order=list(b.msgs.progression)[1:])
    request = current(b)
    before = check(b, request)
    b.msgs.set_system(type(b.msgs.system)(content={"system_message": "Replaced."}))
    b.metadata["current_progression"] = Progression(order=list(b.msgs.progression)[1:])
    after = check(b, request)
    assert after != before and "Replaced." in str(after[2][0]["content"])


# ============================================================= 5. defects in the new tail


def test_consecutive_instructions_in_the_tail_then_repaired() -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    check(b, request)
    first = b.msgs.add_message(instruction="one")
    b.msgs.add_message(instruction="two")
    bad = check(b, request)
    assert bad[:3] == ("error", "HistoryError",
                       "Consecutive instructions require an intervening assistant response")
    answer = b.msgs.add_message(assistant_response="between")
    progression = b.msgs.progression
    progression.move(progression.index(answer.id), progression.index(first.id) + 1)
    assert check(b, request)[0] == "ok"


def test_consecutive_instructions_across_the_previous_end() -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    b.msgs.add_message(instruction="unanswered")
    good = check(b, request)
    extra = b.msgs.add_message(instruction="another")
    assert check(b, request)[0] == "error"
    add_turn(b, 2)  # growth does not hide it
    assert check(b, request)[0] == "error"
    b.msgs.progression.remove(extra.id)
    check(b, request)
    b.msgs.progression.pop()
    b.msgs.progression.pop()
    assert check(b, request) == good


def test_duplicate_id_in_the_tail_then_repaired() -> None:
    convo = Convo()
    b = convo.branch
    cp = view(b)
    request = current(b)
    good = check(b, request)
    cp.append(convo.i1.id)  # repeats a record of the warm prefix
    bad = check(b, request)
    assert bad[:2] == ("error", "HistoryError") and "duplicate ids" in bad[2]
    cp.pop()
    assert check(b, request) == good
    explicit = TurnRequest(instruction=request.instruction,
                           progression=(*cp, convo.a2.id))
    assert check(b, explicit)[0] == "error"
    check(b, request)


def test_missing_id_in_the_tail_then_repaired() -> None:
    convo = Convo()
    b = convo.branch
    cp = view(b)
    request = current(b)
    good = check(b, request)
    ghost = uuid4()
    cp.append(ghost)
    bad = check(b, request)
    assert bad[:2] == ("error", "MissingIdsError") and str(ghost) in bad[2]
    cp.pop()
    assert check(b, request) == good
    explicit = TurnRequest(instruction=request.instruction, progression=(*cp, uuid4()))
    assert check(b, explicit)[:2] == ("error", "MissingIdsError")
    assert check(b, request) == good


def test_unknown_subtype_in_the_tail_then_repaired() -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    good = check(b, request)
    memo = MemoNote(content={"note": "no rule"})
    b.msgs.messages.include(memo)
    bad = check(b, request, rebuild=False)
    assert bad[:2] == ("error", "UnknownMessageTypeError")
    assert f"id {memo.id}) is a MemoNote" in bad[2]
    b.msgs.messages.pop(memo.id)
    assert check(b, request) == good


def test_first_record_an_assistant_in_the_tail_then_repaired() -> None:
    b = Branch(system="S.")
    request = current(b)
    check(b, request)
    answer = b.msgs.add_message(assistant_response="first")
    bad = check(b, request)
    assert bad[:3] == ("error", "HistoryError",
                       "First message in progression must be an Instruction or System")
    question = b.msgs.add_message(instruction="asked first")
    b.msgs.progression.move(b.msgs.progression.index(question.id),
                            b.msgs.progression.index(answer.id))
    assert check(b, request)[0] == "ok"


def test_every_defect_kind_at_once_in_the_tail() -> None:
    convo = Convo()
    b = convo.branch
    cp = view(b)
    request = current(b)
    check(b, request)
    b.msgs.add_message(instruction="x")
    b.msgs.add_message(instruction="y")
    memo = MemoNote(content={"note": "no rule"})
    b.msgs.messages.include(memo)
    cp.append(memo.id)
    cp.append(convo.a1.id)
    cp.append(uuid4())
    assert check(b, request, rebuild=False)[:2] == ("error", "MissingIdsError")
    cp.pop()
    assert check(b, request, rebuild=False)[:2] == ("error", "HistoryError")
    cp.pop()
    assert check(b, request, rebuild=False)[:2] == ("error", "UnknownMessageTypeError")
    cp.remove(memo.id)
    assert check(b, request)[:2] == ("error", "HistoryError")


# ============================================================ 6. fold inputs change alone


def test_context_blocks_differ_per_call() -> None:
    convo = Convo()
    b = convo.branch
    instruction = current(b).instruction
    blocks = {
        "x": (ContextBlock("catalog", "SKU 1"),),
        "y": (ContextBlock("catalog", "SKU 2"), ContextBlock("memory", "m")),
        "none": (),
    }
    seen = {}
    for name in ("x", "y", "none", "x", "y"):
        got = check(b, TurnRequest(instruction=instruction, context_blocks=blocks[name]))
        assert seen.setdefault(name, got) == got
    assert distinct(list(seen.values())) == 3
    add_turn(b, 4)
    for name in ("y", "x", "none"):
        check(b, TurnRequest(instruction=instruction, context_blocks=blocks[name]))


def test_fold_inputs_edited_with_history_unchanged_and_grown() -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    check(b, request)
    convo.i1.content.guidance = None
    check(b, request)
    convo.i1.content.guidance = "back again"
    b.msgs.system.content.system_message = "Edited system."
    check(b, request)
    add_turn(b, 3)
    b.msgs.system.content.system_message = "Edited twice."
    convo.i1.content.guidance = {"tone": "terse"}
    check(b, request)


@pytest.mark.parametrize("system", ["S.", None], ids=["system", "no-system"])
def test_first_instruction_removed_from_the_view(system: str | None) -> None:
    convo = Convo(system=system)
    b = convo.branch
    cp = view(b)
    request = TurnRequest(instruction=current(b).instruction,
                          context_blocks=(ContextBlock("memory", "kept"),))
    before = check(b, request)
    cp.remove(convo.i1.id)  # no system: a leading assistant is allowed, the fold moves on
    if system is not None:
        cp.remove(convo.a1.id)
    after = check(b, request)
    assert after != before and after[0] == "ok"
    cp.insert(1 if system else 0, convo.i1.id)
    check(b, request)


def test_fold_target_moves_from_current_to_history() -> None:
    b = Branch(system="Folded.")
    request = TurnRequest(instruction=current(b).instruction,
                          context_blocks=(ContextBlock("memory", "m"),))
    alone = check(b, request)
    assert "Folded." in str(alone[2][-1]["content"])
    add_turn(b, 1)
    moved = check(b, request)
    assert "Folded." in str(moved[2][0]["content"])
    assert "Folded." not in str(moved[2][-1]["content"])


# ================================================ 7. the caller cannot corrupt the next compile


def test_editing_returned_messages_does_not_reach_the_next_compile() -> None:
    convo = Convo()
    b = convo.branch
    request = TurnRequest(
        instruction=b.msgs.create_instruction(instruction="look", images=[PNG]),
    )
    expected = check(b, request)
    for _ in range(2):
        compiled = compile_chat_request(b, request)
        lists = [m.content for m in compiled.messages if isinstance(m.content, list)]
        assert len(lists) == 2  # I3 in history and the current instruction
        for parts in lists:
            parts[0]["text"] = "tampered"
            parts[1]["image_url"]["url"] = "tampered"
            parts[1]["image_url"].clear()
            parts.append({"type": "text", "text": "appended"})
        provider = to_provider_messages(compiled)
        for message in provider:
            if isinstance(message["content"], list):
                message["content"][0]["text"] = "tampered too"
                message["content"].clear()
            message["content"] = "replaced"
        assert check(b, request) == expected
    add_turn(b, 5, images=True)
    compiled = compile_chat_request(b, request)
    for m in compiled.messages:
        if isinstance(m.content, list):
            m.content.clear()
    check(b, request)


def test_editing_a_returned_trace_does_not_reach_the_next_compile() -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    expected = check(b, request)
    trace = compile_traced(b, request)
    for part in trace.rendered:
        if isinstance(part.content, list):
            part.content[0]["text"] = "tampered"
    assert check(b, request) == expected


# ========================================================== 8. stateful: random edit sequences


def _record_edits(msg: Message, choice: int) -> None:
    """One in-place edit of a stored record, by kind."""
    content = msg.content
    if isinstance(msg, Instruction):
        [
            lambda: setattr(content, "instruction", f"edited {choice}"),
            lambda: content.prompt_context.append({"edit": choice}),
            lambda: setattr(content, "guidance", f"guide {choice}"),
            lambda: content.prompt_context.clear(),
        ][choice % 4]()
    elif isinstance(msg, AssistantResponse):
        content.assistant_response = f"answer edited {choice}"
    elif isinstance(msg, ActionResponse):
        [lambda: setattr(content, "output", {"edited": choice}),
         lambda: content.arguments.update(extra=choice)][choice % 2]()


class ResumeMachine(RuleBasedStateMachine):
    """Growth, in-place edits, view edits and record removal in any order; every compile
    equals the compile with the fast path off."""

    def __init__(self) -> None:
        super().__init__()
        self.convo = Convo()
        self.removed: list[Message] = []
        self.n = 0

    @initialize(system=st.booleans())
    def start(self, system: bool) -> None:
        self.convo = Convo(system="Be careful." if system else None)
        self.request = current(self.convo.branch)

    @property
    def b(self) -> Branch:
        return self.convo.branch

    def active(self) -> Progression:
        return self.b.progression

    @rule(kind=st.sampled_from(["plain", "tool", "images", "instruction", "assistant",
                                "result"]))
    def append(self, kind: str) -> None:
        self.n += 1
        if kind == "instruction":
            self.b.msgs.add_message(instruction=f"lone {self.n}")
        elif kind in GROWTH:
            GROWTH[kind](self.b, self.n)
        else:
            GROWTH["assistant-only" if kind == "assistant" else "result-only"](self.b, self.n)

    @rule(name=st.sampled_from(sorted(MUTATIONS)))
    def mutate(self, name: str) -> None:
        # an edit may not apply to this state (e.g. its item already deleted): no change then
        with contextlib.suppress(IndexError, KeyError, TypeError, AttributeError):
            MUTATIONS[name](self.convo)

    @rule(index=st.integers(0, 60), choice=st.integers(0, 7))
    def edit_record(self, index: int, choice: int) -> None:
        records = list(self.b.msgs.messages.collections.values())
        if records:
            _record_edits(records[index % len(records)], choice)

    @rule(op=st.sampled_from(["set", "drop", "remove", "pop", "swap", "defect", "repair"]),
          i=st.integers(0, 60), j=st.integers(0, 60))
    def edit_view(self, op: str, i: int, j: int) -> None:
        b = self.b
        if op == "set":
            view(b)
            return
        if op == "drop":
            b.metadata.pop("current_progression", None)
            return
        p = self.active()
        if op == "defect":  # a repeated id, or one no record has
            p.append(p[i % len(p)] if len(p) and j % 2 else uuid4())
        elif op == "repair":
            pile, seen = b.msgs.messages, set()
            keep = [u for u in p if u in pile and not (u in seen or seen.add(u))]
            p.clear()
            p.extend(Progression(order=keep))
        elif not len(p):
            return
        elif op == "remove":
            p.pop(i % len(p))
        elif op == "pop":
            p.pop()
        elif op == "swap":
            p.swap(i % len(p), j % len(p))

    @rule(index=st.integers(0, 60))
    def remove_record(self, index: int) -> None:
        pile = self.b.msgs.messages
        system = self.b.msgs.system
        records = [m for m in pile.collections.values() if system is None or m.id != system.id]
        if records:
            record = records[index % len(records)]
            pile.pop(record.id)
            self.removed.append(record)

    @rule(index=st.integers(0, 60), changed=st.booleans())
    def replace_record(self, index: int, changed: bool) -> None:
        pile = self.b.msgs.messages
        system = self.b.msgs.system
        records = [m for m in pile.collections.values()
                   if (system is None or m.id != system.id) and m.id in pile.progression]
        if records:
            old = records[index % len(records)]
            new = type(old).from_dict(old.to_dict())
            replace_record(self.b, old, _changed(new) if changed else new)

    @rule()
    def restore_record(self) -> None:
        if self.removed:
            self.b.msgs.messages.include(self.removed.pop())

    @rule(blocks=st.booleans(), explicit=st.booleans())
    def compile(self, blocks: bool, explicit: bool) -> None:
        request = TurnRequest(
            instruction=self.request.instruction,
            progression=tuple(self.active()) if explicit else None,
            context_blocks=(ContextBlock("memory", "m"),) if blocks else (),
        )
        check(self.b, request, rebuild=False)

    @rule()
    def compile_again(self) -> None:
        check(self.b, self.request, rebuild=False)

    @rule(budget=st.sampled_from([None, 300, 900]), results=st.sampled_from([None, 40]))
    def compile_amendment1(self, budget: int | None, results: int | None) -> None:
        budgets = amendment1.SectionBudgets(history=budget, tool_results=results)
        request = amendment1.TurnRequest(instruction=self.request.instruction,
                                         context_blocks=(amendment1.ContextBlock("m", "x"),))
        _a1_with(self.b, request, budgets, len)

    @rule(record=st.booleans())
    def compile_prompt_cache(self, record: bool) -> None:
        """A prompt-cache compile; ``record``: its instruction is recorded and answered (the
        next one reads its SentRecord)."""
        request = TurnRequest(instruction=self.b.msgs.create_instruction(instruction="cached"),
                              context_blocks=(ContextBlock("m", "x"),))
        result = cached_check(self.b, request, None)
        if record and result is not None:
            self.b.msgs.add_message(instruction=result.compiled.instruction)
            self.b.msgs.add_message(assistant_response="cached answer")

    def teardown(self) -> None:
        if getattr(self, "request", None) is not None:
            got = check(self.b, self.request, rebuild=False)
            if got[0] == "ok" and not self.removed:
                assert full_outcome(rebuilt(self.b), self.request) == got


ResumeMachine.TestCase.settings = settings(
    settings.default,
    max_examples=max(10, settings.default.max_examples // 5),
    stateful_step_count=25,
)
TestResumeMachine = pytest.mark.slow(ResumeMachine.TestCase)


# ===================================================================== 9. threads


class _ReadWrite:
    """Many compiles at once, appends alone (a record enters lionagi's pile in two steps); a
    waiting append goes before new compiles."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False
        self._waiting = 0

    def read(self) -> Any:
        rw = self

        class _Read:
            def __enter__(self) -> None:
                with rw._cond:
                    while rw._writing or rw._waiting:
                        rw._cond.wait()
                    rw._readers += 1

            def __exit__(self, *exc: Any) -> None:
                with rw._cond:
                    rw._readers -= 1
                    rw._cond.notify_all()

        return _Read()

    def write(self) -> Any:
        rw = self

        class _Write:
            def __enter__(self) -> None:
                with rw._cond:
                    rw._waiting += 1
                    while rw._writing or rw._readers:
                        rw._cond.wait()
                    rw._waiting -= 1
                    rw._writing = True

            def __exit__(self, *exc: Any) -> None:
                with rw._cond:
                    rw._writing = False
                    rw._cond.notify_all()

        return _Write()


def test_threads_compile_explicit_prefixes_while_one_appends(busy_switching: None) -> None:
    """Readers compile random prefixes of the growing record (explicit progressions) while a
    writer appends; each result equals, afterwards, the slow compile of that prefix."""
    convo = Convo()
    b = convo.branch
    request = current(b)
    lock = threading.Lock()
    ids: list[UUID] = list(b.msgs.progression)
    done = threading.Event()
    start = threading.Barrier(5)

    def writer() -> None:
        start.wait()
        for n in range(12):
            add_turn(b, n, tool=n % 3 == 0)
            with lock:
                ids[:] = list(b.msgs.progression)  # records are in the pile before the view
        done.set()

    def reader(k: int) -> list[tuple[tuple[UUID, ...], tuple[Any, ...]]]:
        start.wait()
        got = []
        step = 0
        while not done.is_set() or step < 6:
            with lock:
                snapshot = tuple(ids)
            cut = len(snapshot) - (step * (k + 1)) % 5 if step % 2 else len(snapshot)
            prefix = snapshot[: max(cut, 1)]
            got.append((prefix, full_outcome(
                b, TurnRequest(instruction=request.instruction, progression=prefix))))
            step += 1
        return got

    with ThreadPoolExecutor(max_workers=5) as pool:
        w = pool.submit(writer)
        results = list(pool.map(reader, range(4)))
        w.result()
    for got in results:
        for prefix, outcome in got:
            expected = full_slow_outcome(
                b, TurnRequest(instruction=request.instruction, progression=prefix))
            assert outcome == expected


def test_threads_compile_the_default_view_between_appends(busy_switching: None) -> None:
    """Readers compile the branch's own view concurrently with each other; appends wait for
    no compile to run. Each result is the slow compile of some state the writer produced,
    and each reader sees those states in order."""
    states = 10
    twin = Convo()  # the same history, grown the same way, compiled slowly
    convo = Convo()
    b = convo.branch
    instruction = current(b).instruction
    request = TurnRequest(instruction=instruction)
    twin_request = TurnRequest(instruction=instruction)
    expected = [full_slow_outcome(twin.branch, twin_request)]
    for n in range(1, states):
        GROWTH["tool" if n % 2 else "assistant-only"](twin.branch, n)
        expected.append(full_slow_outcome(twin.branch, twin_request))
    assert distinct(expected) == states
    index = {repr(e): i for i, e in enumerate(expected)}
    rw = _ReadWrite()
    done = threading.Event()

    def writer() -> None:
        for n in range(1, states):
            with rw.write():
                GROWTH["tool" if n % 2 else "assistant-only"](b, n)
        done.set()

    def reader() -> list[int]:
        seen = []
        while True:
            finished = done.is_set()
            with rw.read():
                seen.append(index[repr(full_outcome(b, request))])
            if finished:
                return seen

    with ThreadPoolExecutor(max_workers=4) as pool:
        readers = [pool.submit(reader) for _ in range(3)]
        pool.submit(writer).result()
        for future in readers:
            seen = future.result()
            assert seen == sorted(seen) and seen[-1] == states - 1


def _observe_default(b: Branch, instruction: Instruction) -> tuple[Any, ...]:
    return full_outcome(b, TurnRequest(instruction=instruction))


def _observe_cached(b: Branch, instruction: Instruction) -> tuple[Any, ...]:
    request = TurnRequest(instruction=instruction, context_blocks=(ContextBlock("m", "x"),))
    return _cached(b, request, None)[0]


def _observe_a1(b: Branch, instruction: Instruction) -> tuple[Any, ...]:
    request = amendment1.TurnRequest(instruction=instruction)
    try:
        compiled = amendment1.compile_chat_request(
            b, request, budgets=amendment1.SectionBudgets(history=900, tool_results=80),
            measure=len)
    except Exception as exc:
        return error_outcome(exc)
    return ("ok", copy.deepcopy(compiled.messages), compiled.bounds)


OBSERVERS: dict[str, Callable[[Branch, Instruction], tuple[Any, ...]]] = {
    "default": _observe_default,
    "prompt-cache": _observe_cached,
    "amendment1": _observe_a1,
}


@pytest.mark.parametrize("profile", list(OBSERVERS))
def test_threads_compile_between_edits_of_every_kind(busy_switching: None, profile: str) -> None:
    """A writer applies growth, in-place edits, view edits and a record removal, one at a
    time with no compile running; between them readers compile concurrently. Every result
    equals the slow compile of the state it was made in."""
    observe = OBSERVERS[profile]
    convo = Convo()
    b = convo.branch
    instruction = current(b).instruction

    def slow() -> tuple[Any, ...]:
        with no_fast_path():
            return observe(b, instruction)

    cp = view(b)
    held: list[ActionResponse] = []
    edits: list[Callable[[], object]] = [
        lambda: add_turn(b, 1, tool=True),
        lambda: MUTATIONS["context-nested-list"](convo),
        lambda: b.msgs.add_message(assistant_response="run continued"),
        lambda: MUTATIONS["assistant-text"](convo),
        lambda: cp.remove(convo.resp.id),
        lambda: held.append(add_result(b, 2)),
        lambda: b.msgs.messages.pop(held[0].id),  # its id stays in the view: refused
        lambda: cp.remove(held[0].id),
        lambda: MUTATIONS["system-text"](convo),
        lambda: add_turn(b, 3, images=True),
    ]
    rw = _ReadWrite()
    expected = [slow()]
    epoch = [0]
    done = threading.Event()

    def writer() -> None:
        for edit in edits:
            with rw.write():
                edit()
                expected.append(slow())
                epoch[0] += 1
        done.set()

    def reader() -> list[tuple[int, tuple[Any, ...]]]:
        seen = []
        while True:
            finished = done.is_set()
            with rw.read():
                seen.append((epoch[0], observe(b, instruction)))
            if finished:
                return seen

    with ThreadPoolExecutor(max_workers=4) as pool:
        readers = [pool.submit(reader) for _ in range(3)]
        pool.submit(writer).result()
        results = [future.result() for future in readers]
    assert [e[0] for e in expected].count("error") == 1 and distinct(expected) == 10
    for seen in results:
        for at, got in seen:
            assert got == expected[at]
        assert seen[-1][0] == len(edits)


# ======================================== 10. the prompt-cache profile and Amendment 1


def _cached(b: Branch, request: TurnRequest, tools: Any) -> tuple[tuple[Any, ...], Any]:
    try:
        result = compile_cached(b, request, tools)
    except Exception as exc:
        return error_outcome(exc), None
    return (
        "ok",
        to_provider_messages(result.compiled),
        result.layout,
        result.record.to_metadata(),
        result.compiled.instruction.to_dict(),
    ), result


def cached_check(b: Branch, request: TurnRequest, tools: Any, *, rebuild: bool = False) -> Any:
    """The prompt-cache compile equals it with the fast path off (and, ``rebuild``, a cold
    compile of the branch rebuilt from scratch); returns the fast result."""
    fast, result = _cached(b, request, tools)
    with no_fast_path():
        slow, _ = _cached(b, request, tools)
    assert fast == slow
    if rebuild:
        assert _cached(rebuilt(b), request, tools)[0] == fast
    return result


@pytest.mark.parametrize("tools", ["registered", "none"])
def test_prompt_cache_profile_under_growth_and_mutation(tools: str) -> None:
    b = Branch(system="Terse.", tools=[lookup])
    schemas = b.acts.schema_list if tools == "registered" else None
    recorded: list[Instruction] = []
    for n in range(7):
        request = TurnRequest(
            instruction=b.msgs.create_instruction(instruction=f"q{n}", context=[{"n": n}]),
            tool_schemas=tuple(b.acts.schema_list),
            context_blocks=(ContextBlock("catalog", f"SKU {n // 3}"),),
        )
        result = cached_check(b, request, schemas)
        cached_check(b, request, schemas)  # unchanged branch, compiled again
        recorded.append(b.msgs.add_message(instruction=result.compiled.instruction))
        if n % 2:
            add_result(b, n)
        b.msgs.add_message(assistant_response=f"a{n}")
        if n == 3:
            recorded[1].content.prompt_context[0]["n"] = "rewritten"  # a history rewrite
        if n == 5:
            recorded[2].metadata.pop(RECORD_KEY)  # no revision bump: metadata only
        if n == 6:
            recorded[0].metadata[RECORD_KEY] = recorded[4].metadata[RECORD_KEY]
    assert result is not None


def _cached_conversation(turns: int, *, images: bool = False) -> tuple[Branch, list[Instruction]]:
    """A prompt-cache conversation: each compiled instruction recorded, then an answer."""
    b = Branch(system="Terse.", tools=[lookup])
    recorded: list[Instruction] = []
    for n in range(turns):
        extra: dict[str, Any] = {"images": [PNG]} if images and n % 2 else {}
        request = TurnRequest(
            instruction=b.msgs.create_instruction(instruction=f"q{n}", **extra),
            tool_schemas=tuple(b.acts.schema_list),
            context_blocks=(ContextBlock("catalog", "SKU"),),
        )
        result = cached_check(b, request, b.acts.schema_list)
        recorded.append(b.msgs.add_message(instruction=result.compiled.instruction))
        b.msgs.add_message(assistant_response=f"a{n}")
    return b, recorded


def _next_cached(b: Branch, text: str = "next") -> TurnRequest:
    return TurnRequest(instruction=b.msgs.create_instruction(instruction=text),
                       tool_schemas=tuple(b.acts.schema_list),
                       context_blocks=(ContextBlock("catalog", "SKU"),))


RECORD_EDITS: dict[str, Callable[[Branch, list[Instruction]], None]] = {
    "text-in-place": lambda b, r: r[1].metadata[RECORD_KEY].__setitem__("text", "other"),
    "prefix-in-place": lambda b, r: r[-1].metadata[RECORD_KEY].__setitem__("prefix", "0" * 64),
    "length-in-place": lambda b, r: r[-1].metadata[RECORD_KEY].__setitem__("messages", 2),
    "stable-in-place": lambda b, r: r[-1].metadata[RECORD_KEY].__setitem__("stable", "x"),
    "record-removed": lambda b, r: r[1].metadata.pop(RECORD_KEY),
    "metadata-replaced": lambda b, r: setattr(r[1], "metadata", {}),
    "record-copied-onto-another": lambda b, r: r[0].metadata.__setitem__(
        RECORD_KEY, dict(r[2].metadata[RECORD_KEY])),
    "record-given-to-a-plain-instruction": lambda b, r: _plain_with_record(b, r),
    "record-moved-in-the-pile": lambda b, r: _moved_in_pile(b, r[1]),
}


def _plain_with_record(b: Branch, recorded: list[Instruction]) -> None:
    plain = next(m for m in b.msgs.messages
                 if isinstance(m, Instruction) and RECORD_KEY not in m.metadata)
    plain.metadata[RECORD_KEY] = {**recorded[-1].metadata[RECORD_KEY], "messages": 3}


def _moved_in_pile(b: Branch, record: Message) -> None:
    """The same object out of the pile and back in: the view (kept) is unchanged."""
    view(b)
    b.msgs.messages.pop(record.id)
    b.msgs.messages.include(record)


@pytest.mark.parametrize("grow", [False, True], ids=["same-view", "grown"])
@pytest.mark.parametrize("edit", list(RECORD_EDITS))
def test_prompt_cache_record_edits_between_compiles(edit: str, grow: bool) -> None:
    b, recorded = _cached_conversation(4)
    b.msgs.add_message(instruction="plain, never compiled")
    b.msgs.add_message(assistant_response="ok")
    request = _next_cached(b)
    cached_check(b, request, b.acts.schema_list)
    RECORD_EDITS[edit](b, recorded)
    if grow:
        add_turn(b, 1)
    cached_check(b, request, b.acts.schema_list, rebuild=True)


def test_prompt_cache_caller_edits_do_not_reach_the_next_compile() -> None:
    b, _ = _cached_conversation(4, images=True)
    request = _next_cached(b)
    expected, _ = _cached(b, request, b.acts.schema_list)
    for _ in range(2):
        result = compile_cached(b, request, b.acts.schema_list)
        lists = [m.content for m in result.compiled.messages if isinstance(m.content, list)]
        assert lists
        for parts in lists:
            parts[0]["text"] = "tampered"
            parts.append({"type": "text", "text": "appended"})
        result.compiled.instruction.metadata[RECORD_KEY]["text"] = "tampered"
        assert _cached(b, request, b.acts.schema_list)[0] == expected
    add_turn(b, 3, images=True)
    cached_check(b, request, b.acts.schema_list)


def _a1(b: Branch, request: amendment1.TurnRequest, budgets: Any) -> tuple[Any, ...]:
    try:
        compiled = amendment1.compile_chat_request(b, request, budgets=budgets, measure=len)
    except Exception as exc:
        return error_outcome(exc)
    return ("ok", copy.deepcopy(compiled.messages), compiled.bounds,
            compiled.instruction.to_dict())


def a1_check(b: Branch, request: amendment1.TurnRequest, budgets: Any) -> tuple[Any, ...]:
    fast = _a1(b, request, budgets)
    with no_fast_path():
        assert fast == _a1(b, request, budgets)
    return fast


@pytest.mark.parametrize(
    "budgets",
    [None, amendment1.SectionBudgets(history=600, tool_results=120)],
    ids=["unbounded", "history-and-results-bounded"],
)
def test_amendment1_under_growth_and_mutation(budgets: Any) -> None:
    convo = Convo()
    b = convo.branch
    seen = []
    for n in range(8):
        request = amendment1.TurnRequest(
            instruction=b.msgs.create_instruction(instruction=f"q{n}"),
            context_blocks=(amendment1.ContextBlock("catalog", f"v{n % 2}"),),
        )
        seen.append(a1_check(b, request, budgets))
        a1_check(b, request, budgets)
        add_turn(b, n, tool=n % 2 == 0)
        if n == 2:
            MUTATIONS["action-output-in-place"](convo)
        if n == 4:
            MUTATIONS["fold-target-guidance"](convo)
        if n == 5:
            b.msgs.messages.pop(convo.resp.id)
        if n == 6:
            b.msgs.add_message(assistant_response="run continued")
    assert distinct(seen) == len(seen)


def _half(text: str) -> int:
    return len(text) // 2


A1_CALLS: list[tuple[Any, Callable[[str], int]]] = [
    (None, len),
    (amendment1.SectionBudgets(history=500), len),
    (amendment1.SectionBudgets(history=500), _half),
    (amendment1.SectionBudgets(history=250, tool_results=60), len),
    (amendment1.SectionBudgets(tool_results=60), _half),
    (None, _half),
    (amendment1.SectionBudgets(history=500), len),
]


def _a1_with(b: Branch, request: amendment1.TurnRequest, budgets: Any,
             measure: Callable[[str], int]) -> tuple[Any, ...]:
    def run() -> tuple[Any, ...]:
        try:
            compiled = amendment1.compile_chat_request(
                b, request, budgets=budgets, measure=measure)
        except Exception as exc:
            return error_outcome(exc)
        return ("ok", copy.deepcopy(compiled.messages), compiled.bounds,
                compiled.instruction.to_dict())

    fast = run()
    with no_fast_path():
        assert fast == run()
    return fast


def test_amendment1_budgets_and_measures_change_between_calls() -> None:
    """Every call on one branch with another budget or measure (the same turns, other
    decisions), with and without growth between them."""
    convo = Convo()
    b = convo.branch
    for n in range(3):
        add_turn(b, n, tool=True)
    instruction = b.msgs.create_instruction(instruction="now")
    request = amendment1.TurnRequest(instruction=instruction)
    seen = [_a1_with(b, request, budgets, measure) for budgets, measure in A1_CALLS]
    assert seen[1] == seen[6] and distinct(seen) == 4  # the decisions differ between calls
    for step, (budgets, measure) in enumerate(A1_CALLS):
        add_result(b, 10 + step)
        if step % 2:
            b.msgs.add_message(instruction=f"more {step}")
            b.msgs.add_message(assistant_response=f"reply {step}")
        _a1_with(b, request, budgets, measure)


def test_amendment1_view_exclusions_change_with_the_view_unchanged() -> None:
    """Records evicted from the view (``current_progression``) are history entries; adding one
    to the pile outside the view, or changing why it is out, changes only those entries."""
    from lionagi_turns.profiles.amendment1._views import EXCLUSIONS_KEY

    convo = Convo()
    b = convo.branch
    cp = view(b)
    cp.remove(convo.resp.id)
    request = amendment1.TurnRequest(instruction=b.msgs.create_instruction(instruction="now"))
    budgets = amendment1.SectionBudgets(history=800)
    first = _a1_with(b, request, budgets, len)
    outside = b.msgs.add_message(assistant_response="kept out of the view")
    cp.remove(outside.id)
    second = _a1_with(b, request, budgets, len)
    b.metadata[EXCLUSIONS_KEY] = {str(outside.id): "compacted", str(convo.resp.id): "evicted"}
    third = _a1_with(b, request, budgets, len)
    b.metadata[EXCLUSIONS_KEY][str(outside.id)] = "evicted"  # edited in place
    fourth = _a1_with(b, request, budgets, len)
    assert distinct([first, second, third]) == 3 and fourth == second
    add_turn(b, 5)
    _a1_with(b, request, budgets, len)


def test_profiles_interleaved_on_one_growing_branch() -> None:
    b = Branch(system="Shared.", tools=[lookup])
    for n in range(5):
        instruction = b.msgs.create_instruction(instruction=f"q{n}", context=[{"n": n}])
        check(b, TurnRequest(instruction=instruction), rebuild=False)
        result = cached_check(b, TurnRequest(instruction=instruction), b.acts.schema_list)
        a1_check(b, amendment1.TurnRequest(instruction=instruction), None)
        check(b, TurnRequest(instruction=instruction), rebuild=False)
        b.msgs.add_message(instruction=result.compiled.instruction)
        if n % 2:
            add_result(b, n)
        b.msgs.add_message(assistant_response=f"a{n}")


# ============================================================== ReAct calls between turns


def _react(b: Branch, request: TurnRequest, items: list[Any] | None) -> tuple[Any, ...]:
    try:
        compiled = compile_chat_request(b, request, react_context=items)
    except Exception as exc:
        return error_outcome(exc)
    return ("ok", to_provider_messages(compiled))


def test_react_calls_between_plain_compiles() -> None:
    """The ReAct step changes this request's copies of kept instructions; a plain compile
    after it sends them whole again."""
    item = {"task": "shared"}
    b = Branch(system="S.")
    for n in range(3):
        b.msgs.add_message(instruction=f"q{n}", context=[item, f"own {n}"])
        b.msgs.add_message(assistant_response=f"a{n}")
    request = TurnRequest(instruction=b.msgs.create_instruction(instruction="now",
                                                                 context=[item]))
    plans: list[list[Any] | None] = [None, [item], None, [item], [item], None]
    seen = []
    for step, items in enumerate(plans):
        fast = _react(b, request, items)
        with no_fast_path():
            assert fast == _react(b, request, items)
        seen.append(fast)
        if step == 3:
            b.msgs.add_message(instruction="q3", context=[item])
            b.msgs.add_message(assistant_response="a3")
    assert seen[0] == seen[2] and seen[0] != seen[1]
    assert seen[5] != seen[4]


# ================================================ profiles on the seam with a reuse key


def _traced(b: Branch, request: TurnRequest, profile: CompileProfile) -> tuple[Any, ...]:
    try:
        trace = compile_traced(b, request, profile=profile)
    except Exception as exc:
        return error_outcome(exc)
    return ("ok", to_provider_messages(trace.compiled), trace.fold_message_index,
            [(p.source, p.role, copy.deepcopy(p.content), p.message_index, p.folded)
             for p in trace.rendered])


def traced_check(b: Branch, request: TurnRequest, profile: CompileProfile) -> tuple[Any, ...]:
    fast = _traced(b, request, profile)
    with no_fast_path():
        assert fast == _traced(b, request, profile)
    return fast


def _newest(k: int) -> Callable[[Projection, TurnRequest], Bounded]:
    def bound(projected: Projection, request: TurnRequest) -> Bounded:
        return Bounded(Projection(projected.turns[-k:], projected.pending, projected.defects,
                                  projected.pending_sources))
    return bound


def _without_second(projected: Projection, request: TurnRequest) -> Bounded:
    turns = projected.turns[:1] + projected.turns[2:]
    return Bounded(
        Projection(turns, projected.pending, projected.defects, projected.pending_sources)
    )


BOUNDED: dict[str, CompileProfile] = {
    "newest-three": CompileProfile(name="t", reuse="newest-three", bound=_newest(3)),
    "newest-five": CompileProfile(name="t", reuse="newest-five", bound=_newest(5)),
    "all-but-second": CompileProfile(name="t", reuse="all-but-second", bound=_without_second),
    "identity": CompileProfile(name="t", reuse="identity", bound=lambda p, r: Bounded(p)),
    "current-fold": CompileProfile(name="t", reuse="current-fold", fold_target="current"),
}


@pytest.mark.parametrize("name", list(BOUNDED))
def test_a_bounded_profile_with_a_reuse_key_under_growth_and_edits(name: str) -> None:
    profile = BOUNDED[name]
    convo = Convo()
    b = convo.branch
    instruction = current(b).instruction
    blocks = (ContextBlock("memory", "m"),)
    for n in range(6):
        for context_blocks in ((), blocks):
            request = TurnRequest(instruction=instruction, context_blocks=context_blocks)
            traced_check(b, request, profile)
            traced_check(b, request, profile)
        GROWTH[["plain", "tool", "assistant-only", "result-only", "images", "plain"][n]](b, n)
        if n == 3:
            MUTATIONS["context-dict-value"](convo)


def test_a_change_made_while_a_compile_renders_is_seen_by_the_next() -> None:
    """A profile hook edits an already rendered record in the middle of the render pass; the
    compile after it sends the edit."""
    convo = Convo()
    b = convo.branch
    edits = iter(["edited while compiling"])

    def history_text(branch: Branch, turn: Any, rendered: Any) -> Any:
        if turn.message is convo.i3:
            text = next(edits, None)
            if text is not None:
                convo.i2.content.instruction = text
        return rendered

    profile = CompileProfile(name="t", reuse="hooked", history_text=history_text)
    request = current(b)
    first = _traced(b, request, profile)
    assert "edited while compiling" not in str(first[1])
    after = traced_check(b, request, profile)
    assert "edited while compiling" in str(after[1])


def test_empty_renderings_between_compiles() -> None:
    """Omitted (empty) assistant replies keep every later message at its place when turns
    are reused, refolded and grown."""
    b = Branch()
    m = b.msgs
    m.add_message(instruction="   ")
    empty = m.add_message(assistant_response="placeholder")
    empty.content.assistant_response = ""
    m.add_message(instruction="real")
    m.add_message(assistant_response="   ")
    instruction = current(b).instruction
    blocks = (ContextBlock("memory", "m"),)
    for step in range(4):
        for context_blocks in ((), blocks, ()):
            check(b, TurnRequest(instruction=instruction, context_blocks=context_blocks),
                  rebuild=False)
        quiet = m.add_message(assistant_response="placeholder")
        quiet.content.assistant_response = ""  # a run continued by an empty reply
        if step % 2:
            add_turn(b, step)


def test_results_before_the_first_instruction_fold_target() -> None:
    b = Branch(system="S.")
    add_result(b, 1)
    m = b.msgs
    m.add_message(instruction="first, with the results")
    m.add_message(assistant_response="a")
    instruction = current(b).instruction
    for n in range(3):
        for blocks in ((), (ContextBlock("memory", f"m{n}"),)):
            check(b, TurnRequest(instruction=instruction, context_blocks=blocks))
        add_turn(b, n, tool=True)


# ============================================ 11. which compiles resume (the lead's seam)


def _history_parts(trace: Any) -> int:
    return len(trace.rendered) - 1


@pytest.mark.parametrize("kind", list(GROWTH))
def test_growth_only_resumes_without_a_full_walk(kind: str, fast_walks: list[int]) -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    previous = compile_traced(b, request)
    assert len(fast_walks) == 1
    for n in range(1, 4):
        GROWTH[kind](b, n)
        trace = compile_traced(b, request)
        assert len(fast_walks) == 1, "growth alone must resume the previous walk"
        assert trace.reused > 0
        continued = kind == "assistant-only"
        assert trace.reused == _history_parts(previous) - (1 if continued else 0)
        assert full_outcome(b, request) == full_slow_outcome(b, request)
        previous = trace


def test_slow_rebuilt_and_other_profile_compiles_between_do_not_stop_resuming(
    fast_walks: list[int],
) -> None:
    """The differential checks of this file compile with the fast path off, compile a rebuilt
    twin (same branch id) and other profiles between two compiles; none of them may turn the
    next compile of the branch into a full walk (or these tests would not test resuming)."""
    b = Branch(system="S.", tools=[lookup])
    add_turn(b, 0)
    request = current(b)
    compile_traced(b, request)
    assert len(fast_walks) == 1
    full_slow_outcome(b, request)
    full_outcome(rebuilt(b), request)  # a full walk of the twin
    compile_cached(b, TurnRequest(instruction=request.instruction), None)
    amendment1.compile_chat_request(b, amendment1.TurnRequest(instruction=request.instruction),
                                    measure=len)
    count = len(fast_walks)
    add_turn(b, 1)
    trace = compile_traced(b, request)
    assert len(fast_walks) == count and trace.reused > 0


def test_check_itself_resumes(fast_walks: list[int]) -> None:
    b = Convo().branch
    request = current(b)
    check(b, request)
    count = len(fast_walks)
    add_turn(b, 1)
    check(b, request, rebuild=False)
    assert len(fast_walks) == count


def _walked_after(change: Callable[[], object], b: Branch, request: TurnRequest,
                  fast_walks: list[int]) -> tuple[int, Any]:
    compile_traced(b, request)
    before = len(fast_walks)
    change()
    try:
        trace = compile_traced(b, request)
    except Exception:
        trace = None
    return len(fast_walks) - before, trace


@pytest.mark.parametrize("grow", [False, True], ids=["same-view", "grown"])
@pytest.mark.parametrize("name", list(MUTATIONS))
def test_every_mutation_walks_in_full(name: str, grow: bool, fast_walks: list[int]) -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)

    def change() -> None:
        MUTATIONS[name](convo)
        if grow:
            add_turn(b, 9)

    walked, trace = _walked_after(change, b, request, fast_walks)
    assert walked == 1 and trace is not None and trace.reused == 0
    check(b, request, rebuild=False)


REFUSED_EDITS = {  # the edits of PROGRESSION_EDITS that leave a view the compiler refuses
    "remove-middle-assistant": CONSECUTIVE_INSTRUCTIONS,
    "reverse": FIRST_MESSAGE_RULE,
}


@pytest.mark.parametrize("edit", list(PROGRESSION_EDITS))
def test_every_progression_edit_walks_in_full(edit: str, fast_walks: list[int]) -> None:
    convo = Convo()
    b = convo.branch
    progression = view(b)
    request = current(b)
    compile_traced(b, request)
    before = len(fast_walks)
    PROGRESSION_EDITS[edit](convo, progression)
    if edit in REFUSED_EDITS:
        with pytest.raises(HistoryError) as raised:
            compile_traced(b, request)
        assert type(raised.value) is HistoryError
        assert str(raised.value) == REFUSED_EDITS[edit]
    else:
        assert compile_traced(b, request).reused == 0
    assert len(fast_walks) - before == 1
    check(b, request, rebuild=False)


def _pop_in_view(c: Convo) -> None:
    view(c.branch)
    c.branch.msgs.messages.pop(c.a2.id)


INVALIDATING: dict[str, Callable[[Convo], object]] = {
    "record-popped-id-in-view": _pop_in_view,
    "record-popped": lambda c: c.branch.msgs.messages.pop(c.a3.id),
    "record-replaced-equal": lambda c: replace_record(
        c.branch, c.i2, Instruction.from_dict(c.i2.to_dict())),
    "content-replaced-equal": lambda c: setattr(
        c.a1, "content", type(c.a1.content)(assistant_response="one")),
    "system-replaced": lambda c: c.branch.msgs.add_message(system="Other."),
    "system-removed": lambda c: (c.branch.msgs.messages.pop(c.branch.msgs.system.id),
                                 setattr(c.branch.msgs, "system", None)),
    "view-set": lambda c: view(c.branch).pop(),
    "view-removed": lambda c: c.branch.metadata.pop("current_progression"),
    "record-moved-in-pile": lambda c: _moved_in_pile(c.branch, c.a1),
    "untracked-value-added": lambda c: c.i2.content.prompt_context.append(("t", [1])),
}


@pytest.mark.parametrize("name", list(INVALIDATING))
def test_every_record_change_walks_in_full(name: str, fast_walks: list[int]) -> None:
    convo = Convo()
    b = convo.branch
    request = current(b)
    if name == "view-removed":  # a view without the tool result exists before the warm compile
        view(b).remove(convo.resp.id)
    walked, _ = _walked_after(lambda: INVALIDATING[name](convo), b, request, fast_walks)
    assert walked == 1
    check(b, request, rebuild=False)


def test_a_tail_defect_walks_in_full_and_the_repair_resumes(fast_walks: list[int]) -> None:
    convo = Convo()
    b = convo.branch
    cp = view(b)
    request = current(b)
    compile_traced(b, request)
    defects: list[Callable[[], object]] = [
        lambda: cp.append(uuid4()),
        lambda: cp.append(convo.i1.id),
        lambda: (b.msgs.add_message(instruction="x"), b.msgs.add_message(instruction="y")),
    ]
    for defect in defects:
        size = len(cp)
        walked, trace = _walked_after(defect, b, request, fast_walks)
        assert walked == 1 and trace is None
        while len(cp) > size:
            cp.pop()
    before = len(fast_walks)
    add_turn(b, 3)  # the warm walk is still the last successful one
    assert compile_traced(b, request).reused > 0 and len(fast_walks) == before


def test_untracked_values_walk_in_full_every_time(fast_walks: list[int]) -> None:
    convo = Convo()
    b = convo.branch
    b.msgs.add_message(instruction="untracked", context=[("pair", ["x"])])
    b.msgs.add_message(assistant_response="ok")
    request = current(b)
    for n in range(3):
        compile_traced(b, request)
        add_turn(b, n)
    assert len(fast_walks) == 3


def test_fold_input_changes_resume_and_refold(fast_walks: list[int]) -> None:
    """The view and records unchanged, only the fold's inputs: the walk resumes, the fold
    target is planned again (the output is the slow one's, checked above)."""
    convo = Convo()
    b = convo.branch
    b.metadata["current_progression"] = Progression(order=list(b.msgs.progression)[1:])
    instruction = current(b).instruction
    for blocks in ((), (ContextBlock("a", "1"),), (ContextBlock("a", "2"),), ()):
        request = TurnRequest(instruction=instruction, context_blocks=blocks)
        trace = compile_traced(b, request)
        b.msgs.system.content.system_message = f"System for {len(blocks)} {blocks!r}."
        assert full_outcome(b, request) == full_slow_outcome(b, request)
    assert len(fast_walks) == 1 and trace.reused > 0


def test_the_prompt_cache_profile_resumes_on_growth_and_walks_after_a_record_edit(
    fast_walks: list[int],
) -> None:
    b, recorded = _cached_conversation(3)
    request = _next_cached(b)
    cached_check(b, request, b.acts.schema_list)
    count = len(fast_walks)
    for n in range(3):
        result = compile_cached(b, request, b.acts.schema_list)
        b.msgs.add_message(instruction=result.compiled.instruction)  # a real next turn
        b.msgs.add_message(assistant_response=f"more {n}")
        request = _next_cached(b, f"next {n}")
        compile_cached(b, request, b.acts.schema_list)
        assert len(fast_walks) == count, "a recorded next turn must resume"
        cached_check(b, request, b.acts.schema_list)
        count = len(fast_walks)
    for edit in ("text-in-place", "record-removed"):
        RECORD_EDITS[edit](b, recorded)
        compile_cached(b, request, b.acts.schema_list)
        assert len(fast_walks) == count + 1, f"{edit} must walk in full"
        cached_check(b, request, b.acts.schema_list, rebuild=True)
        count = len(fast_walks)


def test_amendment1_resumes_on_growth_and_walks_after_an_edit(fast_walks: list[int]) -> None:
    convo = Convo()
    b = convo.branch
    budgets = amendment1.SectionBudgets(history=900, tool_results=80)
    request = amendment1.TurnRequest(instruction=b.msgs.create_instruction(instruction="now"))
    _a1_with(b, request, budgets, len)
    count = len(fast_walks)
    for n in range(3):
        add_turn(b, n, tool=True)
        amendment1.compile_chat_request(b, request, budgets=budgets, measure=len)
        assert len(fast_walks) == count, "growth must resume"
        _a1_with(b, request, budgets, len)
        count = len(fast_walks)
    MUTATIONS["action-output-in-place"](convo)
    amendment1.compile_chat_request(b, request, budgets=budgets, measure=len)
    assert len(fast_walks) == count + 1
    _a1_with(b, request, budgets, len)


def test_amendment1_caller_edits_do_not_reach_the_next_compile() -> None:
    convo = Convo()
    b = convo.branch
    add_turn(b, 1, tool=True, images=True)
    request = amendment1.TurnRequest(
        instruction=b.msgs.create_instruction(instruction="look", images=[PNG]))
    budgets = amendment1.SectionBudgets(history=2000, tool_results=80)
    expected = _a1_with(b, request, budgets, len)
    for _ in range(2):
        compiled = amendment1.compile_chat_request(b, request, budgets=budgets, measure=len)
        lists = [m.content for m in compiled.messages if isinstance(m.content, list)]
        assert len(lists) >= 2
        for parts in lists:
            parts[0]["text"] = "tampered"
            parts.append({"type": "text", "text": "appended"})
        assert _a1_with(b, request, budgets, len) == expected


def test_system_set_and_cleared_by_attribute_only() -> None:
    """``branch.msgs.system`` assigned without touching the pile: the view and every record
    are unchanged, yet the fold and the first-record rule follow the attribute."""
    from lionagi.protocols.messages import System

    b = Branch()
    m = b.msgs
    m.add_message(assistant_response="leading reply, allowed without a system")
    add_turn(b, 1)
    request = current(b)
    check(b, request, rebuild=False)
    m.system = System(content={"system_message": "Set by attribute."})
    refused = check(b, request, rebuild=False)
    assert refused[:3] == ("error", "HistoryError",
                           "First message in progression must be an Instruction or System")
    m.system = None
    check(b, request, rebuild=False)
    b2 = Convo().branch
    request2 = current(b2)
    check(b2, request2, rebuild=False)
    # The System record stays at the head of the pile and the view: that is the state lionagi's
    # own Branch.from_dict leaves, and the record is the branch's system (docs/architecture.md
    # decision 8), so the fold keeps it. Removing the record is what drops the system.
    b2.msgs.system = None
    cleared = check(b2, request2, rebuild=False)
    assert "Be careful." in str(cleared[2])
    add_turn(b2, 2)
    check(b2, request2, rebuild=False)



def test_caller_edits_after_a_compile_that_kept_no_walk() -> None:
    """A compile during which the pile changed keeps no walk of its own, so the next compile
    resumes the walk before it; what the caller was handed by the compile in between must not
    be that walk's own objects."""
    convo = Convo()
    b = convo.branch
    view(b)
    adding = [False]

    def history_text(branch: Branch, turn: Any, rendered: Any) -> Any:
        if adding[0]:
            adding[0] = False
            branch.msgs.messages.include(Instruction(content={"instruction": "outside view"}))
        return rendered

    profile = CompileProfile(name="t", reuse="store-skipped", history_text=history_text)
    request = current(b)
    compile_traced(b, request, profile=profile)  # the walk the later compiles resume
    add_turn(b, 1)
    adding[0] = True
    between = compile_traced(b, request, profile=profile)  # the pile grows meanwhile
    assert between.reused > 0
    for message in between.compiled.messages:
        if isinstance(message.content, list):
            message.content[0]["text"] = "tampered"
            message.content[1]["image_url"]["url"] = "tampered"
    for part in between.rendered:
        if isinstance(part.content, list):
            part.content.append({"type": "text", "text": "appended"})
    assert traced_check(b, request, profile)[0] == "ok"


def test_react_calls_between_plain_compiles_of_the_other_profiles() -> None:
    item = {"task": "shared"}
    b = Branch(system="S.")
    for n in range(3):
        b.msgs.add_message(instruction=f"q{n}", context=[item, f"own {n}"])
        b.msgs.add_message(assistant_response=f"a{n}")
    instruction = b.msgs.create_instruction(instruction="now", context=[item])
    plans: list[list[Any] | None] = [None, [item], None, [item], None]

    def cached(items: list[Any] | None) -> tuple[Any, ...]:
        try:
            result = compile_cached(b, TurnRequest(instruction=instruction), None,
                                    react_context=items)
        except Exception as exc:
            return error_outcome(exc)
        return ("ok", to_provider_messages(result.compiled), result.layout)

    def a1(items: list[Any] | None) -> tuple[Any, ...]:
        try:
            compiled = amendment1.compile_chat_request(
                b, amendment1.TurnRequest(instruction=instruction), measure=len,
                budgets=amendment1.SectionBudgets(history=2000), react_context=items)
        except Exception as exc:
            return error_outcome(exc)
        return ("ok", copy.deepcopy(compiled.messages), compiled.bounds)

    for observe in (cached, a1):
        seen = []
        for step, items in enumerate(plans):
            fast = observe(items)
            with no_fast_path():
                assert fast == observe(items)
            seen.append(fast)
            if step == 2:
                b.msgs.add_message(instruction="more", context=[item])
                b.msgs.add_message(assistant_response="reply")
        assert seen[0] != seen[1] and seen[3] != seen[4]
