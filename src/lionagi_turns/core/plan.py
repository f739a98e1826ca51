"""``Plan``: the one value a compile's passes hand on (``core.pipeline``).

Guarantees: a plan is immutable; a pass returns a new plan with the fields it decides set and
every other field as it received them (``Plan._replace``), or the plan itself when it decides
nothing new. The first five fields are the compile's inputs; each later field holds its default
(None, empty, False or 0) until the pass named beside it ran, and a pass asserts that the
optional fields it reads are set (message ``EARLY``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple
from uuid import UUID

from lionagi_turns.core.contracts import CompiledChatRequest, CompiledMessage, TurnRequest
from lionagi_turns.core.fold import FoldParts, FoldPlan
from lionagi_turns.core.history import Projection
from lionagi_turns.core.profile import Bounded, CompileProfile, Memo, Walk
from lionagi_turns.core.rendered import RenderedPart

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

_NO_SLOTS: Mapping[str, object] = MappingProxyType({})

__all__ = ("EARLY", "Plan")


class Plan(NamedTuple):
    """One compile between two passes (the pass that sets each field in brackets)."""

    branch: Branch
    request: TurnRequest
    profile: CompileProfile
    memo: Memo
    react_context: Sequence[object] | None = None  # as the caller gave it
    items: tuple[object, ...] | None = None  # [check] the ReAct items, validated
    view: tuple[UUID, ...] = ()  # [select]
    resumable: bool = False  # [select] a walk may be resumed and kept
    walk: Walk | None = None  # [project] the previous walk resumed, None: walked in full
    snap: object | None = None  # [project] the memo's snapshot (None: nothing is kept)
    projected: Projection | None = None  # [project] the full walk of the view
    bounded: Bounded | None = None  # [bound] the profile's decision (None: no bound)
    projection: Projection | None = None  # [bound, react] what renders
    current_context: list[object] | None = None  # [react] None: the current keeps its own
    parts: FoldParts | None = None  # [plan fold] every fold part, folded or not
    fold: FoldPlan | None = None  # [plan fold] None: nothing folded
    rendered: tuple[RenderedPart, ...] = ()  # [render] the current instruction's last
    messages: tuple[CompiledMessage, ...] = ()  # [render]
    reused: int = 0  # [render] leading parts taken from ``walk``
    compiled: CompiledChatRequest | None = None  # [finish]
    stages: tuple[object, ...] = ()  # the compile's ``core.stage.Stage`` values, checked
    slots: Mapping[str, object] = _NO_SLOTS  # [a stage's hooks] each stage's own, by name

    def slot(self, name: str) -> object:
        """The value stage ``name`` keeps (None before its hooks set one)."""
        return self.slots.get(name)

    def with_slot(self, name: str, value: object) -> Plan:
        """This plan with stage ``name``'s slot set to ``value`` (the others as they were)."""
        return self._replace(slots=MappingProxyType({**self.slots, name: value}))


# The message of the assertion a pass makes on a field an earlier pass sets.
EARLY = "a pass read a Plan field before the pass that sets it ran (see core.pipeline.PASSES)"
