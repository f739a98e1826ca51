"""The seam's resume contract (``_fast.resume``): which compiles resume, and what they reuse.

The wider differential suite (every mutation, progression edit and profile against the fast
path switched off) is ``test_resume.py``."""

from __future__ import annotations

import pytest
from lionagi import Branch

from lionagi_turns import TurnRequest
from lionagi_turns.core import pipeline as compiler
from lionagi_turns.core.pipeline import compile_traced
from lionagi_turns.memo import resume as _resume
from lionagi_turns.memo.switch import no_fast_path

from ._support import Convo, current, outcome, slow_outcome


@pytest.fixture
def walks(full_walks: list[int]) -> list[int]:
    return full_walks


def _grow(convo: Convo, i: int) -> None:
    m = convo.branch.msgs
    m.add_message(instruction=f"later {i}", context=[{"i": i}])
    m.add_message(assistant_response=f"reply {i}")


def test_growth_resumes_and_reuses_every_unchanged_turn(walks: list[int]) -> None:
    convo = Convo()
    first = compile_traced(convo.branch, current(convo.branch))
    assert (first.reused, len(walks)) == (0, 1)
    _grow(convo, 1)
    second = compile_traced(convo.branch, current(convo.branch))
    assert len(walks) == 1  # resumed: no full walk
    turns = len(first.projection.turns)
    assert second.reused == turns
    kept = zip(second.projected.turns[:turns], first.projected.turns, strict=True)
    assert all(a is b for a, b in kept)
    request = current(convo.branch)
    assert outcome(convo.branch, request) == slow_outcome(convo.branch, request)


def test_a_continued_assistant_run_renders_again(walks: list[int]) -> None:
    convo = Convo()
    first = compile_traced(convo.branch, current(convo.branch))
    convo.branch.msgs.add_message(assistant_response="more")
    second = compile_traced(convo.branch, current(convo.branch))
    assert len(walks) == 1
    assert second.reused == len(first.projection.turns) - 1  # the run it extends is new
    assert first.projection.turns[-1].messages[-1] is convo.a3  # the old turn is unchanged
    request = current(convo.branch)
    assert outcome(convo.branch, request) == slow_outcome(convo.branch, request)


def test_an_in_place_edit_walks_in_full(walks: list[int]) -> None:
    convo = Convo()
    compile_traced(convo.branch, current(convo.branch))
    convo.i2.content.prompt_context[0]["doc"] = "edited"
    third = compile_traced(convo.branch, current(convo.branch))
    assert (third.reused, len(walks)) == (0, 2)


def test_no_fast_path_and_react_items_never_resume(walks: list[int]) -> None:
    convo = Convo()
    compile_traced(convo.branch, current(convo.branch))
    with no_fast_path():
        assert compile_traced(convo.branch, current(convo.branch)).reused == 0
    assert compile_traced(convo.branch, current(convo.branch), react_context=["x"]).reused == 0
    assert len(walks) == 3


def test_a_profile_without_a_reuse_key_keeps_no_walk() -> None:
    convo = Convo()
    profile = compiler.SEED_PROFILE.__class__(name="no-reuse")
    compile_traced(convo.branch, current(convo.branch), profile=profile)
    assert compile_traced(convo.branch, current(convo.branch), profile=profile).reused == 0


def test_walks_are_per_branch_object_not_per_id() -> None:
    convo = Convo()
    compile_traced(convo.branch, current(convo.branch))
    twin = Branch.from_dict(convo.branch.to_dict())
    assert twin.id == convo.branch.id
    assert compile_traced(twin, TurnRequest(instruction=current(twin).instruction)).reused == 0
    _resume.forget(convo.branch)
    assert compile_traced(convo.branch, current(convo.branch)).reused == 0
