"""Amendment 1 laid out for the prompt cache: the stages ``(Amendment1, PromptCache)``.

``compile_cached_amended(branch, request, tool_schemas, ...)`` is the one pipeline with both
stages: Amendment 1 bounds the request (context admission and skip markers, the history and
tool_results bounds with a ceiling's stepped rule, counting the tool section the layout sends
outside the messages and each instruction as the layout sends it; the history marker; the
five ``SectionBound`` records and the refusals), then the layout lays it out (the system text
and tool set as the stable segment, the first call's admitted blocks as the conversation
segment, a later call's blocks folded into its turn with Amendment 1's envelope, historical
instructions sent as recorded, the durable ``SentRecord`` over the messages as sent, marker
included, so between two drop steps the prefix is the recorded one and a drop step is a
counted rewrite). It is the only module that imports both profile packages.

Returns the amended ``CompiledChatRequest``, the Anthropic adapter's ``SegmentedBlocks`` and
the layout's ``CachedCompile``. Raises what either stage raises, before producing any output;
nothing stored is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from lionagi_turns.core.render import ShownSections
from lionagi_turns.profiles.amendment1._ceiling import InputCeiling
from lionagi_turns.profiles.amendment1._compile import (
    amended_result,
    amendment1_stage,
    seed_request,
)
from lionagi_turns.profiles.amendment1._contracts import (
    CompiledChatRequest,
    SectionBudgets,
    TurnRequest,
)
from lionagi_turns.profiles.amendment1._meter import Measure
from lionagi_turns.profiles.prompt_cache._blocks import SegmentedBlocks
from lionagi_turns.profiles.prompt_cache._compile import CachedCompile, PromptCache, laid_out

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("SegmentedBlocks", "compile_cached_amended", "compile_for_prompt_cache")


def compile_cached_amended(
    branch: Branch,
    request: TurnRequest,
    tool_schemas: Sequence[Mapping[str, object]] | None,
    *,
    budgets: SectionBudgets | None = None,
    measure: Measure | None = None,
    react_context: Sequence[object] | None = None,
    ceiling: InputCeiling | None = None,
    shown: tuple[ShownSections, ShownSections] | None = None,
    audit: bool = False,
) -> tuple[CompiledChatRequest, SegmentedBlocks, CachedCompile]:
    """The composed compile (module contract). ``tool_schemas`` is the conversation's tool
    set (``branch.acts.schema_list``; None: as last recorded). ``shown``: the response
    sections the current instruction is sent with and those the ceiling measures it with (a
    recorded call rebuilt: tools by reference, then in full), instead of the request's call
    options; ``audit`` as ``compile_cached``'s."""
    layout = PromptCache(
        tool_schemas=None if tool_schemas is None else list(tool_schemas),
        shown=None if shown is None else shown[0],
        audit=audit,
    )
    amended = amendment1_stage(request, budgets, measure, ceiling,
                               None if shown is None else shown[1])
    result = laid_out(branch, seed_request(request), (amended, layout),
                      react_context=react_context)
    compiled = amended_result(result.trace)
    laid = result.layout
    blocks = SegmentedBlocks(list(laid.stable), list(laid.conversation), laid.previous_end)
    return compiled, blocks, result


def compile_for_prompt_cache(
    branch: Branch,
    request: TurnRequest,
    *,
    tool_schemas: Sequence[Mapping[str, object]] | None = None,
    budgets: SectionBudgets | None = None,
    measure: Measure | None = None,
    react_context: Sequence[object] | None = None,
    ceiling: InputCeiling | None = None,
) -> tuple[CompiledChatRequest, SegmentedBlocks]:
    """Amendment 1 composed with the ADR-0127 layout (module contract): the amended compiled
    request (``bounds`` included; its instruction carries the durable prompt-cache record and,
    under a ceiling, the first kept turn) and the ordered system blocks (the stable segment,
    then the conversation segment) that lionagi's Anthropic adapter takes as
    ``system_blocks``. ``tool_schemas`` None reads the Branch's tool set
    (``branch.acts.schema_list``). Same errors as ``compile_chat_request``."""
    schemas = list(branch.acts.schema_list) if tool_schemas is None else list(tool_schemas)
    compiled, blocks, _ = compile_cached_amended(
        branch, request, schemas, budgets=budgets, measure=measure,
        react_context=react_context, ceiling=ceiling,
    )
    return compiled, blocks
