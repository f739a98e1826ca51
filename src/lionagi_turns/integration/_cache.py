"""ADR-0127 at the call surface: the prompt-cache profile's compile and what the adapter gets.

``compile_for_prompt_cache(branch, request)`` compiles with ``prompt_cache._compile.compile_cached``
over the Branch's tool set (``branch.acts.schema_list``, the conversation's tools, D2) and
returns the compiled request (its instruction carrying the durable ``SentRecord``) and the
``system_blocks`` value for lionagi's Anthropic adapter: a ``SegmentedBlocks`` list, which the
Anthropic projection (``_anthropic``) marks by segment and lionagi's own adapter reads as its
ordered stable blocks.

``prompt_cache_view(branch, request)`` is the same compile shown for a person (the CLI's
``compile --profile prompt-cache``): the three segments, the payload's ``system`` and
``messages`` with the marks the Anthropic projection places, one line per mark naming its
segment and lifetime, what changed against the previous recorded request, and every
prompt-cache record the compile did not use (``ignored_records``: position, id, reason; see
``prompt_cache._compile.compile_cached``'s ``audit``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lionagi_turns.core.contracts import CompiledChatRequest, TurnRequest
from lionagi_turns.core.providers import to_provider_messages
from lionagi_turns.core.values import JsonObject
from lionagi_turns.integration._anthropic import SegmentedBlocks, place_segment_marks
from lionagi_turns.profiles.prompt_cache._compile import CachedCompile, PromptCache, laid_out

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

    from lionagi_turns.core.stage import Stage
    from lionagi_turns.core.trace import Trace

__all__ = (
    "cache_view",
    "compile_for_prompt_cache",
    "compile_for_prompt_cache_traced",
    "prompt_cache_traced",
    "prompt_cache_view",
    "segmented_blocks",
)


def compile_for_prompt_cache(
    branch: Branch,
    request: TurnRequest,
    react_context: Sequence[object] | None = None,
    before: Sequence[Stage] = (),
) -> tuple[CompiledChatRequest, SegmentedBlocks]:
    """The compiled request and its ordered system blocks (module contract); ``react_context``
    is lionagi's ``_react_context`` of a running ReAct turn (the compiler's ReAct step)."""
    compiled, blocks, _ = compile_for_prompt_cache_traced(branch, request, react_context, before)
    return compiled, blocks


def compile_for_prompt_cache_traced(
    branch: Branch,
    request: TurnRequest,
    react_context: Sequence[object] | None = None,
    before: Sequence[Stage] = (),
) -> tuple[CompiledChatRequest, SegmentedBlocks, Trace]:
    """``compile_for_prompt_cache`` and the compile's trace (its fold plan)."""
    schemas = list(branch.acts.schema_list)
    stage = PromptCache(tool_schemas=schemas)
    result = laid_out(branch, request, (*before, stage), react_context=react_context)
    return result.compiled, segmented_blocks(result), result.trace


def segmented_blocks(result: CachedCompile) -> SegmentedBlocks:
    """The adapter's ``system_blocks`` of a prompt-cache compile."""
    layout = result.layout
    return SegmentedBlocks(list(layout.stable), list(layout.conversation), layout.previous_end)


def prompt_cache_view(
    branch: Branch, request: TurnRequest, tool_schemas: list[JsonObject] | None = None
) -> dict[str, Any]:
    """The prompt-cache compile of ``request`` as plain data (module contract).

    ``tool_schemas`` None takes the stable segment as last recorded on the branch (a saved
    branch holds no tool functions). Raises what the compiler raises.
    """
    return prompt_cache_traced(branch, request, tool_schemas)[0]


def prompt_cache_traced(
    branch: Branch,
    request: TurnRequest,
    tool_schemas: list[JsonObject] | None = None,
    before: Sequence[Stage] = (),
) -> tuple[dict[str, Any], CachedCompile]:
    """``prompt_cache_view`` and the compile it shows (its trace holds the fold plan);
    ``before``: the stages the layout lays out."""
    audited = PromptCache(tool_schemas=tool_schemas, audit=True)
    result = laid_out(branch, request, (*before, audited))
    return cache_view(result), result


def cache_view(result: CachedCompile) -> dict[str, Any]:
    """A prompt-cache compile ``result`` shown as ``prompt_cache_view`` shows it: the payload's
    ``system`` and ``messages`` with the Anthropic projection's marks, the segments, one line
    per mark, the changes and the ignored records (module docstring)."""
    layout = result.layout
    payload: dict[str, Any] = {
        "system": [{"type": "text", "text": t} for t in layout.system_blocks],
        "messages": to_provider_messages(result.compiled),
    }
    place_segment_marks(payload, len(layout.stable), layout.previous_end)
    marks = []
    for i, block in enumerate(payload["system"]):
        if "cache_control" in block:
            segment = "stable" if i < len(layout.stable) else "conversation"
            marks.append({"at": f"system[{i}]", "segment": segment,
                          "ttl": block["cache_control"].get("ttl", "5m")})
    last = len(payload["messages"]) - 1
    for i, message in enumerate(payload["messages"]):
        content = message["content"]
        for j, block in enumerate(content if isinstance(content, list) else ()):
            if isinstance(block, dict) and "cache_control" in block:
                marks.append({"at": f"messages[{i}].content[{j}]",
                              "segment": "turn" if i == last else "turn (lookback)",
                              "ttl": block["cache_control"].get("ttl", "5m")})
    changes = layout.changes
    view = {
        "segments": {
            "stable": {"blocks": len(layout.stable),
                       "chars": sum(len(t) for t in layout.stable)},
            "conversation": {"blocks": len(layout.conversation),
                             "chars": sum(len(t) for t in layout.conversation)},
            "turn": {"messages": len(payload["messages"]),
                     "previous_request_end": layout.previous_end},
        },
        "marks": marks,
        "changes": {"stable": changes.stable, "conversation": changes.conversation,
                    "history_rewrite": changes.rewrite},
        "ignored_records": [
            {"position": i.position, "id": i.id, "reason": i.reason} for i in result.ignored
        ],
        "system": payload["system"],
        "messages": payload["messages"],
    }
    return view
