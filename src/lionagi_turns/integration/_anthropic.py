"""ADR-0127 D5: the Anthropic projection — segment marks on lionagi's own Messages payload.

``install()`` rebinds ``AnthropicMessagesEndpoint.create_payload`` to ``create_payload`` here.
Rules:

- A request whose ``system_blocks`` is not a ``SegmentedBlocks`` (anything the prompt-cache
  profile did not compile), or an endpoint that does not place the prompt cache, goes to
  lionagi's own ``create_payload`` unchanged: the same payload, byte for byte.
- Otherwise lionagi's own ``create_payload`` builds the payload from the request (the native
  ``system`` field from the ordered blocks, the request-option filter, ``max_tokens``, the
  ``prompt_caching`` key kept out of the body), and then this projection replaces the marks
  lionagi's adapter placed with the segment marks: one-hour on the last stable block;
  five-minute on the last conversation block, when there is one; five-minute on the previous
  request's last block when it lies outside the ``LOOKBACK`` blocks the tail mark reads back
  over; five-minute on the last markable block of the last message. At most four (a mark the
  caller put on a native tool counts; the tail mark is kept before the lookback mark), one-hour
  first: the stable segment precedes every other block, and its mark is left out when a
  caller's five-minute tool mark precedes it. A message that receives a mark has its
  string content written as one text block, which the API reads as the same prompt.
- It never reads history or re-renders anything: it works on the payload and the segment sizes
  the compiler handed over (ADR-0007 D4). The caller's request is not mutated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from lionagi_turns.integration._originals import ANTHROPIC, original
from lionagi_turns.profiles.prompt_cache._blocks import SegmentedBlocks

if TYPE_CHECKING:
    from lionagi.providers.anthropic.messages import AnthropicMessagesEndpoint

__all__ = ("LOOKBACK", "SegmentedBlocks", "create_payload", "place_segment_marks")

LOOKBACK = 20
_MAX_MARKS = 4
_ONE_HOUR = MappingProxyType({"type": "ephemeral", "ttl": "1h"})
_FIVE_MINUTES = MappingProxyType({"type": "ephemeral"})
_UNMARKABLE = frozenset({"thinking", "redacted_thinking"})


def _lionagi_create_payload() -> Callable[..., Any]:
    """lionagi's own ``create_payload``, also while ``install()`` has replaced it."""
    return original(ANTHROPIC, "create_payload")


def create_payload(
    self: AnthropicMessagesEndpoint,
    request: object,
    extra_headers: dict[str, str] | None = None,
    **kwargs: Any,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``AnthropicMessagesEndpoint.create_payload`` with the segment marks (module rules)."""
    original = _lionagi_create_payload()
    blocks = kwargs.get("system_blocks")
    if blocks is None and isinstance(request, Mapping):
        blocks = request.get("system_blocks")
    if not isinstance(blocks, SegmentedBlocks) or not getattr(self, "places_prompt_cache", False):
        result: tuple[dict[str, Any], dict[str, Any]] = original(
            self, request, extra_headers, **kwargs
        )
        return result
    payload, headers = original(self, request, extra_headers, **kwargs)
    place_segment_marks(payload, blocks.stable_count, blocks.previous_end)
    return payload, headers


def _strip(block: object) -> object:
    if isinstance(block, dict) and "cache_control" in block:
        return {k: v for k, v in block.items() if k != "cache_control"}
    return block


def _markable(block: object) -> bool:
    if not isinstance(block, dict) or block.get("type") in _UNMARKABLE:
        return False
    return not (block.get("type") == "text" and not str(block.get("text") or "").strip())


def place_segment_marks(
    payload: dict[str, object], stable_count: int, previous_end: int | None
) -> None:
    """Replace the payload's system and message marks with the segment marks (module rules)."""
    marks = _Marks.of(payload)
    if stable_count and not marks.short_before:
        marks.mark_system(min(stable_count, len(marks.system)) - 1, _ONE_HOUR)
    if len(marks.system) > stable_count:
        marks.mark_system(len(marks.system) - 1, _FIVE_MINUTES)
    messages = marks.messages
    if messages:
        tail = len(messages) - 1
        if previous_end is not None and 0 <= previous_end < tail:
            added = sum(_block_count(m) for m in messages[previous_end + 1 :])
            if added >= LOOKBACK and marks.budget >= 2:  # the tail mark comes first
                marks.mark_message(previous_end)
        marks.mark_message(tail)
    if marks.system:
        payload["system"] = marks.system
    payload["messages"] = messages


class _Marks:
    """The payload's system blocks and messages with every mark stripped, and how many marks
    may still be placed (``_MAX_MARKS`` less the caller's native tool marks)."""

    def __init__(
        self, system: list[object], messages: list[dict[str, Any]], tool_marks: list[object]
    ) -> None:
        self.system = system
        self.messages = messages
        self.budget = _MAX_MARKS - len(tool_marks)
        # The API reads a one-hour mark only before every five-minute mark (lionagi's rule too).
        self.short_before = any(not isinstance(m, dict) or m.get("ttl") != "1h" for m in tool_marks)

    @classmethod
    def of(cls, payload: Mapping[str, Any]) -> _Marks:
        system = [_strip(b) for b in payload.get("system") or ()]
        messages = [dict(m) for m in payload.get("messages") or ()]
        for m in messages:
            if isinstance(m.get("content"), list):
                m["content"] = [_strip(b) for b in m["content"]]
        tool_marks = [
            t["cache_control"]
            for t in payload.get("tools") or ()
            if isinstance(t, dict) and t.get("cache_control")
        ]
        return cls(system, messages, tool_marks)

    def mark_system(self, index: int, control: Mapping[str, str]) -> None:
        block = self.system[index] if 0 <= index < len(self.system) else None
        if isinstance(block, dict) and self.budget > 0 and _markable(block):
            self.system[index] = {**block, "cache_control": dict(control)}
            self.budget -= 1

    def _last_markable(self, i: int) -> int | None:
        content = self.messages[i].get("content")
        if isinstance(content, str):
            return 0 if content.strip() else None
        if isinstance(content, list):
            for j in range(len(content) - 1, -1, -1):
                if _markable(content[j]):
                    return j
        return None

    def mark_message(self, i: int) -> None:
        j = self._last_markable(i)
        if j is None or self.budget <= 0:
            return
        content = self.messages[i]["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        content = list(content)
        content[j] = {**content[j], "cache_control": dict(_FIVE_MINUTES)}
        self.messages[i] = {**self.messages[i], "content": content}
        self.budget -= 1


def _block_count(message: Mapping[str, object]) -> int:
    content = message.get("content")
    return len(content) if isinstance(content, list) else 1
