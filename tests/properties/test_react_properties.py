"""Hypothesis property of the ReAct step (amended ADR-0007 D2 §2) against lionagi 0.36.

For random well-formed systemless histories whose instructions hold random subsets of a
caller's context items (repeats, look-alike values such as ``True``/``1`` and extra items
included) and a random caller context, ``compile_chat_request(..., react_context=items)``
sends exactly what lionagi's own preparation sends while its ``_react_context`` holds the same
items; without the keyword the compiler sends what lionagi sends outside ReAct. (Systemless
and without context blocks, nothing is folded, so no intended difference applies.)
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lionagi import Branch
from lionagi.operations.chat._prepare import _react_context

from lionagi_turns import TurnRequest, compile_chat_request
from lionagi_turns.characterize.legacy import legacy_messages

ITEMS = st.sampled_from(
    [{"doc": "caller"}, "note", True, 1, 0.0, ["a", "b"], {"doc": "other"}, "extra"]
)
CONTEXT = st.lists(ITEMS, max_size=4)
HISTORY = st.lists(st.tuples(CONTEXT, st.booleans()), max_size=4)


def _branch(history: list[tuple[list[Any], bool]]) -> Branch:
    b = Branch()
    for i, (context, plain) in enumerate(history):
        if plain:
            b.msgs.add_message(plain_content=f"raw {i}", context=list(context))
        else:
            b.msgs.add_message(instruction=f"round {i}", context=list(context))
        b.msgs.add_message(assistant_response=f"reply {i}")
    return b


def _sent(compiled: Any) -> list[dict[str, Any]]:
    return [{"role": m.role.value, "content": m.content} for m in compiled.messages]


@pytest.mark.slow
@given(history=HISTORY, current=CONTEXT, caller=st.lists(ITEMS, min_size=1, max_size=3))
def test_react_step_sends_what_lionagi_sends(
    history: list[tuple[list[Any], bool]], current: list[Any], caller: list[Any]
) -> None:
    b = _branch(history)
    ins = b.msgs.create_instruction(instruction="now", context=list(current))
    request = TurnRequest(instruction=ins)
    assert _sent(compile_chat_request(b, request)) == legacy_messages(b, request)
    token = _react_context.set(list(caller))
    try:
        expected = legacy_messages(b, request)
    finally:
        _react_context.reset(token)
    assert _sent(compile_chat_request(b, request, react_context=caller)) == expected
