"""The prompt-cache profile's per-branch slots (``memo``'s keying and lifetime): one ``Slot`` per
live Branch, by identity (the branch memory's ``"prompt-cache"`` slot, ``memo.branch_memory``:
it goes with its branch), and the plain copies a slot holds (``plain_copy``: new containers,
the same leaves; ``Unplain`` for anything but JSON data)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from lionagi_turns.memo.branch_memory import BranchSlot

if TYPE_CHECKING:
    from _hashlib import HASH

    from lionagi.session.branch import Branch

    from lionagi_turns.core.contracts import CompiledMessage

__all__ = ("SLOTS", "Chain", "Slot", "Unplain", "plain_copy", "slot_count", "slot_of")


class Unplain(Exception):
    """A record holds a value the memo cannot copy and compare exactly."""


def plain_copy(value: object) -> object:
    """A copy of JSON data whose containers are new and whose leaves are the same objects (so
    ``==`` against the original is cheap, and exact for JSON values); ``Unplain`` for
    anything else."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if type(value) is list:
        return [plain_copy(v) for v in value]
    if type(value) is not dict:
        raise Unplain
    out = {}
    for key, item in value.items():
        if type(key) is not str:
            raise Unplain
        out[key] = plain_copy(item)
    return out


@dataclass(frozen=True, slots=True)
class Chain:
    messages: tuple[CompiledMessage, ...]
    states: tuple[tuple[int, HASH], ...]  # (length, sha256 state after that many), ascending


H = TypeVar("H")  # what the slot keeps of the last answer (``memo.Held``)


class Slot(Generic[H]):
    __slots__ = ("chain", "held", "stamp", "tools")

    def __init__(self) -> None:
        self.held: H | None = None
        self.stamp: int | None = None  # the last answer's (also when it could not be held)
        self.chain: Chain | None = None
        self.tools: tuple[object, str] | None = None  # (copy of the schemas, their section)


SLOTS: BranchSlot[Slot[Any]] = BranchSlot("prompt-cache")


def slot_of(branch: Branch) -> Slot[Any]:
    """``branch``'s slot, made with its first use (one per live branch object)."""
    slot = SLOTS.setdefault(branch, Slot)
    if slot is None:  # pragma: no cover - a lionagi Branch is weakly referenceable
        raise TypeError(f"{type(branch).__name__} cannot hold a prompt-cache slot")
    return slot


def slot_count() -> int:
    """Slots held (one per live branch compiled under the profile with the fast path on)."""
    return len(SLOTS)
