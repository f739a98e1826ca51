"""``Trace``: what one compile decided (``core.pipeline.compile_traced`` returns it).

Guarantee: a trace is the finished plan's fields, frozen; projections, turns and slot values
may be shared with other compiles' traces and are never changed after the compile.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from uuid import UUID

from lionagi_turns.core.contracts import CompiledChatRequest
from lionagi_turns.core.fold import FoldParts, FoldPlan
from lionagi_turns.core.history import Projection
from lionagi_turns.core.profile import Bounded, CompileProfile
from lionagi_turns.core.rendered import RenderedPart
from lionagi_turns.core.stage import Stage

__all__ = ("Trace",)


@dataclass(frozen=True, slots=True)
class Trace:
    """Everything one compile decided, for the CLI and for profiles built on the seam: the
    finished ``Plan``'s decisions.

    ``projected`` is the projection as walked, ``projection`` what rendered (the bound's and
    the ReAct step's; the same object without either); ``fold`` is None when nothing is
    folded; ``parts`` holds every rendered turn in order, the current instruction last;
    ``reused`` counts the leading rendered parts taken from the previous compile of the
    branch (``Memo.resume``; 0 when nothing was); ``current_context`` is the current
    instruction's prompt context the ReAct step decided (None: its own); ``bounded`` is the
    profile bound's decision (None without a bound). Projections and turns are frozen and
    may be shared with other compiles' traces.
    """

    profile: CompileProfile
    view: tuple[UUID, ...]
    projected: Projection
    projection: Projection
    parts: FoldParts
    fold: FoldPlan | None
    rendered: tuple[RenderedPart, ...]
    stable_blocks: tuple[str, ...]
    compiled: CompiledChatRequest
    reused: int = 0
    current_context: list[object] | None = None
    bounded: Bounded | None = None
    stages: tuple[Stage, ...] = ()
    slots: Mapping[str, object] = field(default_factory=dict)

    def slot(self, name: str) -> object:
        """What stage ``name`` left in its slot (None: no such stage, or it left nothing)."""
        return self.slots.get(name)

    @property
    def fold_message_index(self) -> int | None:
        """Index in ``compiled.messages`` of the message that carries the fold, or None."""
        return next((p.message_index for p in self.rendered if p.folded), None)
