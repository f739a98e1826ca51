"""Before every installed call: mark the unanswered instructions a branch already holds.

A branch whose turns failed without ``install()`` (or that was saved by such a process and
reloaded) holds instructions no assistant response answers. ADR-0007 D2 §3 makes the compiler
refuse two adjacent instructions in history, so such a branch would compile once (its trailing
unanswered instruction followed by the new one: two user messages in a row, as lionagi sends)
and be refused one call later. Under ``install()`` the branch is repaired instead, with the
records decision 10 already defines.

Contract of ``repair_before_call(branch)``, awaited by the installed
``_apply_context_providers`` (lionagi's chat and run operations call it before compiling, so
chat, communicate, operate, ReAct and run reach it on API and CLI models alike):

- Every instruction in ``branch.msgs.progression`` that no assistant response answers gets the
  marker ``mark_unanswered_turns`` records (``_unanswered.record_unanswered``, reason
  ``"an earlier failure"``), oldest first, at the same place. Nothing is removed or moved
  except the new markers. The instruction of a ``run()`` turn still in flight in this process
  (``run_turn_starting``) is not unanswered and is skipped.
- Returns the markers recorded (none on a branch that needs no repair); the caller announces a
  repair with ``REPAIR_WARNING`` (``install()``: ``TurnsCompatibilityWarning``, once per branch
  id per process).
- Cost: the progression is walked whole once per branch object; a later call walks only the ids
  appended since, as long as the earlier ids are the very same in the same order (one list
  comparison). A record replaced under an id already walked is not re-read; the compiler still
  refuses what that leaves, with the error outside ``install()`` has.
- Two first calls racing on one unrepaired branch are serialized, so a turn gets one marker.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
from lionagi.protocols.messages import AssistantResponse, Instruction

from lionagi_turns.integration._unanswered import UNKNOWN_REASON, record_unanswered_turns
from lionagi_turns.memo.identity import PerObject

if TYPE_CHECKING:
    from uuid import UUID

    from lionagi.protocols.messages import RoledMessage
    from lionagi.session.branch import Branch

__all__ = (
    "REPAIR_WARNING",
    "note_run_instruction",
    "repair_before_call",
    "run_turn_ended",
    "run_turn_starting",
)

REPAIR_WARNING = (
    "lionagi-turns: branch {branch} held {count} instruction(s) no assistant response answers "
    "(turns that failed without install()); each now has the marker mark_unanswered_turns "
    "records, '(no response: this turn ended with an earlier failure before the model "
    "answered)', so the compiler accepts the branch. Nothing was removed."
)

# Instructions of run() turns compiled and not ended yet, and the list the current run() turn's
# preparation adds its instruction to (set only around lionagi's first step of that turn).
_in_flight: set[UUID] = set()
_compiling_run: ContextVar[list[UUID] | None] = ContextVar(
    "lionagi_turns_compiling_run", default=None
)


@contextmanager
def run_turn_starting(turn: list[UUID]) -> Iterator[None]:
    """Around the step of lionagi's run that compiles and records the turn's instruction: the
    instruction ``note_run_instruction`` is given there is appended to ``turn`` and is in
    flight until ``run_turn_ended(turn)``."""
    token = _compiling_run.set(turn)
    try:
        yield
    finally:
        _compiling_run.reset(token)


def note_run_instruction(instruction_id: UUID) -> None:
    """Called by the run adapter once it compiled ``instruction_id`` (before lionagi records
    it); outside ``run_turn_starting`` it does nothing."""
    turn = _compiling_run.get()
    if turn is not None:
        turn.append(instruction_id)
        _in_flight.add(instruction_id)


def run_turn_ended(turn: list[UUID]) -> None:
    """The run() turn that compiled ``turn``'s instructions is over (answered or marked)."""
    _in_flight.difference_update(turn)


@dataclass(slots=True)
class _Walked:
    """The ids walked on one branch object, and the instruction left open at their end."""

    ids: list[UUID] = field(default_factory=list)
    open_id: UUID | None = None


# Each live branch object's walk (dropped with its branch).
_walked: PerObject[_Walked] = PerObject()
_repairing: dict[int, anyio.Event] = {}


def _state(branch: Branch) -> _Walked:
    state = _walked.setdefault(branch, _Walked)
    if state is None:  # pragma: no cover - a lionagi Branch is weakly referenceable
        raise TypeError(f"{type(branch).__name__} cannot hold its walked record ids")
    return state


def _unanswered(branch: Branch, state: _Walked) -> list[UUID]:
    """Every unanswered instruction id the progression holds, oldest first (in-flight ones
    included); ``state`` is advanced to the whole progression."""
    ids = list(branch.msgs.progression)
    walked = len(state.ids)
    if not (walked <= len(ids) and ids[:walked] == state.ids):
        state.ids, state.open_id, walked = [], None, 0
    pile: dict[UUID, RoledMessage] = branch.msgs.messages.collections  # type: ignore[has-type]
    found: list[UUID] = []
    open_id = state.open_id
    for uid in ids[walked:]:
        msg = pile.get(uid)
        if isinstance(msg, Instruction):
            if open_id is not None:
                found.append(open_id)
            open_id = uid
        elif isinstance(msg, AssistantResponse):
            open_id = None
    state.ids, state.open_id = ids, open_id
    return found if open_id is None else [*found, open_id]


async def repair_before_call(branch: Branch) -> list[AssistantResponse]:
    """Mark the branch's unanswered instructions before a call (see the module contract)."""
    key = id(branch)
    while (busy := _repairing.get(key)) is not None:
        await busy.wait()
    state = _state(branch)
    pending = [uid for uid in _unanswered(branch, state) if uid not in _in_flight]
    if not pending:
        return []
    _repairing[key] = done = anyio.Event()
    try:
        markers = await _mark(branch, pending)
    finally:
        del _repairing[key]
        done.set()
        state.ids, state.open_id = [], None  # the markers were inserted: walk again next time
    return markers


async def _mark(branch: Branch, pending: list[UUID]) -> list[AssistantResponse]:
    return await record_unanswered_turns(branch, pending, UNKNOWN_REASON)
