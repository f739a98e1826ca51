"""``FAST``: the fast path as the core's ``Memo`` (``core.profile``).

Every answer equals ``NO_MEMO``'s (lionagi's renderer, PyYAML's safe loader) byte for byte;
what it adds is reuse: libyaml's emitter and loader inside their proven domain (``yaml``), the
render memo (``renders``), the tracked-content verdicts (``track``) and the previous walk of a
branch (``resume``). ``switch.choose`` picks it for a compile when the switch is on; its
methods do not read the switch again.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING
from uuid import UUID

import yaml as _pyyaml
from lionagi.protocols.messages import ActionResponse, Instruction
from lionagi.protocols.messages.instruction import InstructionContent

from lionagi_turns.core.history import Projection, Turn
from lionagi_turns.core.profile import Kept, Walk, install_memo_chooser
from lionagi_turns.core.render import Content, Result
from lionagi_turns.memo import renders, resume, switch, track
from lionagi_turns.memo.history import render_history
from lionagi_turns.memo.yaml import chosen_instruction_text, chosen_yaml, in_domain

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

    from lionagi_turns.core.contracts import CompiledMessage
    from lionagi_turns.core.rendered import RenderedPart

__all__ = ("FAST", "FastMemo")

_C_LOADER: type | None = getattr(_pyyaml, "CSafeLoader", None)


class FastMemo:
    """The fast path (module contract)."""

    __slots__ = ()

    @property
    def keeps(self) -> bool:
        return True

    def compiling(self) -> AbstractContextManager[object]:
        return switch.resolved()

    def yaml(self, value: object) -> str:
        return chosen_yaml(value)

    def instruction_text(self, content: InstructionContent) -> str:
        return chosen_instruction_text(content)

    def safe_load(self, text: str) -> object:
        if _C_LOADER is not None and in_domain([text]):
            return _pyyaml.load(text, Loader=_C_LOADER)
        return _pyyaml.load(text, Loader=_pyyaml.SafeLoader)

    def shallow_durable(self, content: InstructionContent) -> bool:
        return track.tracked(content)

    def cached_rendering(
        self,
        message: Instruction,
        results: Sequence[Result],
        sources: Sequence[ActionResponse],
    ) -> Content | None:
        hit = renders.cached(message, results, sources)
        return None if hit is renders.MISS else hit

    def durable_rendering(
        self,
        message: Instruction,
        results: Sequence[Result] = (),
        sources: Sequence[ActionResponse] = (),
        *,
        probed: bool = False,
    ) -> Content:
        return renders.render_durable(message, results, sources, probed=probed)

    def plain_rendering(
        self, content: InstructionContent, results: Sequence[Result]
    ) -> Content:
        return render_history(content, results)

    def resume(
        self, branch: Branch, key: Hashable, view: tuple[UUID, ...]
    ) -> tuple[Walk, Projection, object] | None:
        return resume.resume(branch, key, view)

    def snapshot(self, branch: Branch, view: tuple[UUID, ...]) -> object | None:
        return resume.snapshot(branch, view)

    def keep(self, kept: Kept) -> None:
        snap, previous = kept.snap, kept.previous
        if not isinstance(snap, resume.Snapshot):
            raise TypeError(f"keep needs the snapshot FAST took, got {type(snap).__name__}")
        if previous is not None and not isinstance(previous, resume.Walk):
            raise TypeError(f"keep needs a walk FAST kept, got {type(previous).__name__}")
        resume.store(
            kept.branch, kept.key, snap, previous, kept.projected, kept.projection,
            kept.history, kept.messages, kept.reused, kept.plan,
        )

    def reuse_prefix(self, walk: Walk, turns: Sequence[Turn]) -> int:
        return resume.same_prefix(turns, walk.projection.turns)

    def reused(
        self, walk: Walk, count: int
    ) -> tuple[list[RenderedPart], list[CompiledMessage]]:
        if not isinstance(walk, resume.Walk):
            raise TypeError(f"reused needs a walk FAST kept, got {type(walk).__name__}")
        return resume.reused(walk, count)


FAST = FastMemo()
switch.offer(FAST)
install_memo_chooser(switch.choose)
