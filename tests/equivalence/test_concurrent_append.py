"""Compiling a branch while another thread appends to it: no error, and each compile sees the
history as of one moment (the branch cut after some number of appended messages).

The writer is lionagi's own ``branch.msgs.add_message``. Inside it, ``Pile.include`` puts the
new id in the progression and then stores the record, under the pile's lock; the test pauses
the writer between the two (``PAUSE``, where the OS may preempt any writer), so a compile that
reads the progression without that lock meets the half-written append on most rounds instead
of rarely."""

from __future__ import annotations

import threading
import time
from collections import Counter
from typing import Any

import pytest
from lionagi import Branch
from lionagi.protocols.generic.progression import Progression

from lionagi_turns import TurnRequest, compile_chat_request, to_provider_messages

ROUNDS = 6  # a fresh branch per round: the writer appends PAIRS pairs while the reader compiles
PAIRS = 8
MOST_COMPILES = 400  # per round; the reader stops when the writer is done
PAUSE = 0.001


@pytest.fixture
def preempted_writer(monkeypatch: pytest.MonkeyPatch) -> None:
    real = Progression.include

    def include(self: Progression, item: Any, /) -> bool:
        appended = real(self, item)
        time.sleep(PAUSE)  # the id is in the order; Pile.include stores its record next
        return appended

    monkeypatch.setattr(Progression, "include", include)


def _branch() -> Branch:
    branch = Branch(system="Be brief.")
    branch.msgs.add_message(instruction="first", context=[{"doc": "a"}])
    branch.msgs.add_message(assistant_response="one")
    return branch


def _append(branch: Branch, start: threading.Barrier) -> None:
    start.wait()
    for i in range(PAIRS):
        branch.msgs.add_message(instruction=f"appended {i}")
        branch.msgs.add_message(assistant_response=f"reply {i}")


def _provider(branch: Branch, request: TurnRequest) -> list[dict[str, Any]]:
    return to_provider_messages(compile_chat_request(branch, request))


def _race() -> tuple[Counter[str], int, list[tuple[Branch, TurnRequest, Any]]]:
    """Compile while a writer appends: the errors seen, the compiles made, and the outputs."""
    errors: Counter[str] = Counter()
    outputs: list[tuple[Branch, TurnRequest, Any]] = []
    compiles = 0
    for _ in range(ROUNDS):
        branch = _branch()
        request = TurnRequest(instruction=branch.msgs.create_instruction(instruction="next"))
        start = threading.Barrier(2)
        writer = threading.Thread(target=_append, args=(branch, start))
        writer.start()
        start.wait()
        for _ in range(MOST_COMPILES):
            if not writer.is_alive():
                break
            compiles += 1
            try:
                outputs.append((branch, request, _provider(branch, request)))
            except Exception as exc:  # what a concurrent append made the compile raise
                errors[f"{type(exc).__name__}: {str(exc)[:50]}"] += 1
        writer.join()
    return errors, compiles, outputs


def _is_moment(branch: Branch, request: TurnRequest, got: list[dict[str, Any]]) -> bool:
    """``got`` is the compile of the history cut after some number of appended messages."""
    ids = tuple(branch.msgs.progression)
    for end in range(len(ids) - 2 * PAIRS, len(ids) + 1):
        cut = TurnRequest(instruction=request.instruction, progression=ids[:end])
        if _provider(branch, cut) == got:
            return True
    return False


def test_compile_while_another_thread_appends(
    preempted_writer: None, busy_switching: None
) -> None:
    errors, compiles, outputs = _race()
    assert compiles >= ROUNDS  # the reader compiled while the writer ran
    assert not errors, f"{sum(errors.values())} of {compiles} compiles failed: {errors}"
    sample = outputs[:: max(1, len(outputs) // 12)]  # each check compiles up to 17 cuts
    assert all(_is_moment(*output) for output in sample)
