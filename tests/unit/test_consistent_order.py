"""``_consistent.read_order``: the order read under the pile's lock, read again when a writer
that bypasses the lock interrupts it, and a named failure when every try is interrupted."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any
from uuid import UUID

import pytest
from lionagi import Branch
from lionagi.protocols.generic.progression import Progression

from lionagi_turns import TurnRequest, compile_chat_request, to_provider_messages
from lionagi_turns.core.consistent import TRIES, read_order


class _Interrupted(Progression):
    """A progression whose first ``failures`` reads are interrupted as a concurrent append
    interrupts a deque's iteration; it notes whether each read held the pile's lock."""

    def __init__(self, order: list[UUID], failures: int, lock: Any) -> None:
        super().__init__(order=order)
        object.__setattr__(self, "_probe", {"failures": failures, "reads": 0, "held": []})
        object.__setattr__(self, "_pile_lock", lock)

    def __iter__(self) -> Iterator[UUID]:
        probe = self._probe
        probe["reads"] += 1
        probe["held"].append(_held_elsewhere(self._pile_lock))
        if probe["reads"] <= probe["failures"]:
            raise RuntimeError("deque mutated during iteration")
        return super().__iter__()


def _held_elsewhere(lock: Any) -> bool:
    """Whether another thread fails to take ``lock`` right now."""
    taken: list[bool] = []

    def probe() -> None:
        got = lock.acquire(blocking=False)
        taken.append(got)
        if got:
            lock.release()

    thread = threading.Thread(target=probe)
    thread.start()
    thread.join()
    return not taken[0]


def _branch() -> Branch:
    branch = Branch(system="Be brief.")
    branch.msgs.add_message(instruction="first")
    branch.msgs.add_message(assistant_response="one")
    return branch


def test_an_interrupted_view_is_read_again_under_the_pile_lock() -> None:
    branch = _branch()
    pile = branch.msgs.messages
    ids = list(branch.msgs.progression)
    view = _Interrupted(ids, failures=TRIES - 1, lock=pile.lock)
    assert read_order(pile, view) == tuple(ids)
    assert view._probe["reads"] == TRIES and all(view._probe["held"])


def test_a_compile_reads_an_interrupted_current_progression_again() -> None:
    branch = _branch()
    request = TurnRequest(instruction=branch.msgs.create_instruction(instruction="next"))
    expected = to_provider_messages(compile_chat_request(branch, request))
    ids = list(branch.msgs.progression)
    view = _Interrupted(ids, 2, branch.msgs.messages.lock)
    branch.metadata["current_progression"] = view
    assert to_provider_messages(compile_chat_request(branch, request)) == expected
    assert view._probe["reads"] >= 3


def test_a_view_interrupted_on_every_try_names_the_fix() -> None:
    branch = _branch()
    pile = branch.msgs.messages
    view = _Interrupted(list(branch.msgs.progression), failures=TRIES, lock=pile.lock)
    with pytest.raises(RuntimeError) as info:
        read_order(pile, view)
    assert str(info.value) == "deque mutated during iteration"
    assert "branch.msgs.messages.lock" in "\n".join(info.value.__notes__)
    assert view._probe["reads"] == TRIES
