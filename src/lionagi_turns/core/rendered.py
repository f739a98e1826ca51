"""``RenderedPart``: what the render pass made of one turn of a compile.

Guarantees: frozen; ``message_index`` is the part's index in the compiled request's
``messages``, None exactly when its rendering was falsy and so left out; ``folded`` marks the
one part that carries the fold (at most one per compile).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lionagi.protocols.messages import MessageRole

from lionagi_turns.core.history import AssistantTurn, InstructionTurn
from lionagi_turns.core.render import Content

__all__ = ("RenderedPart",)


@dataclass(frozen=True, slots=True)
class RenderedPart:
    """One rendered turn: a historical turn (``turn``) or the current instruction (None)."""

    source: Literal["history", "current"]
    role: MessageRole
    content: Content
    turn: InstructionTurn | AssistantTurn | None
    message_index: int | None
    folded: bool = False
