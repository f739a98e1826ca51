"""Rendering of a historical instruction's durable view (the compiler's hot path).

``render_durable(message)`` equals ``render_instruction(message.content)`` byte for byte.
"""

from __future__ import annotations

from typing import Any

from lionagi.protocols.messages import Instruction

from .render import render_instruction

__all__ = ("render_durable",)


def render_durable(message: Instruction) -> Any:
    """The provider-visible rendering of a historical instruction with nothing folded in."""
    return render_instruction(message.content)
