"""``mark_unanswered_turns`` places markers in one walk exactly where the per-turn walk did.

The oracle below is the former algorithm (issue 25 item 9): for each unanswered instruction,
oldest first, rebuild the progression, find the turn's end and insert the marker there. On random
branches (answered, unanswered, tool records, instructions left out of a ``current_progression``
view) the single walk must record the same markers at the same places in the manager's
progression and in the view. One deliberate difference in the view: the per-turn walk read the
view with earlier markers lionagi had appended at its tail (an instruction left out of the view
has its marker appended there), so such a marker could hide the view's trailing open turn; the
single walk reads the view as it was, and a marker it cannot place stays at the tail.
"""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lionagi import Branch
from lionagi.protocols.generic.progression import Progression
from lionagi.protocols.messages import ActionRequest, AssistantResponse, Instruction

from lionagi_turns.integration._unanswered import UNANSWERED_KEY, mark_unanswered_turns

KINDS = st.lists(st.sampled_from(["ins", "ans", "tool"]), min_size=0, max_size=30)


def _oracle_end(pile: Any, ids: list[Any], ins_id: Any) -> int | None:
    start = ids.index(ins_id) if ins_id in ids else None
    if start is None:
        return None
    end = start + 1
    while end < len(ids):
        msg = pile.get(ids[end])
        if isinstance(msg, Instruction):
            break
        if isinstance(msg, AssistantResponse):
            return None
        end += 1
    return end


def _oracle(branch: Branch, view_ids: list[Any] | None) -> tuple[list[str], list[str] | None]:
    """Labels of the progression (and view) after the per-turn algorithm; 'M:<label>' marks."""
    pile = branch.msgs.messages.collections
    ids = list(branch.msgs.progression)
    label = {uid: pile[uid].metadata["label"] for uid in ids}
    order = [label[uid] for uid in ids]
    view = None if view_ids is None else [label[uid] for uid in view_ids]
    keyed = list(ids)
    keyed_view = None if view_ids is None else list(view_ids)
    tail: list[str] = []
    for uid in [u for u in ids if isinstance(pile.get(u), Instruction)]:
        end = _oracle_end(pile, keyed, uid)
        if end is None:
            continue
        mark = f"M:{label[uid]}"
        keyed.insert(end, mark)
        order.insert(end, mark)
        if keyed_view is not None and view is not None:
            view_end = _oracle_end(pile, keyed_view, uid)
            if view_end is not None:
                keyed_view.insert(view_end, mark)
                view.insert(view_end, mark)
            else:  # lionagi appends every new record to the view; it stays there
                tail.append(mark)
    return order, None if view is None else view + tail


def _build(kinds: list[str], left_out: list[bool]) -> tuple[Branch, list[Any] | None]:
    branch = Branch()
    for n, kind in enumerate(kinds):
        if kind == "ins":
            msg = branch.msgs.add_message(instruction=f"q{n}")
        elif kind == "ans":
            msg = branch.msgs.add_message(assistant_response=f"a{n}")
        else:
            msg = branch.msgs.add_message(action_function="f", action_arguments={})
            assert isinstance(msg, ActionRequest)
        msg.metadata["label"] = f"{kind}{n}"
    ids = list(branch.msgs.progression)
    if not any(left_out):
        return branch, None
    kept = [uid for uid, out in zip(ids, left_out + [False] * len(ids), strict=False) if not out]
    branch.metadata["current_progression"] = Progression(order=kept)
    return branch, kept


def _labels(branch: Branch, ids: list[Any]) -> list[str]:
    pile = branch.msgs.messages.collections
    labels = {uid: msg.metadata.get("label") for uid, msg in pile.items()}
    out = []
    for uid in ids:
        msg = pile[uid]
        meta = msg.metadata.get(UNANSWERED_KEY)
        if meta is None:
            out.append(labels[uid])
            continue
        ins = next(u for u in pile if str(u) == meta["instruction"])
        out.append(f"M:{labels[ins]}")
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kinds=KINDS, left_out=st.lists(st.booleans(), max_size=30))
def test_single_walk_marks_what_the_per_turn_walk_marked(
    kinds: list[str], left_out: list[bool]
) -> None:
    branch, view_ids = _build(kinds, left_out)
    expected, expected_view = _oracle(branch, view_ids)
    markers = asyncio.run(mark_unanswered_turns(branch))
    progression = branch.msgs.progression
    assert _labels(branch, list(progression)) == expected
    assert all(m.id in progression for m in markers)
    assert len(set(progression)) == len(list(progression))
    if expected_view is not None:
        view = branch.metadata["current_progression"]
        assert _labels(branch, list(view)) == expected_view
    assert asyncio.run(mark_unanswered_turns(branch)) == []


def _every_20th_unanswered(turns: int) -> Branch:
    branch = Branch()
    for t in range(turns):
        branch.msgs.add_message(instruction=f"q{t}")
        if t % 20 != 19:
            branch.msgs.add_message(assistant_response=f"a{t}")
    return branch


def test_marking_reads_the_progression_a_bounded_number_of_times(monkeypatch: Any) -> None:
    """The records read by walking the progression grow linearly with the branch (the per-turn
    walk read the whole progression once per unanswered instruction: 40 times at 800 turns)."""
    read = [0]
    original = Progression.__iter__

    def counting(self: Progression) -> Any:
        read[0] += len(self.order)
        return original(self)

    monkeypatch.setattr(Progression, "__iter__", counting)
    for turns in (200, 800):
        branch = _every_20th_unanswered(turns)
        size = len(branch.msgs.progression)
        read[0] = 0
        markers = asyncio.run(mark_unanswered_turns(branch))
        assert len(markers) == turns // 20
        assert read[0] <= 6 * (size + len(markers)), (turns, read[0], size)
        read[0] = 0
        assert asyncio.run(mark_unanswered_turns(branch)) == []
        assert read[0] <= 2 * len(branch.msgs.progression), (turns, read[0])
