"""D2 §2 (amended by D7): ReAct's caller context renders once per request, after the history
bound; the unit is the context item; no ``left_out`` entry."""

from __future__ import annotations

import yaml

from lionagi_turns.amendment1 import SectionBudgets

from ._support import add_assistant, add_instruction, branch, compile_a1, snapshot, text_of

ITEM = {"doc": "caller context"}
OTHER = "their own item"


def _react_branch():
    b = branch("policy")
    first = add_instruction(b, "q1", context=[ITEM, OTHER])
    add_assistant(b, "a1")
    second = add_instruction(b, "q2", context=[ITEM])
    add_assistant(b, "a2")
    return b, first, second


def _context(message) -> list:
    data = yaml.safe_load(text_of(message))
    return data.get("Context", [])


def test_the_first_kept_carrier_keeps_the_items_later_ones_render_without() -> None:
    b, *_ = _react_branch()
    before = snapshot(b)
    compiled = compile_a1(b, react_context=[ITEM], context=[ITEM])
    assert _context(compiled.messages[0]) == [ITEM, OTHER]
    assert "Context" not in yaml.safe_load(text_of(compiled.messages[2]))
    assert "Context" not in yaml.safe_load(text_of(compiled.messages[-1]))
    assert all(b.left_out == () for b in compiled.bounds)
    assert snapshot(b) == before  # only the request's ephemeral copies changed


def test_the_unit_is_the_item_not_the_instruction() -> None:
    b, *_ = _react_branch()
    compiled = compile_a1(b, react_context=[ITEM], context=[ITEM, "fresh"])
    assert _context(compiled.messages[-1]) == ["fresh"]


def test_when_the_bound_keeps_no_carrier_the_current_instruction_keeps_them() -> None:
    b, *_ = _react_branch()
    compiled = compile_a1(b, react_context=[ITEM], context=[ITEM],
                          budgets=SectionBudgets(history=0))
    assert _context_of_text(text_of(compiled.messages[-1])) == [ITEM]


def test_the_step_runs_after_the_history_bound() -> None:
    b, first, second = _react_branch()
    # a budget that keeps only the second turn: it becomes the first kept carrier
    size = len(text_of_durable(second)) + len("a2")
    compiled = compile_a1(b, react_context=[ITEM], context=[ITEM],
                          budgets=SectionBudgets(history=size))
    kept = compiled.bound("history").kept
    assert str(first.id) not in kept and str(second.id) in kept
    first_text = text_of(compiled.messages[0])
    assert "q2" in first_text and _context_of_text(first_text) == [ITEM]
    assert "Context" not in yaml.safe_load(_strip_markers(text_of(compiled.messages[-1])))


def test_the_instruction_bound_measures_after_the_step() -> None:
    b, *_ = _react_branch()
    own_after = len("Instruction: now")
    compiled = compile_a1(b, react_context=[ITEM], context=[ITEM],
                          budgets=SectionBudgets(instruction=own_after))
    assert compiled.bound("instruction").left_out == ()


def test_an_instruction_the_step_leaves_empty_renders_as_the_default_renders_empty() -> None:
    """lionagi's renderer gives an instruction with no visible section ``{}``, never a falsy
    value, so §5's omission does not apply: the message stays, as in the default profile."""
    from lionagi_turns import TurnRequest as DefaultRequest
    from lionagi_turns import compile_chat_request as default_compile

    b = branch()
    add_instruction(b, "q1", context=[ITEM])
    add_assistant(b, "a1")
    compiled = compile_a1(b, "", react_context=[ITEM], context=[ITEM])
    empty = default_compile(b, DefaultRequest(instruction=b.msgs.create_instruction()))
    assert compiled.messages[-1].content == empty.messages[-1].content


def text_of_durable(message) -> str:
    from lionagi_turns.memo.renders import render_durable

    return render_durable(message)


def _strip_markers(text: str) -> str:
    return "\n".join(ln for ln in text.split("\n") if not ln.startswith("[LIONAGI_SECTION"))


def _context_of_text(text: str) -> list:
    return yaml.safe_load(_strip_markers(text)).get("Context", [])


def test_a_carrier_holds_every_item_and_equality_is_by_rendered_text() -> None:
    """As lionagi 0.36's step: only an instruction showing all the items carries them, and
    ``True`` is not ``1``."""
    b = branch("policy")
    add_instruction(b, "q1", context=[1])  # renders "1", not "true": not a carrier
    add_assistant(b, "a1")
    add_instruction(b, "q2", context=[ITEM])  # holds one of two items: not a carrier
    add_assistant(b, "a2")
    compiled = compile_a1(b, react_context=[True, ITEM], context=[True, ITEM])
    assert _context(compiled.messages[-1]) == [True, ITEM]
    assert _context(compiled.messages[0]) == [1]


def test_the_step_matches_lionagi_on_a_react_history() -> None:
    """Same branch, same items: the amended step leaves out what lionagi's own pass does."""
    from lionagi.operations.chat._prepare import _prepare_run_kwargs, _react_context
    from lionagi.operations.types import ChatParam

    b, *_ = _react_branch()
    ins = b.msgs.create_instruction(instruction="now", context=[ITEM])
    token = _react_context.set([ITEM])
    try:
        _, kwargs = _prepare_run_kwargs(b, ins, ChatParam(), ins=ins)
    finally:
        _react_context.reset(token)
    legacy = [m["content"].count("caller context") for m in kwargs["messages"]]
    compiled = compile_a1(b, react_context=[ITEM], context=[ITEM])
    ours = [text_of(m).count("caller context") for m in compiled.messages]
    assert ours == legacy == [1, 0, 0, 0, 0]
