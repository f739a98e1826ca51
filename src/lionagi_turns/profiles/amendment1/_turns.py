"""D2 §6 step 1's unit: the whole turns of a history view, and which of them a bound keeps.

Rules (record in view order -> turn):

- ``Instruction``: starts a turn; the action records pending since the previous instruction
  (or the start of the view) join it, ahead of it.
- ``AssistantResponse``: joins the current turn (the assistant responses answering its
  instruction). Before any instruction it opens a *lead* turn with no instruction.
- ``ActionRequest`` / ``ActionResponse``: pending until the next instruction; those after the
  last historical instruction belong to the current instruction (``Turns.trailing``), which
  the history bound never drops.
- ``System`` and role-unset records are in no turn: they never render as history.

``keep_newest(sizes, budget)`` is the drop order: the longest run of newest turns whose sizes
sum to at most ``budget`` is kept; everything older is dropped, so the kept turns are adjacent
in the view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from uuid import UUID

from lionagi.protocols.messages import (
    ActionRequest,
    ActionResponse,
    AssistantResponse,
    Instruction,
)

__all__ = ("Record", "Turn", "Turns", "keep_newest", "split_turns")

Record = ActionRequest | ActionResponse | Instruction | AssistantResponse  # one that renders


@dataclass(slots=True)
class Turn:
    """One whole turn: its instruction (None for a lead turn), assistant responses and the
    action records projected into its instruction's tool_results entry, in view order."""

    instruction: Instruction | None
    assistants: list[AssistantResponse] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)


@dataclass(slots=True)
class Turns:
    turns: list[Turn]
    trailing: list[ActionRequest | ActionResponse]


def split_turns(ids: Sequence[UUID], table: Mapping[UUID, object]) -> Turns:
    """The whole turns of a validated view (see the module rules). ``table`` maps id ->
    record (a lionagi ``Pile``'s ``collections``: one hash per id, as the default profile's
    walk reads them)."""
    turns: list[Turn] = []
    pending: list[ActionRequest | ActionResponse] = []
    seen: set[UUID] = set()
    for uid in ids:
        if uid in seen:
            continue
        msg = table.get(uid)
        if msg is None:
            continue
        seen.add(uid)
        if isinstance(msg, ActionRequest | ActionResponse):
            pending.append(msg)
        elif isinstance(msg, Instruction):
            turns.append(Turn(msg, [], [*pending, msg]))
            pending = []
        elif isinstance(msg, AssistantResponse):
            if not turns:
                turns.append(Turn(None))
            turns[-1].assistants.append(msg)
            turns[-1].records.append(msg)
    return Turns(turns, pending)


def keep_newest(sizes: Sequence[int], budget: int | None) -> int:
    """Index of the first kept item: the newest items whose sizes sum to <= ``budget`` are
    kept, stopping at the first that does not fit. ``None`` keeps everything."""
    if budget is None:
        return 0
    total = 0
    start = len(sizes)
    for i in range(len(sizes) - 1, -1, -1):
        if total + sizes[i] > budget:
            break
        total += sizes[i]
        start = i
    return start
