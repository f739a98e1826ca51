"""Compiling a branch while another thread appends to it: no error, and each compile sees the
history as of one moment (a prefix of what the writer appended)."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from lionagi import Branch

from lionagi_turns import TurnRequest, compile_chat_request, to_provider_messages

from ._support import Convo, current

ROUNDS = 40  # fresh branch per round: the writer appends PAIRS while the reader compiles
PAIRS = 30
COMPILES = 8


def _append(branch: Branch, start: threading.Barrier) -> None:
    start.wait()
    for i in range(PAIRS):
        branch.msgs.add_message(instruction=f"appended {i}")
        branch.msgs.add_message(assistant_response=f"reply {i}")


def _race(compile_once: Any) -> tuple[Counter[str], list[tuple[Branch, TurnRequest, Any]]]:
    """Compile while a writer appends; the errors seen and each compile's output."""
    errors: Counter[str] = Counter()
    outputs: list[tuple[Branch, TurnRequest, Any]] = []
    for _ in range(ROUNDS):
        branch = Convo().branch
        request = current(branch)
        start = threading.Barrier(2)
        writer = threading.Thread(target=_append, args=(branch, start))
        writer.start()
        start.wait()
        for _ in range(COMPILES):
            try:
                outputs.append((branch, request, compile_once(branch, request)))
            except Exception as exc:  # what a concurrent append made the compile raise
                errors[f"{type(exc).__name__}: {str(exc)[:50]}"] += 1
        writer.join()
    return errors, outputs


def _provider(branch: Branch, request: TurnRequest) -> list[dict[str, Any]]:
    return to_provider_messages(compile_chat_request(branch, request))


def _is_moment(branch: Branch, request: TurnRequest, got: list[dict[str, Any]]) -> bool:
    """``got`` is the compile of the history cut after some number of appended messages."""
    ids = tuple(branch.msgs.progression)
    for end in range(len(ids) - 2 * PAIRS, len(ids) + 1):
        cut = TurnRequest(instruction=request.instruction, progression=ids[:end])
        if _provider(branch, cut) == got:
            return True
    return False


def test_compile_while_another_thread_appends(busy_switching: None) -> None:
    errors, outputs = _race(_provider)
    assert not errors, f"{sum(errors.values())} of {ROUNDS * COMPILES} compiles failed: {errors}"
    for branch, request, got in outputs[::64]:  # a spread sample: each check compiles up to 61 cuts
        assert _is_moment(branch, request, got)

