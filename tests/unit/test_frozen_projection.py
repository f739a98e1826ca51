"""Projections and their turns are frozen values: a compile step that changes a turn for one
request makes a new turn, and the projection a later compile resumes from is never altered."""

from __future__ import annotations

import dataclasses

import pytest
from lionagi import Branch

from lionagi_turns.core.history import (
    AssistantTurn,
    InstructionTurn,
    extend_projection,
    project_history,
    select_ids,
)
from lionagi_turns.core.react import react_step


def _branch() -> Branch:
    b = Branch(system="policy")
    b.msgs.add_message(instruction="q1", context=["shared", "own"])
    b.msgs.add_message(assistant_response="a1")
    request = b.msgs.add_message(action_function="lookup", action_arguments={"q": 1})
    b.msgs.add_message(action_request=request, action_output={"rows": 2})
    b.msgs.add_message(instruction="q2", context=["shared"])
    b.msgs.add_message(assistant_response="a2")
    return b


def test_a_projection_and_its_turns_refuse_assignment() -> None:
    b = _branch()
    projection = project_history(b, select_ids(b, None))
    turn = projection.turns[0]
    assert isinstance(turn, InstructionTurn)
    with pytest.raises(dataclasses.FrozenInstanceError):
        projection.turns = ()  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        turn.context = ["other"]  # type: ignore[misc]
    assert all(isinstance(f, tuple) for f in (projection.turns, projection.pending))
    assert isinstance(projection.turns[1], AssistantTurn)
    assert isinstance(projection.turns[1].messages, tuple)
    second = projection.turns[2]  # the action pair folds into the instruction after it
    assert isinstance(second, InstructionTurn)
    assert second.results == ({"function": "lookup", "arguments": {"q": 1}, "output": {"rows": 2}},)
    assert isinstance(second.sources, tuple) and len(second.sources) == 1
    with pytest.raises(dataclasses.FrozenInstanceError):
        projection.turns[1].messages = ()  # type: ignore[misc]


def test_the_react_step_returns_new_turns_and_leaves_the_given_projection_as_it_was() -> None:
    b = _branch()
    projection = project_history(b, select_ids(b, None))
    before = list(projection.turns)
    current = b.msgs.create_instruction(instruction="now", context=["shared"]).content
    stepped, context = react_step(projection, current, ["shared"])
    assert list(projection.turns) == before and all(
        t.context is None for t in projection.instructions()
    )
    assert stepped.turns[0] is projection.turns[0]  # the first carrier keeps the items
    second = stepped.turns[2]
    assert isinstance(second, InstructionTurn) and second is not projection.turns[2]
    assert second.context == [] and second.message is projection.turns[2].message
    assert second.results == projection.turns[2].results
    assert context == []


def test_extending_a_projection_replaces_the_continued_assistant_run_not_changes_it() -> None:
    b = _branch()
    walked = select_ids(b, None)
    first = project_history(b, walked)
    run = first.turns[-1]
    assert isinstance(run, AssistantTurn)
    b.msgs.add_message(assistant_response="a2, continued")
    ids = select_ids(b, None)
    pile = b.msgs.messages.collections
    records = [pile[i] for i in ids]
    extended = extend_projection(b, first, ids, records, len(walked))
    assert extended == project_history(b, ids)
    assert len(run.messages) == 1 and first.turns[-1] is run
    assert extended.turns[:-1] == first.turns[:-1]
    assert all(x is y for x, y in zip(extended.turns[:-1], first.turns[:-1], strict=True))
    assert len(extended.turns[-1].messages) == 2  # type: ignore[union-attr]
