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
  except the new markers. The instruction of an installed call still in flight in this
  process (compiled by the installed preparation and not settled: its context has not started
  another call and its task has not ended; a ``run()`` turn until ``run_turn_ended``) is not
  unanswered and is skipped, so calls overlapping on one branch never mark each other.
- A response an installed call records while another call's records came after its
  instruction (calls overlapping on one branch: lionagi awaits between recording the
  instruction and the answer) is moved to directly after its own turn's records, in the
  manager's progression and in a ``current_progression`` view, by a callback the repair
  places on the branch's ``on_message_added`` list; every turn then reads instruction, answer.
- ``others_in_flight()`` is the set of instructions in flight for calls of other tasks than
  the current one; the installed compile leaves their open turns out of its view
  (``_compile.compile_call``).
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

import asyncio
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio
from lionagi.protocols.messages import AssistantResponse, Instruction

from lionagi_turns.integration._state import STATE
from lionagi_turns.integration._unanswered import (
    UNANSWERED_KEY,
    UNKNOWN_REASON,
    place_answer,
    record_unanswered_turns,
)
from lionagi_turns.memo.branch_memory import BranchSlot

if TYPE_CHECKING:
    from uuid import UUID

    from lionagi.protocols.messages import RoledMessage
    from lionagi.session.branch import Branch

__all__ = (
    "REPAIR_WARNING",
    "call_starting",
    "note_call_instruction",
    "note_run_instruction",
    "others_in_flight",
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

@dataclass(slots=True)
class _Flight:
    """One installed call's compiled instruction in flight: a weak reference to the task that
    made the call (None outside a task), and whether it is a ``run()`` turn (held until
    ``run_turn_ended``, whatever its task does)."""

    owner: weakref.ref[asyncio.Task[object]] | None
    held: bool = False

    def task(self) -> asyncio.Task[object] | None:
        return None if self.owner is None else self.owner()

    def settled(self) -> bool:
        """Whether the call can no longer record its answer: its task ended or is gone."""
        if self.held:
            return False
        task = self.task()
        return task is None or task.done()


# Every installed call's compiled instruction not settled yet; the instruction of this
# context's latest call; the list the current run() turn's preparation adds its instruction to
# (set only around lionagi's first step of that turn).
_own_call: ContextVar[UUID | None] = ContextVar("lionagi_turns_own_call", default=None)
_compiling_run: ContextVar[list[UUID] | None] = ContextVar(
    "lionagi_turns_compiling_run", default=None
)


def _task() -> asyncio.Task[object] | None:
    try:
        return asyncio.current_task()
    except RuntimeError:
        return None


def _owner() -> weakref.ref[asyncio.Task[object]] | None:
    task = _task()
    return None if task is None else weakref.ref(task)


def note_call_instruction(instruction_id: UUID) -> None:
    """The installed preparation compiled ``instruction_id``: it is in flight until this
    context starts its next call (``call_starting``) or the task that made the call ends.
    Outside an asyncio task nothing is tracked."""
    owner = _owner()
    if owner is None:
        return
    STATE.in_flight[instruction_id] = _Flight(owner=owner)
    _own_call.set(instruction_id)


def call_starting() -> None:
    """A call starts in this context: the context's previous call has settled."""
    uid = _own_call.get()
    if uid is None:
        return
    flight = STATE.in_flight.get(uid)
    if flight is not None and not flight.held:
        del STATE.in_flight[uid]
    _own_call.set(None)


def _live() -> dict[UUID, _Flight]:
    """The instructions in flight now (entries whose task ended are dropped)."""
    for uid, flight in list(STATE.in_flight.items()):
        if flight.settled():
            STATE.in_flight.pop(uid, None)
    return dict(STATE.in_flight)


def others_in_flight() -> frozenset[UUID]:
    """The instructions in flight of calls made by other tasks than the current one."""
    me = _task()
    return frozenset(uid for uid, flight in _live().items() if flight.task() is not me)


def _placing_answers(branch: Branch) -> None:
    """Make sure ``branch`` places each response an installed call records at its own turn
    (``_unanswered.place_answer``): one callback on its ``on_message_added`` list, right after
    lionagi's own view tracking (so the response is in the manager's progression and in a
    ``current_progression`` view) and before any callback that could yield to another call."""
    callbacks: list[object] = branch.on_message_added
    if any(getattr(cb, "_lionagi_turns_places_answers", False) for cb in callbacks):
        return

    def place_own_answer(msg: object) -> None:
        uid = _own_call.get()
        if (
            uid is None
            or uid not in STATE.in_flight
            or not isinstance(msg, AssistantResponse)
            or UNANSWERED_KEY in msg.metadata
        ):
            return
        place_answer(branch, uid, msg.id)

    place_own_answer._lionagi_turns_places_answers = True  # type: ignore[attr-defined]
    tracking = [
        index
        for index, cb in enumerate(callbacks)
        if getattr(cb, "__name__", None) == "_track_message_in_view"
    ]
    callbacks.insert(tracking[0] + 1 if tracking else 0, place_own_answer)


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
        STATE.in_flight[instruction_id] = _Flight(owner=_owner(), held=True)


def run_turn_ended(turn: list[UUID]) -> None:
    """The run() turn that compiled ``turn``'s instructions is over (answered or marked)."""
    for uid in turn:
        STATE.in_flight.pop(uid, None)


@dataclass(slots=True)
class _Walked:
    """The ids walked on one branch object, and the instruction left open at their end."""

    ids: list[UUID] = field(default_factory=list)
    open_id: UUID | None = None


# Each live branch object's walk (dropped with its branch).
_walked: BranchSlot[_Walked] = BranchSlot("repair")


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
    _placing_answers(branch)
    key = id(branch)
    while (busy := STATE.repairing.get(key)) is not None:
        await busy.wait()
    state = _state(branch)
    flying = _live()
    pending = [uid for uid in _unanswered(branch, state) if uid not in flying]
    if not pending:
        return []
    STATE.repairing[key] = done = anyio.Event()
    try:
        markers = await _mark(branch, pending)
    finally:
        del STATE.repairing[key]
        done.set()
        state.ids, state.open_id = [], None  # the markers were inserted: walk again next time
    return markers


async def _mark(branch: Branch, pending: list[UUID]) -> list[AssistantResponse]:
    return await record_unanswered_turns(branch, pending, UNKNOWN_REASON)
