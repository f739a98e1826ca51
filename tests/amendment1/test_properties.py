"""D7 "silent dropping is inexpressible", as properties over random histories, budgets and
active views: every record is kept or left out by exactly one section, and every left-out
entry is counted by a marker in the prompt."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lionagi import Branch
from lionagi.protocols.messages import ActionRequest, System

from lionagi_turns.amendment1 import SectionBudgets

from ._support import (
    add_action_pair,
    add_assistant,
    add_instruction,
    all_text,
    compile_a1,
    set_current_progression,
)

MARKER = re.compile(
    r"^\[LIONAGI_SECTION_TRUNCATED section=(\w+) left_out=(\d+) reason=(\w+)\]$", re.M
)
turn = st.tuples(st.integers(0, 2), st.integers(1, 2))  # action pairs before, assistant replies
budget = st.one_of(st.none(), st.integers(0, 120))


def _build(turns: list[tuple[int, int]], trailing: int) -> Branch:
    b = Branch(system="policy")
    for n, (actions, replies) in enumerate(turns):
        for k in range(actions):
            add_action_pair(b, "f", {"turn": n, "k": k}, f"out-{n}-{k}")
        add_instruction(b, f"question {n}")
        for r in range(replies):
            add_assistant(b, f"reply {n}.{r}")
    for k in range(trailing):
        add_action_pair(b, "g", {"k": k}, f"trailing-{k}")
    return b


@pytest.mark.slow
@given(
    turns=st.lists(turn, max_size=5),
    trailing=st.integers(0, 2),
    history=budget,
    tool_results=budget,
    evict=st.sets(st.integers(0, 30), max_size=4),
)
def test_every_record_is_kept_or_left_out_once_and_every_left_out_is_marked(
    turns, trailing, history, tool_results, evict
) -> None:
    b = _build(turns, trailing)
    records = [u for u in b.msgs.progression if not isinstance(b.msgs.messages[u], System)]
    # evict only action records: the view stays a valid history
    actions = [u for u in records if type(b.msgs.messages[u]).__name__.startswith("Action")]
    gone = {actions[i % len(actions)] for i in evict} if actions else set()
    if gone:
        set_current_progression(b, [u for u in b.msgs.progression if u not in gone])
    compiled = compile_a1(b, budgets=SectionBudgets(history=history, tool_results=tool_results))
    h, t = compiled.bound("history"), compiled.bound("tool_results")
    named = Counter([*h.kept, *t.kept, *(e.name for e in (*h.left_out, *t.left_out))])
    history_left = {e.name for e in h.left_out}
    for uid in records:
        msg = b.msgs.messages[uid]
        # an action request never renders: it is named only when its turn or itself is left out
        renders = not isinstance(msg, ActionRequest)
        expected = 1 if renders or str(uid) in history_left else 0
        assert named[str(uid)] == expected, (type(msg).__name__, uid)
    assert set(named) <= {str(u) for u in records}
    # every left-out entry is counted by exactly the markers of its section and reason
    shown = Counter()
    for message in compiled.messages:
        text = message.content if isinstance(message.content, str) else message.content[0]["text"]
        for section, n, reason in MARKER.findall(text):
            shown[(section, reason)] += int(n)
    expected_counts = Counter(
        (b_.section, e.reason) for b_ in compiled.bounds for e in b_.left_out
    )
    assert shown == expected_counts
    # what was left out is not in the prompt
    text = all_text(compiled)
    for e in (*h.left_out, *t.left_out):
        msg = b.msgs.messages[e.name]
        output = getattr(msg.content, "output", None)
        if isinstance(output, str):
            assert output not in text
