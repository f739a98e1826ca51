"""The input ceiling as properties over random loops and ceilings: every record is kept or left
out exactly once, every left-out entry is counted by a marker, every request is under the
ceiling by the profile's measure (or refused, naming the section, with the branch unchanged),
and the text sent never exceeds that measure."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lionagi.protocols.messages import ActionRequest, System

from lionagi_turns.amendment1 import (
    CEILING_KEY,
    InputCeiling,
    SectionBudgetRefused,
    TurnRequest,
    compile_chat_request,
)

from ._support import add_action_pair, add_assistant, branch, chars, snapshot, text_of
from .test_properties import MARKER

# (tool calls, output size, replies) per round
round_ = st.tuples(st.integers(0, 2), st.integers(0, 160), st.integers(1, 2))


@pytest.mark.slow
@settings(deadline=None)
@given(
    rounds=st.lists(round_, min_size=1, max_size=12),
    tokens=st.integers(150, 1500),
    low=st.floats(0.1, 1.0),
)
def test_every_record_is_kept_or_left_out_once_and_every_request_is_under_the_ceiling(
    rounds: list[tuple[int, int, int]], tokens: int, low: float
) -> None:
    ceiling = InputCeiling(tokens, low_water=max(1, int(tokens * low)))
    b = branch(system="policy " * 5)
    for n, (calls, size, replies) in enumerate(rounds):
        ins = b.msgs.create_instruction(instruction=f"question {n}")
        before = snapshot(b)
        try:
            compiled = compile_chat_request(b, TurnRequest(instruction=ins), measure=chars,
                                            ceiling=ceiling)
        except SectionBudgetRefused as exc:
            assert snapshot(b) == before
            assert "section budget refused: the " in str(exc)
            return
        record = compiled.instruction.metadata[CEILING_KEY]
        assert record["used"] <= tokens
        _check_named_once(b, compiled)
        b.msgs.add_message(instruction=compiled.instruction)
        for r in range(replies):
            add_assistant(b, f"reply {n}.{r}")
        for k in range(calls):
            add_action_pair(b, "f", {"turn": n, "k": k}, "x" * size)


def _check_named_once(b, compiled) -> None:
    h, t = compiled.bound("history"), compiled.bound("tool_results")
    named = Counter([*h.kept, *t.kept, *(e.name for e in (*h.left_out, *t.left_out))])
    history_left = {e.name for e in h.left_out}
    records = [u for u in b.msgs.progression if not isinstance(b.msgs.messages[u], System)]
    for uid in records:
        msg = b.msgs.messages[uid]
        renders = not isinstance(msg, ActionRequest)
        expected = 1 if renders or str(uid) in history_left else 0
        assert named[str(uid)] == expected, (type(msg).__name__, uid)
    assert set(named) <= {str(u) for u in records}
    shown: Counter[tuple[str, str]] = Counter()
    for message in compiled.messages:
        for section, n, reason in MARKER.findall(text_of(message)):
            shown[(section, reason)] += int(n)
    assert shown == Counter((s.section, e.reason) for s in compiled.bounds for e in s.left_out)
