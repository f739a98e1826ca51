"""ADR-0127 at the call surface: the prompt-cache profile's compile and what the adapter gets.

``compile_for_prompt_cache(branch, request)`` compiles with ``_cache_layout.compile_cached``
over the Branch's tool set (``branch.acts.schema_list``, the conversation's tools, D2) and
returns the compiled request (its instruction carrying the durable ``SentRecord``) and the
``system_blocks`` value for lionagi's Anthropic adapter: a ``SegmentedBlocks`` list, which the
Anthropic projection (``_anthropic``) marks by segment and lionagi's own adapter reads as its
ordered stable blocks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._cache_layout import compile_cached
from .._contracts import CompiledChatRequest, TurnRequest
from ._anthropic import SegmentedBlocks

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("compile_for_prompt_cache",)


def compile_for_prompt_cache(
    branch: Branch, request: TurnRequest
) -> tuple[CompiledChatRequest, SegmentedBlocks]:
    """The compiled request and its ordered system blocks (module contract)."""
    acts: Any = getattr(branch, "acts", None)
    schemas = list(getattr(acts, "schema_list", None) or ())
    result = compile_cached(branch, request, schemas)
    layout = result.layout
    blocks = SegmentedBlocks(
        list(layout.stable), list(layout.conversation), layout.previous_end
    )
    return result.compiled, blocks
