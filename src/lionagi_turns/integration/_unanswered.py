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
    "record_unanswered",
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


def _turn_end(branch: Branch, progression: Progression, ins_id: UUID) -> int | None:
    """The index after the last record of the turn ``ins_id`` starts in ``progression``, or
    None when the instruction is absent or the turn already holds an assistant response."""
    ids = list(progression)
    try:
        start = ids.index(ins_id)
    except ValueError:
        return None
    pile: dict[UUID, RoledMessage] = branch.msgs.messages.collections  # type: ignore[has-type]
    end = start + 1
    while end < len(ids):
        msg = pile.get(ids[end])
        if isinstance(msg, Instruction):
            break
        if isinstance(msg, AssistantResponse):
            return None
        end += 1
    return end


def _place(progression: Progression, marker_id: UUID, index: int) -> None:
    if marker_id in progression:
        progression.remove(marker_id)
    progression.insert(index, [marker_id])


async def record_unanswered(
    branch: Branch, instruction: Instruction, reason: str
) -> AssistantResponse | None:
    """Record the marker for ``instruction``'s unanswered turn (see the module contract)."""
    manager_progression = branch.msgs.progression
    end = _turn_end(branch, manager_progression, instruction.id)
    if end is None:
        return None
    marker = AssistantResponse(
        content=AssistantResponseContent(
            assistant_response=UNANSWERED_TEXT.format(reason=reason)
        ),
        sender=branch.id,
        recipient=branch.user or "user",
    )  # type: ignore[call-arg]  # lionagi's pydantic model fills the default channel
    marker.metadata[UNANSWERED_KEY] = {"instruction": str(instruction.id), "reason": reason}
    await branch.msgs.a_add_message(assistant_response=marker)
    pile: dict[UUID, RoledMessage] = branch.msgs.messages.collections  # type: ignore[has-type]
    recorded: RoledMessage = pile[marker.id]
    _place(manager_progression, recorded.id, end)
    view = branch.metadata.get("current_progression")
    if view is not None and view is not manager_progression:
        view_end = _turn_end(branch, view, instruction.id)
        if view_end is not None:
            _place(view, recorded.id, view_end)
    return recorded if isinstance(recorded, AssistantResponse) else marker


UNKNOWN_REASON = "an earlier failure"


async def mark_unanswered_turns(branch: Branch) -> list[AssistantResponse]:
    """Record the marker after every instruction in ``branch.msgs.progression`` that no
    assistant response answers (see the module contract); returns the markers, oldest first.
    Only while no turn runs on ``branch``."""
    pile: dict[UUID, Any] = branch.msgs.messages.collections  # type: ignore[has-type]
    instructions = [
        pile[uid] for uid in list(branch.msgs.progression) if isinstance(pile.get(uid), Instruction)
    ]
    out = []
    for instruction in instructions:  # record_unanswered skips an answered turn
        marker = await record_unanswered(branch, instruction, UNKNOWN_REASON)
        if marker is not None:
            out.append(marker)
    return out
