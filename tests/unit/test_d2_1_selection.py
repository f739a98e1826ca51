"""ADR-0007 D2 step 1: resolve and validate the history view."""

from __future__ import annotations

from uuid import uuid4

import pytest

from lionagi_turns import HistoryError

from ._support import (
    add_assistant,
    add_instruction,
    branch,
    compile_now,
    loaded,
    roles,
    set_current_progression,
    text_of,
)


def _two_turns():
    b = branch()
    i1 = add_instruction(b, "first question")
    a1 = add_assistant(b, "first answer")
    i2 = add_instruction(b, "second question")
    a2 = add_assistant(b, "second answer")
    return b, (i1, a1, i2, a2)


def test_none_selects_branch_progression() -> None:
    b, _ = _two_turns()
    compiled = compile_now(b)
    assert [text_of(m) for m in compiled.messages] == [
        "Instruction: first question",
        "first answer",
        "Instruction: second question",
        "second answer",
        "Instruction: now",
    ]


def test_none_selects_the_current_progression_override() -> None:
    b, (_i1, _a1, i2, a2) = _two_turns()
    set_current_progression(b, [i2.id, a2.id])
    compiled = compile_now(b)
    assert [text_of(m) for m in compiled.messages] == [
        "Instruction: second question",
        "second answer",
        "Instruction: now",
    ]


def test_explicit_empty_tuple_selects_no_history() -> None:
    b, _ = _two_turns()
    compiled = compile_now(b, progression=())
    assert [text_of(m) for m in compiled.messages] == ["Instruction: now"]


def test_explicit_empty_tuple_ignores_the_current_progression_override() -> None:
    b, (i1, a1, _, _) = _two_turns()
    set_current_progression(b, [i1.id, a1.id])
    assert roles(compile_now(b, progression=())) == ["user"]


def test_explicit_tuple_order_wins_over_creation_order() -> None:
    b, (i1, a1, i2, a2) = _two_turns()
    compiled = compile_now(b, progression=(i2.id, a2.id, i1.id, a1.id))
    assert [text_of(m) for m in compiled.messages] == [
        "Instruction: second question",
        "second answer",
        "Instruction: first question",
        "first answer",
        "Instruction: now",
    ]


def test_explicit_tuple_selects_a_subset() -> None:
    b, (i1, a1, _i2, _a2) = _two_turns()
    compiled = compile_now(b, progression=(i1.id, a1.id))
    assert loaded(compiled.messages[0]) == {"Instruction": "first question"}
    assert len(compiled.messages) == 3


def test_all_missing_ids_are_reported_in_one_value_error() -> None:
    b, (i1, a1, _, _) = _two_turns()
    missing_a, missing_b = uuid4(), uuid4()
    with pytest.raises(ValueError) as raised:
        compile_now(b, progression=(i1.id, missing_a, a1.id, missing_b))
    err = raised.value
    assert isinstance(err, HistoryError)
    text = str(err)
    assert str(missing_a) in text and str(missing_b) in text
    assert "position 1" in text and "position 3" in text
    assert "2 progression id(s) not found" in text
    assert [d.kind for d in err.defects] == ["missing_id", "missing_id"]
    assert [d.positions for d in err.defects] == [(1,), (3,)]


def test_missing_ids_error_is_also_lionagis_not_found_error() -> None:
    # lionagi 0.36 raises NotFoundError here; `except NotFoundError` keeps catching it.
    from lionagi._errors import NotFoundError

    from lionagi_turns.core.errors import MissingIdsError

    b, (i1, _, _, _) = _two_turns()
    ghost = uuid4()
    try:
        compile_now(b, progression=(i1.id, ghost))
    except NotFoundError as exc:
        caught: BaseException = exc
    assert isinstance(caught, MissingIdsError)
    assert isinstance(caught, ValueError) and isinstance(caught, HistoryError)
    assert caught.details == {"ids": [str(ghost)]}
    assert caught.message == str(caught)


def test_missing_ids_in_the_current_progression_override_are_reported() -> None:
    b, (i1, a1, _, _) = _two_turns()
    ghost = uuid4()
    set_current_progression(b, [i1.id, a1.id, ghost])
    with pytest.raises(ValueError, match=rf"position 2: id {ghost} is not in branch\.msgs"):
        compile_now(b)


def test_missing_ids_are_reported_before_any_later_defect() -> None:
    b, (i1, _a1, i2, _) = _two_turns()
    ghost = uuid4()
    # i1 followed by i2 would also be consecutive instructions; the missing id wins.
    with pytest.raises(HistoryError) as raised:
        compile_now(b, progression=(i1.id, i2.id, ghost))
    assert {d.kind for d in raised.value.defects} == {"missing_id"}
    assert str(ghost) in str(raised.value)


def test_duplicate_ids_are_rejected_naming_id_and_positions() -> None:
    b, (i1, a1, i2, _a2) = _two_turns()
    with pytest.raises(ValueError) as raised:
        compile_now(b, progression=(i1.id, a1.id, i2.id, a1.id))
    err = raised.value
    assert isinstance(err, HistoryError)
    assert str(err).startswith("duplicate ids in progression")
    assert f"id {a1.id} appears 2 times, at positions [1, 3]" in str(err)
    assert [d.kind for d in err.defects] == ["duplicate_id"]


def test_a_non_id_in_the_current_progression_override_is_named() -> None:
    b, (i1, _, _, _) = _two_turns()
    b.metadata["current_progression"] = [i1.id, "not-an-id"]
    with pytest.raises(
        ValueError,
        match=r"branch progression\[1\] = 'not-an-id' is not a "
        r"message id",
    ):
        compile_now(b)
