"""ADR-0007 D2 steps 1–3: select the history view, project it, and find every defect.

``project_history`` walks the selected ids once and returns the conversational turns plus
*all* defects it found (the CLI's ``check`` reports them all; the compiler raises the first kind
in the ADR's order). Nothing here renders or mutates a record.

Rules (record kind -> projection):

- id not in ``branch.msgs.messages``  -> defect ``missing_id`` (all collected)
- id repeated in the view             -> defect ``duplicate_id`` (each repeat)
- ``System``                          -> not emitted (the canonical system is folded later)
- ``ActionRequest``                   -> not emitted (its call is on the correlated response)
- ``ActionResponse``                  -> pending ``{"function","arguments","output"}`` result,
                                         attached to the next ``Instruction`` (else the current)
- ``AssistantResponse``               -> assistant turn; consecutive ones form one run
- ``Instruction``                     -> instruction turn; one right after another instruction
                                         -> defect ``consecutive_instructions``
- role ``UNSET`` (base ``Message``)   -> ignored (routed traffic, not a turn)
- any other ``Message`` subclass      -> defect ``unknown_subtype`` (raised as TypeError)
- not a ``Message`` at all            -> defect ``unknown_subtype``
- branch has a system and the first turn is an assistant -> defect ``first_not_instruction``
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

from lionagi.protocols.messages import (
    ActionRequest,
    ActionResponse,
    AssistantResponse,
    Instruction,
    Message,
    MessageRole,
    System,
)

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = (
    "CONSECUTIVE_INSTRUCTIONS",
    "FIRST_MESSAGE_RULE",
    "AssistantTurn",
    "Defect",
    "DefectKind",
    "HistoryError",
    "InstructionTurn",
    "Projection",
    "project_history",
    "select_ids",
)

CONSECUTIVE_INSTRUCTIONS = "Consecutive instructions require an intervening assistant response"
FIRST_MESSAGE_RULE = "First message in progression must be an Instruction or System"

DefectKind = Literal[
    "missing_id",
    "duplicate_id",
    "unknown_subtype",
    "consecutive_instructions",
    "first_not_instruction",
]
# The order in which the compiler raises: selection errors first, then projection, then order.
DEFECT_ORDER: tuple[DefectKind, ...] = (
    "missing_id",
    "duplicate_id",
    "unknown_subtype",
    "consecutive_instructions",
    "first_not_instruction",
)


@dataclass(frozen=True, slots=True)
class Defect:
    """One reason the compiler would reject a history view: positions index the view."""

    kind: DefectKind
    message: str
    positions: tuple[int, ...]
    ids: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message": self.message,
            "positions": list(self.positions),
            "ids": list(self.ids),
        }


class HistoryError(ValueError):
    """A history view the compiler refuses; ``defects`` are all of the raised kind."""

    def __init__(self, message: str, defects: tuple[Defect, ...]) -> None:
        super().__init__(message)
        self.defects = defects


class UnknownMessageTypeError(TypeError):
    """A record of a fixed-role kind the compiler has no rule for (ADR D2: never a fallback)."""

    def __init__(self, message: str, defects: tuple[Defect, ...]) -> None:
        super().__init__(message)
        self.defects = defects


@dataclass(slots=True)
class InstructionTurn:
    """A retained historical instruction and the action results folded into it."""

    message: Instruction
    position: int
    results: list[dict[str, Any]] = field(default_factory=list)
    # The ActionResponse records ``results`` were projected from, in the same order.
    sources: list[ActionResponse] = field(default_factory=list)


@dataclass(slots=True)
class AssistantTurn:
    """A run of consecutive assistant responses, merged into one message when rendered."""

    messages: list[AssistantResponse]
    positions: list[int]


Turn = InstructionTurn | AssistantTurn


@dataclass(slots=True)
class Projection:
    """The provider-relevant history of one view: turns, trailing results and all defects."""

    ids: tuple[UUID, ...]
    turns: list[Turn]
    pending: list[dict[str, Any]]
    defects: list[Defect]

    def raise_first(self) -> None:
        """Raise the first defect kind in ADR order, with every defect of that kind."""
        for kind in DEFECT_ORDER:
            found = tuple(d for d in self.defects if d.kind == kind)
            if not found:
                continue
            message = _error_message(kind, found)
            if kind == "unknown_subtype":
                raise UnknownMessageTypeError(message, found)
            raise HistoryError(message, found)


def select_ids(branch: Branch, progression: tuple[UUID, ...] | None) -> tuple[UUID, ...]:
    """The view's ids in order: ``progression`` itself, or the branch's active progression
    (``metadata["current_progression"]`` when set) when it is None."""
    if progression is not None:
        return progression
    return tuple(_as_uuid(item, i) for i, item in enumerate(branch.progression))


def _as_uuid(item: Any, position: int) -> UUID:
    if isinstance(item, UUID):
        return item
    raw = getattr(item, "id", item)
    try:
        return raw if isinstance(raw, UUID) else UUID(str(raw))
    except ValueError:
        raise ValueError(
            f"branch progression[{position}] = {item!r} is not a message id; "
            "repair metadata['current_progression'] or the branch's progression"
        ) from None


def action_result(response: ActionResponse) -> dict[str, Any]:
    """The provider-visible projection of one action response (ADR D2 step 2)."""
    content = response.content
    return {"function": content.function, "arguments": content.arguments, "output": content.output}


def project_history(branch: Branch, ids: tuple[UUID, ...]) -> Projection:
    """Walk the view once; see the module rules. Never raises for a defect: collects it."""
    pile: dict[UUID, Any] = branch.msgs.messages.collections  # type: ignore[has-type]
    defects: list[Defect] = []
    _selection_defects(ids, pile, defects)

    turns: list[Turn] = []
    pending: list[dict[str, Any]] = []
    pending_sources: list[ActionResponse] = []
    seen: set[UUID] = set()
    for position, uid in enumerate(ids):
        if uid in seen:
            continue
        seen.add(uid)
        msg = pile.get(uid)
        if msg is None:
            continue
        # Exhaustive by kind; subclasses of lionagi's kinds follow their base's rule.
        if isinstance(msg, ActionResponse):
            pending.append(action_result(msg))
            pending_sources.append(msg)
        elif isinstance(msg, AssistantResponse):
            last = turns[-1] if turns else None
            if isinstance(last, AssistantTurn):
                last.messages.append(msg)
                last.positions.append(position)
            else:
                turns.append(AssistantTurn([msg], [position]))
        elif isinstance(msg, Instruction):
            last = turns[-1] if turns else None
            if isinstance(last, InstructionTurn):
                defects.append(
                    Defect(
                        "consecutive_instructions",
                        f"instruction at position {position} (id {uid}) directly follows the "
                        f"instruction at position {last.position} (id {last.message.id})",
                        (last.position, position),
                        (str(last.message.id), str(uid)),
                    )
                )
                # Keep walking to report every defect; the later instruction is not retained.
                continue
            turns.append(InstructionTurn(msg, position, pending, pending_sources))
            pending = []
            pending_sources = []
        elif isinstance(msg, System | ActionRequest):
            continue
        elif isinstance(msg, Message) and type(msg)._role == MessageRole.UNSET:
            continue
        else:
            defects.append(
                Defect(
                    "unknown_subtype",
                    f"position {position} (id {uid}) is a {type(msg).__name__} with role "
                    f"{_role_of(msg)!r}, a kind the compiler has no rule for",
                    (position,),
                    (str(uid),),
                )
            )

    if branch.msgs.system is not None and turns and isinstance(turns[0], AssistantTurn):
        first = turns[0]
        defects.append(
            Defect(
                "first_not_instruction",
                f"the branch has a system message and the first retained record, position "
                f"{first.positions[0]} (id {first.messages[0].id}), is an assistant response",
                (first.positions[0],),
                (str(first.messages[0].id),),
            )
        )
    return Projection(ids, turns, pending, defects)


def _selection_defects(ids: tuple[UUID, ...], pile: dict[UUID, Any], out: list[Defect]) -> None:
    for position, uid in enumerate(ids):
        if uid not in pile:
            out.append(
                Defect(
                    "missing_id",
                    f"position {position}: id {uid} is not in branch.msgs.messages",
                    (position,),
                    (str(uid),),
                )
            )
    counts = Counter(ids)
    for uid, count in counts.items():
        if count > 1:
            positions = tuple(i for i, x in enumerate(ids) if x == uid)
            out.append(
                Defect(
                    "duplicate_id",
                    f"id {uid} appears {count} times, at positions {list(positions)}",
                    positions,
                    (str(uid),),
                )
            )


def _role_of(msg: Any) -> str:
    role = getattr(msg, "role", None)
    return role.value if isinstance(role, MessageRole) else str(role)


def _join(defects: Iterable[Defect]) -> str:
    return "; ".join(d.message for d in defects)


def _error_message(kind: DefectKind, defects: tuple[Defect, ...]) -> str:
    details = _join(defects)
    if kind == "missing_id":
        ids = ", ".join(d.ids[0] for d in defects)
        return (
            f"{len(defects)} progression id(s) not found in branch.msgs.messages: {ids} "
            f"({details}). Remove them from the progression or add the messages first."
        )
    if kind == "duplicate_id":
        return (
            f"duplicate ids in progression: {details}. A record may appear once; remove the "
            "repeats."
        )
    if kind == "unknown_subtype":
        return (
            f"unsupported message kind in history: {details}. Add an explicit compiler rule "
            "for it or leave it out of the progression."
        )
    if kind == "consecutive_instructions":
        return (
            f"{CONSECUTIVE_INSTRUCTIONS}: {details}. Record an assistant response between "
            "them or leave one out of the progression."
        )
    return (
        f"{FIRST_MESSAGE_RULE}: {details}. Start the progression at an instruction."
    )
