"""A historical instruction's provider text without building an ``InstructionContent``.

Contract: ``render_history(content, results)`` equals
``_render.render_instruction(content, results=results)`` byte for byte, always.

Why skipping the construction is exact: for a history render (no fold, no call options)
``render_instruction`` builds ``InstructionContent(instruction, guidance, list(context))`` and
asks for its structured text. That construction only wraps lists and dicts in lionagi's
tracked copies, which render exactly like the originals (``_prune`` turns both into plain
containers); without a response format the content has no structure instance, so its text is
the section document of those three fields (Tools empty). ``section_text`` builds that same
document from the source's fields. Everything else — ``plain_content``, images, a
``prompt_context`` that is not a list (``list(...)`` of it would change it), a content that is
not exactly ``InstructionContent`` — goes to ``render_instruction`` unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lionagi.protocols.messages.instruction import InstructionContent
from lionagi.protocols.messages.message import _TrackedList

from .._render import merge_results, render_instruction
from .yaml import section_text

__all__ = ("render_history",)

_CONTEXT_LISTS = (list, _TrackedList)


def render_history(content: Any, results: Sequence[dict[str, Any]] = ()) -> Any:
    """Exactly ``render_instruction(content, results=results)`` (see the module docstring)."""
    if (
        type(content) is not InstructionContent
        or content.plain_content
        or content.images
        or type(content.prompt_context) not in _CONTEXT_LISTS
    ):
        return render_instruction(content, results=results)
    context = content.prompt_context
    if results:
        context = merge_results(context, results)
    return section_text(content.guidance, content.instruction, context, [])
