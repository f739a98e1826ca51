"""``naming_record``: a failure inside names the record (text given, or made only on a
failure); other exceptions keep their kind, and what it must not wrap passes unchanged."""

from __future__ import annotations

from typing import Any

import pytest
from lionagi._errors import EmptyOutgoingContentError

from lionagi_turns.core.values import naming_record


def _record() -> str:
    calls.append(1)
    return "history position 3, instruction id x"


calls: list[int] = []


def test_the_record_function_is_called_only_on_a_failure() -> None:
    calls.clear()
    with naming_record(_record):
        pass
    assert calls == []
    with pytest.raises(ValueError) as raised, naming_record(_record):
        raise ValueError("bad value")
    assert str(raised.value) == "bad value (history position 3, instruction id x)"
    assert calls == [1]


@pytest.mark.parametrize(
    "error, kind, text",
    [
        (ValueError("v"), ValueError, "v (rec)"),
        (TypeError("t"), TypeError, "t (rec)"),
        (KeyError("k"), TypeError,
         "a value raised KeyError: 'k' (rec). Pass plain data (text, numbers, bools, None, "
         "dicts and lists of those)."),
    ],
    ids=["value", "type", "other"],
)
def test_a_failure_names_the_record_and_chains_the_original(
    error: Exception, kind: type[Exception], text: str
) -> None:
    for record in ("rec", lambda: "rec"):
        with pytest.raises(kind) as raised, naming_record(record):  # type: ignore[arg-type]
            raise error
        assert type(raised.value) is kind
        assert str(raised.value) == text
        assert raised.value.__cause__ is error


@pytest.mark.parametrize(
    "error",
    [EmptyOutgoingContentError("empty"), MemoryError(), KeyboardInterrupt()],
    ids=["empty-outgoing", "memory", "keyboard"],
)
def test_what_must_not_be_wrapped_passes_unchanged(error: BaseException) -> None:
    def boom() -> Any:
        raise AssertionError("record text made for an exception that passes through")

    with pytest.raises(type(error)) as raised, naming_record(boom):
        raise error
    assert raised.value is error
