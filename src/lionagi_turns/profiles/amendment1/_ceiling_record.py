"""A ceiling's record on the compiled instruction (``CEILING_KEY`` in its metadata: plain JSON,
so it survives ``Branch.to_dict``/``from_dict``), read back as evidence: obeyed only where a
compile under the same ceiling could have written it (``record_problem``), else passed over and
listed (``IgnoredCeilingRecord``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol
from uuid import UUID

from lionagi.protocols.messages import Instruction

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

    from lionagi_turns.profiles.amendment1._meter import Meter

__all__ = (
    "CEILING_KEY",
    "IgnoredCeilingRecord",
    "read_first_kept",
    "read_record",
    "record_problem",
    "trailing_results",
)

CEILING_KEY = "lionagi_turns.ceiling"


class InputCeiling(Protocol):
    """What a record is compared on: ``_ceiling.InputCeiling``'s tokens and low-water mark."""

    @property
    def tokens(self) -> int: ...

    @property
    def low(self) -> int: ...

@dataclass(frozen=True, slots=True)
class IgnoredCeilingRecord:
    """A ceiling record a compile did not obey, and why: ``position``/``id`` of the
    instruction in the view that carries it."""

    position: int
    id: str
    reason: str


def read_first_kept(
    branch: Branch, ids: Sequence[UUID], ceiling: InputCeiling | None = None
) -> tuple[str | None, tuple[IgnoredCeilingRecord, ...]]:
    """The first kept turn of the record ``read_record`` obeys (None: none is obeyed, or
    nothing was dropped), and the newer records it passed over, newest first."""
    record, ignored = read_record(branch, ids, ceiling)
    first = None if record is None else record.get("first")
    return (first if isinstance(first, str) else None), ignored


def read_record(
    branch: Branch, ids: Sequence[UUID], ceiling: InputCeiling | None = None
) -> tuple[Mapping[str, object] | None, tuple[IgnoredCeilingRecord, ...]]:
    """The ceiling record of the newest instruction of the view that a compile under
    ``ceiling`` obeys (None: none), and the newer records it passed over, newest first.

    A record is obeyed when a compile could have written it — its ``first`` is None or the
    id of a message at or before its own instruction in the view — and it was written under
    ``ceiling`` (its ``ceiling`` and ``low_water`` are ``ceiling``'s; a record without them,
    or ``ceiling`` None, is not compared)."""
    table: Mapping[UUID, object] = branch.msgs.messages.collections  # type: ignore[has-type]
    ignored: list[IgnoredCeilingRecord] = []
    for at in range(len(ids) - 1, -1, -1):
        msg = table.get(ids[at])
        if not isinstance(msg, Instruction):
            continue
        record = msg.metadata.get(CEILING_KEY)
        if not isinstance(record, dict):
            continue
        reason = record_problem(record, ids[: at + 1], ceiling)
        if reason is None:
            return record, tuple(ignored)
        ignored.append(IgnoredCeilingRecord(at, str(msg.id), reason))
    return None, tuple(ignored)


def record_problem(
    record: Mapping[str, object], upto: Sequence[UUID], ceiling: InputCeiling | None
) -> str | None:
    """Why a compile under ``ceiling`` does not obey ``record``, carried by the instruction
    ``upto[-1]`` (``upto``: the view up to it), or None when it does (``read_first_kept``)."""
    first = record.get("first")
    if first is not None and (not isinstance(first, str)
                              or first not in {str(uid) for uid in upto}):
        return (f"its first kept turn {first!r} is not a message at or before its own "
                "instruction, so no compile wrote it; it is ignored")
    if ceiling is None:
        return None
    for key, value in (("ceiling", ceiling.tokens), ("low_water", ceiling.low)):
        written = record.get(key)
        if key in record and written != value:
            return (f"it was written under {key} {written!r}, not this compile's {value}; "
                    "it is ignored")
    return None


def trailing_results(branch: Branch, ids: Sequence[UUID], meter: Meter) -> int:
    """An upper estimate of the current round's results before the compile: every action
    response after the view's last instruction or assistant response, measured as the
    tool_results section renders it (the compile de-duplicates, so it renders no more)."""
    from lionagi.protocols.messages import ActionRequest, ActionResponse

    from lionagi_turns.core.history import action_result
    from lionagi_turns.profiles.amendment1._sections import result_entry

    table: Mapping[UUID, object] = branch.msgs.messages.collections  # type: ignore[has-type]
    total = 0
    for uid in reversed(ids):
        msg = table.get(uid)
        if isinstance(msg, ActionResponse):
            total += meter.text(result_entry(action_result(msg)))
        elif not isinstance(msg, ActionRequest):
            break
    return total
