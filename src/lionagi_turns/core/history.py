"""ADR-0007 D2 §1–3: select the history view, project it, and find every defect.

``project_history`` walks the selected ids once and returns the conversational turns plus
*all* defects it found (the CLI's ``check`` reports them all; the compiler raises the first kind
in the ADR's order, ``core.errors.DEFECT_RULES``). Nothing here renders or mutates a record.

What a record becomes is ``core.kinds.KIND_RULES`` (one row per message kind); on top of it the walk
finds these defects:

- id not in ``branch.msgs.messages``  -> ``missing_id`` (all collected)
- id repeated in the view             -> ``duplicate_id`` (each repeat; the record is walked once)
- an instruction right after an instruction -> ``consecutive_instructions`` (the later one is
  not retained)
- a record no kind rule matches       -> ``unknown_subtype`` (raised as TypeError)
- the branch has a system and the first turn is an assistant -> ``first_not_instruction``

``branch_system`` is the branch's system message for every profile: ``msgs.system``, or the
System record at the head of the pile where lionagi 0.36's ``Branch.from_dict`` leaves it
while leaving ``msgs.system`` None (intended-differences §4.13).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, assert_never
from uuid import UUID

from lionagi.protocols.messages import (
    ActionResponse,
    AssistantResponse,
    Instruction,
    MessageRole,
    System,
)

from lionagi_turns.core.consistent import read_order
from lionagi_turns.core.errors import (
    CONSECUTIVE_INSTRUCTIONS,
    DEFECT_ORDER,
    FIRST_MESSAGE_RULE,
    Defect,
    DefectKind,
    HistoryError,
    UnknownMessageTypeError,
    raise_first,
)
from lionagi_turns.core.kinds import rule_for
from lionagi_turns.core.values import shown

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

# The defect sentences are re-exported here beside the walk that raises them.
__all__ = (
    "CONSECUTIVE_INSTRUCTIONS",
    "DEFECT_ORDER",
    "FIRST_MESSAGE_RULE",
    "AssistantTurn",
    "Defect",
    "DefectKind",
    "HistoryError",
    "InstructionTurn",
    "Projection",
    "Turn",
    "UnknownMessageTypeError",
    "action_result",
    "branch_system",
    "extend_projection",
    "project_history",
    "select_ids",
)


@dataclass(frozen=True, slots=True)
class InstructionTurn:
    """A retained historical instruction and the action results folded into it.

    ``context`` is None unless a compiler step gave this request's copy of the instruction a
    different prompt context (the ReAct step: a new turn, ``with_context``); the stored
    record is never changed. Frozen: a turn may be shared by many compiles' projections.
    """

    message: Instruction
    position: int
    results: Sequence[dict[str, object]] = ()
    # The ActionResponse records ``results`` were projected from, in the same order.
    sources: Sequence[ActionResponse] = ()
    context: Sequence[object] | None = None

    def with_context(self, context: Sequence[object]) -> InstructionTurn:
        """This turn with ``context`` as its prompt context for one request."""
        return InstructionTurn(self.message, self.position, self.results, self.sources, context)


@dataclass(frozen=True, slots=True)
class AssistantTurn:
    """A run of consecutive assistant responses, merged into one message when rendered."""

    messages: Sequence[AssistantResponse]
    positions: Sequence[int]


Turn = InstructionTurn | AssistantTurn


@dataclass(frozen=True, slots=True)
class Projection:
    """The provider-relevant history of one view: turns, trailing results and all defects.

    ``pending`` are the results after the last retained instruction (they fold into the
    current one), projected from ``pending_sources``. Frozen, and the walk builds its fields
    as tuples: a projection and its turns are shared between compiles of a branch.
    """

    turns: Sequence[Turn]
    pending: Sequence[dict[str, object]]
    defects: Sequence[Defect]
    pending_sources: Sequence[ActionResponse] = ()

    def raise_first(self) -> None:
        """Raise the first defect kind in ADR order, with every defect of that kind."""
        raise_first(self.defects)

    def instructions(self) -> list[InstructionTurn]:
        """The retained instruction turns, in order."""
        return [t for t in self.turns if isinstance(t, InstructionTurn)]


def select_ids(branch: Branch, progression: tuple[UUID, ...] | None) -> tuple[UUID, ...]:
    """The view's ids in order: ``progression`` itself, or the branch's active progression
    (``metadata["current_progression"]`` when set) when it is None, read as of one moment
    (``core.consistent.read_order``: no id a concurrent append is halfway through writing)."""
    if progression is not None:
        return progression
    items = read_order(branch.msgs.messages, branch.progression)  # type: ignore[has-type]
    if set(map(type, items)) <= {UUID}:  # the usual case: exact UUIDs, nothing to convert
        return items
    return tuple(_as_uuid(item, i) for i, item in enumerate(items))


def _as_uuid(item: object, position: int) -> UUID:
    if isinstance(item, UUID):
        return item
    raw = getattr(item, "id", item)
    try:
        return raw if isinstance(raw, UUID) else UUID(str(raw))
    except ValueError:
        raise ValueError(
            f"branch progression[{position}] = {shown(item)} is not a message id; "
            "repair metadata['current_progression'] or the branch's progression"
        ) from None


def action_result(response: ActionResponse) -> dict[str, object]:
    """The provider-visible projection of one action response (ADR D2 step 2)."""
    content = response.content
    return {"function": content.function, "arguments": content.arguments, "output": content.output}


def project_history(branch: Branch, ids: tuple[UUID, ...]) -> Projection:
    """Walk the view once; see the module rules. Never raises for a defect: collects it.

    Each id is hashed once (its pile lookup); repeats are found through a set of the ids'
    integers, and only a view with repeats checks each record against the ones seen."""
    pile: dict[UUID, Any] = branch.msgs.messages.collections  # type: ignore[has-type]
    records = list(map(pile.get, ids))
    defects: list[Defect] = []
    _selection_defects(ids, records, defects)
    repeats = bool(defects) and any(d.kind == "duplicate_id" for d in defects)
    walk = _Walk([], [], [], defects)
    walk.run(ids, records, 0, repeats)
    return walk.projection(branch)


def extend_projection(
    branch: Branch, previous: Projection, ids: tuple[UUID, ...], records: list[Any], start: int
) -> Projection:
    """The projection of ``ids`` given ``previous``, the defect-free projection of
    ``ids[:start]`` whose records are ``records[:start]`` unchanged: equal to
    ``project_history(branch, ids)`` whenever that finds no defect (each id is a key of the
    pile, none repeats; the caller checks both for ``ids[start:]``). Defects are collected as
    ``project_history`` collects them, except ``missing_id`` and ``duplicate_id``.

    The new projection holds ``previous``'s turns (the same objects) except a last assistant
    run the new records continue, which is replaced by the longer run."""
    walk = _Walk(list(previous.turns), list(previous.pending), list(previous.pending_sources), [])
    walk.run(ids, records, start, False)
    return walk.projection(branch)


class _Walk:
    """One walk's growing turns, pending results and defects (lists private to the walk,
    frozen into the ``Projection``). An assistant run is a frozen turn at the end of
    ``turns``; records that continue it wait in ``run_messages`` / ``run_positions`` until
    the run ends, so each run is built once."""

    __slots__ = ("defects", "pending", "pending_sources", "run_messages", "run_positions", "turns")

    def __init__(
        self,
        turns: list[Turn],
        pending: list[dict[str, object]],
        pending_sources: list[ActionResponse],
        defects: list[Defect],
    ) -> None:
        self.turns = turns
        self.pending = pending
        self.pending_sources = pending_sources
        self.defects = defects
        self.run_messages: list[AssistantResponse] = []
        self.run_positions: list[int] = []

    def run(self, ids: tuple[UUID, ...], records: list[Any], start: int, repeats: bool) -> None:
        """Project ``records[start:]`` (turns, pending results, defects), each record at its
        view position."""
        turns = self.turns
        defects = self.defects
        seen: set[UUID] = set()
        # The instruction seen last in this walk, retained or not: the one a next instruction
        # directly follows (an unretained one sits between it and the last retained turn).
        prior: tuple[int, UUID] | None = None
        for position in range(start, len(records)):
            msg = records[position]
            if msg is None:
                continue
            uid = ids[position]
            if repeats:
                if uid in seen:
                    continue
                seen.add(uid)
            rule = rule_for(msg)
            if rule is None:
                defects.append(_unknown_defect(msg, position, uid))
                continue
            match rule.projected:
                case "skip":
                    pass
                case "action_result":
                    self.pending.append(action_result(msg))
                    self.pending_sources.append(msg)
                case "assistant":
                    self._add_assistant(msg, position)
                case "instruction":
                    self._close_run()
                    last = turns[-1] if turns else None
                    before = prior
                    prior = (position, uid)
                    if isinstance(last, InstructionTurn):
                        # Keep walking to report every defect; the later one is not retained.
                        defects.append(_consecutive_defect(last, before, position, uid))
                        continue
                    pending, sources = self.pending, self.pending_sources
                    turns.append(
                        InstructionTurn(msg, position, tuple(pending), tuple(sources))
                        if pending
                        else InstructionTurn(msg, position)
                    )
                    self.pending, self.pending_sources = [], []
                case unreachable:
                    assert_never(unreachable)

    def _add_assistant(self, msg: AssistantResponse, position: int) -> None:
        """Continue the run ending ``turns``, or start one."""
        turns = self.turns
        if turns and isinstance(turns[-1], AssistantTurn):
            self.run_messages.append(msg)
            self.run_positions.append(position)
        else:
            turns.append(AssistantTurn((msg,), (position,)))

    def _close_run(self) -> None:
        """Replace the last run by itself plus the records waiting to continue it."""
        if not self.run_messages:
            return
        last = self.turns[-1]
        if not isinstance(last, AssistantTurn):  # pragma: no cover - only a run is continued
            raise AssertionError("assistant records wait only behind an assistant run")
        self.turns[-1] = AssistantTurn(
            (*last.messages, *self.run_messages), (*last.positions, *self.run_positions)
        )
        self.run_messages, self.run_positions = [], []

    def projection(self, branch: Branch) -> Projection:
        """The frozen projection, with the first-turn defect."""
        self._close_run()
        turns = tuple(self.turns)
        defects = self.defects
        if branch_system(branch) is not None and turns and isinstance(turns[0], AssistantTurn):
            defects.append(_first_turn_defect(turns[0]))
        return Projection(turns, tuple(self.pending), tuple(defects), tuple(self.pending_sources))


def _unknown_defect(msg: object, position: int, uid: UUID) -> Defect:
    return Defect(
        "unknown_subtype",
        f"position {position} (id {uid}) is a {type(msg).__name__} with role "
        f"{_role_of(msg)!r}, a kind the compiler has no rule for",
        (position,),
        (str(uid),),
    )


def _consecutive_defect(
    last: InstructionTurn, before: tuple[int, UUID] | None, position: int, uid: UUID
) -> Defect:
    """The defect of the instruction at ``position`` directly following ``before`` (the
    instruction seen last, else ``last``, the retained one)."""
    at, before_id = before if before is not None else (last.position, last.message.id)
    return Defect(
        "consecutive_instructions",
        f"instruction at position {position} (id {uid}) directly follows "
        f"the instruction at position {at} (id {before_id})",
        (at, position),
        (str(before_id), str(uid)),
    )


def _first_turn_defect(first: AssistantTurn) -> Defect:
    return Defect(
        "first_not_instruction",
        f"the branch has a system message and the first retained record, position "
        f"{first.positions[0]} (id {first.messages[0].id}), is an assistant response",
        (first.positions[0],),
        (str(first.messages[0].id),),
    )


def _selection_defects(
    ids: tuple[UUID, ...], records: list[Any], out: list[Defect]
) -> None:
    """``missing_id`` for each position whose record is absent, then ``duplicate_id`` for each
    repeated id (in order of first appearance)."""
    for position, record in enumerate(records):
        if record is None:
            uid = ids[position]
            out.append(
                Defect(
                    "missing_id",
                    f"position {position}: id {uid} is not in branch.msgs.messages",
                    (position,),
                    (str(uid),),
                )
            )
    keys = [uid.int for uid in ids]  # UUID equality and hash are those of .int
    if len(set(keys)) == len(keys):
        return
    counts = Counter(keys)
    for position, key in enumerate(keys):
        count = counts.get(key, 0)
        if count > 1:
            del counts[key]  # report each repeated id once, at its first appearance
            uid = ids[position]
            positions = tuple(i for i, k in enumerate(keys) if k == key)
            out.append(
                Defect(
                    "duplicate_id",
                    f"id {uid} appears {count} times, at positions {list(positions)}",
                    positions,
                    (str(uid),),
                )
            )


def _role_of(msg: object) -> str:
    role = getattr(msg, "role", None)
    return role.value if isinstance(role, MessageRole) else str(role)


def branch_system(branch: Branch) -> System | None:
    """The branch's system message: ``branch.msgs.system``, or, when that is None, the
    ``System`` message at the head of the branch's message pile that also heads its
    progression, where lionagi's ``set_system`` keeps it (lionagi 0.36's ``Branch.from_dict``
    restores both but leaves ``msgs.system`` None); None otherwise."""
    msgs: Any = branch.msgs
    system = msgs.system
    if system is not None:
        return system
    head = next(iter(msgs.messages), None)
    if not isinstance(head, System):
        return None
    first = next(iter(branch.progression), None)
    return head if first == head.id else None
