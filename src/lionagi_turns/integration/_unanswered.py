"""Failed ``run()`` turns: an explicit record that a turn ended without an answer.

lionagi's ``run()`` records its instruction before the model call (a consumer receiving it must
find it in ``branch.messages``), so a turn that fails, is cancelled or is abandoned leaves an
instruction no assistant response follows. ADR-0007 D2 §3 rejects the next instruction after it
(``Consecutive instructions ...``) and forbids dropping it silently; ADR-0018 rules out rolling
the failed turn's records back. So the integration records the turn's outcome instead: right
after the failed turn's last record it adds one ``AssistantResponse`` whose text says the turn
ended unanswered and why (the exception's type name only), and whose metadata names the
instruction it answers (``metadata["lionagi_turns_unanswered"]``).

Contract of ``record_unanswered(branch, instruction, reason)``:

- Does nothing (returns None) when the instruction is not in ``branch.msgs.messages`` or when an
  ``AssistantResponse`` already follows it before the next instruction (a partial answer that
  lionagi flushed before failing answers the turn).
- Otherwise records the marker through lionagi's own ``a_add_message`` (so message-added
  callbacks fire) and moves it to directly after the turn's records (its action requests and
  responses included) in the manager's progression, and in a ``current_progression`` view that
  holds the instruction. Every existing record stays where it was.
- ``mark_unanswered_turns(branch)`` does the same, explicitly, for every unanswered instruction
  already in the branch's progression (a branch whose turns failed without ``install()``), with
  the reason ``"an earlier failure"``; call it only while no turn runs on the branch (a running
  turn's instruction is unanswered until its response arrives). Under ``install()`` every call
  records the same markers before it compiles (``_repair.repair_before_call``, which also skips
  ``run()`` turns in flight); outside it, the compiler's refusal names this function.
- Cost: one walk of the progression (and of the view) per call, whatever the number of
  markers it records (``record_unanswered_turns`` marks several instructions in that walk).
- The marker is an ordinary record: it serializes with ``Branch.to_dict()``, reloads with
  ``Branch.from_dict()``, compiles as an assistant message (plain lionagi renders it the same
  way), and ``lionagi-turns compile`` shows it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lionagi.protocols.messages import AssistantResponse, Instruction
from lionagi.protocols.messages.assistant_response import AssistantResponseContent

if TYPE_CHECKING:
    from uuid import UUID

    from lionagi.protocols.generic.progression import Progression
    from lionagi.protocols.messages import RoledMessage
    from lionagi.session.branch import Branch

__all__ = (
    "UNANSWERED_KEY",
    "UNANSWERED_TEXT",
    "UNKNOWN_REASON",
    "mark_unanswered_turns",
    "open_turn_ends",
    "place_answer",
    "record_unanswered",
    "record_unanswered_turns",
    "unanswered_reason",
)

UNANSWERED_KEY = "lionagi_turns_unanswered"
UNANSWERED_TEXT = "(no response: this turn ended with {reason} before the model answered)"


def unanswered_reason(exc: BaseException) -> str:
    """The reason a marker states: ``"the caller closing the stream"`` for an abandoned
    stream, otherwise the exception's type name (its message is not copied into history)."""
    if isinstance(exc, GeneratorExit):
        return "the caller closing the stream"
    return type(exc).__name__


def open_turn_ends(pile: dict[UUID, Any], ids: list[UUID]) -> dict[UUID, int]:
    """For every turn of ``ids`` that no assistant response answers: its instruction id mapped
    to the index after the turn's last record (one walk; an instruction listed twice counts at
    its first place)."""
    ends: dict[UUID, int] = {}
    seen: set[UUID] = set()
    open_id: UUID | None = None
    for index, uid in enumerate(ids):
        msg = pile.get(uid)
        if isinstance(msg, Instruction):
            if open_id is not None:
                ends[open_id] = index
            open_id = None if uid in seen else uid
            seen.add(uid)
        elif isinstance(msg, AssistantResponse):
            open_id = None
    if open_id is not None:
        ends[open_id] = len(ids)
    return ends


def _reorder(progression: Progression, placed: dict[int, list[UUID]], old: list[UUID]) -> None:
    """Rewrite ``progression`` as ``old`` with ``placed[i]`` inserted before index ``i``."""
    order: list[UUID] = []
    for index, uid in enumerate(old):
        order.extend(placed.get(index, ()))
        order.append(uid)
    order.extend(placed.get(len(old), ()))
    progression.clear()
    progression.order.extend(order)  # public and mutable; lionagi resyncs its membership


def _new_marker(branch: Branch, instruction_id: UUID, reason: str) -> AssistantResponse:
    marker = AssistantResponse(
        content=AssistantResponseContent(
            assistant_response=UNANSWERED_TEXT.format(reason=reason)
        ),
        sender=branch.id,
        recipient=branch.user or "user",
    )  # type: ignore[call-arg]  # lionagi's pydantic model fills the default channel
    marker.metadata[UNANSWERED_KEY] = {"instruction": str(instruction_id), "reason": reason}
    return marker


def _place_all(
    progression: Progression, ends: dict[UUID, int], markers: dict[UUID, UUID]
) -> None:
    """Put each marker (instruction id -> marker id) whose turn ``ends`` names at that turn's
    end in ``progression``; a marker whose turn is not there stays where lionagi appended it."""
    placed: dict[int, list[UUID]] = {}
    for ins_id, marker_id in markers.items():
        end = ends.get(ins_id)
        if end is not None:
            placed.setdefault(end, []).append(marker_id)
    moving = {uid for ids in placed.values() for uid in ids}
    fresh = set(markers.values())
    old = [uid for uid in progression if uid not in fresh]  # ``ends`` indexes ``old``
    tail = [uid for uid in progression if uid in fresh and uid not in moving]
    placed.setdefault(len(old), []).extend(tail)
    _reorder(progression, placed, old)


def _answers_last_turn(pile: dict[UUID, Any], ids: list[UUID], instruction_id: UUID) -> bool:
    """Whether the last record of ``ids`` is in ``instruction_id``'s turn (the turn open at the
    end); walks back over the last turn only."""
    for uid in reversed(ids[:-1]):
        msg = pile.get(uid)
        if isinstance(msg, Instruction):
            return uid == instruction_id
        if isinstance(msg, AssistantResponse):
            return False
    return False


def place_answer(branch: Branch, instruction_id: UUID, response_id: UUID) -> None:
    """Move the just-recorded response ``response_id`` to directly after the records of
    ``instruction_id``'s turn when another call's records came in between (calls overlapping
    on one branch), in the manager's progression and in a ``current_progression`` view; a
    response already in its turn, or whose turn is answered or absent, stays where it is."""
    pile: dict[UUID, Any] = branch.msgs.messages.collections  # type: ignore[has-type]
    progressions = [branch.msgs.progression]
    view = branch.metadata.get("current_progression")
    if view is not None and view is not progressions[0]:
        progressions.append(view)
    for progression in progressions:
        ids = list(progression)
        if not ids or ids[-1] != response_id or _answers_last_turn(pile, ids, instruction_id):
            continue
        ends = open_turn_ends(pile, ids[:-1])
        if instruction_id in ends:
            _place_all(progression, ends, {instruction_id: response_id})


async def record_unanswered_turns(
    branch: Branch, instruction_ids: list[UUID], reason: str
) -> list[AssistantResponse]:
    """Record the marker for each of ``instruction_ids`` whose turn is unanswered (see the
    module contract), oldest first; one walk of the progression (and of the
    ``current_progression`` view) whatever the number of markers."""
    manager_progression = branch.msgs.progression
    pile: dict[UUID, RoledMessage] = branch.msgs.messages.collections  # type: ignore[has-type]
    ids = list(manager_progression)
    ends = open_turn_ends(pile, ids)
    wanted = [uid for uid in dict.fromkeys(instruction_ids) if uid in ends]
    if not wanted:
        return []
    view = branch.metadata.get("current_progression")
    view_ends = None
    if view is not None and view is not manager_progression:
        view_ends = open_turn_ends(pile, list(view))
    recorded: dict[UUID, RoledMessage] = {}
    for ins_id in wanted:
        marker = _new_marker(branch, ins_id, reason)
        await branch.msgs.a_add_message(assistant_response=marker)
        recorded[ins_id] = pile[marker.id]
    marker_ids = {ins_id: msg.id for ins_id, msg in recorded.items()}
    _place_all(manager_progression, ends, marker_ids)
    if view is not None and view_ends is not None:
        _place_all(view, view_ends, marker_ids)
    return [msg for msg in recorded.values() if isinstance(msg, AssistantResponse)]


async def record_unanswered(
    branch: Branch, instruction: Instruction, reason: str
) -> AssistantResponse | None:
    """Record the marker for ``instruction``'s unanswered turn (see the module contract)."""
    markers = await record_unanswered_turns(branch, [instruction.id], reason)
    return markers[0] if markers else None


UNKNOWN_REASON = "an earlier failure"


async def mark_unanswered_turns(branch: Branch) -> list[AssistantResponse]:
    """Record the marker after every instruction in ``branch.msgs.progression`` that no
    assistant response answers (see the module contract); returns the markers, oldest first.
    Only while no turn runs on ``branch``. One walk of the progression."""
    pile: dict[UUID, Any] = branch.msgs.messages.collections  # type: ignore[has-type]
    ends = open_turn_ends(pile, list(branch.msgs.progression))
    return await record_unanswered_turns(branch, list(ends), UNKNOWN_REASON)
