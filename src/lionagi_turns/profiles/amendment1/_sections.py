"""Amendment 1's section texts: the D7 marker, D3's envelope with D8's ``authority`` key, and
D2 §5's ``tool_results`` block.

- ``marker(section, n, reason)`` is exactly
  ``[LIONAGI_SECTION_TRUNCATED section=<section> left_out=<n> reason=<reason>]``.
- ``marker_lines(section, left_out)``: one marker per reason present, in ``LEFT_OUT_REASONS``
  order, each counting that reason's entries, joined by ``"\\n"`` (one line each).
- ``encode_context_section(blocks)``: D3's three lines with ``authority`` in every entry;
  ``lionagi.ln.json_dumps(..., sort_keys=True)`` as in the default profile.
- ``context_section(blocks, left_out)``: the skipped-block markers, each on its own line
  directly above the envelope's opening line; markers alone when no block was kept.
- ``tool_results_block(results)``: ``LIONAGI_TOOL_RESULTS_JSON``, the results as one canonical
  JSON array (``canonical_json``: integers beyond 64 bits keep their exact digits),
  ``END_LIONAGI_TOOL_RESULTS_JSON``.
- ``append_part(content, text)`` / ``prepend_part(content, text)``: put a section text after
  (before) rendered content, separated by exactly two newlines; list (multimodal) content gets
  a trailing text part (the text joins the leading text part).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from operator import attrgetter
from typing import Any

from lionagi.ln import json_dumps

from lionagi_turns.core.envelope import BEGIN_MARKER, END_MARKER
from lionagi_turns.profiles.amendment1._contracts import LEFT_OUT_REASONS, ContextBlock, LeftOut

__all__ = (
    "TOOL_RESULTS_BEGIN",
    "TOOL_RESULTS_END",
    "append_part",
    "block_entry",
    "canonical_json",
    "context_section",
    "decode_context_section",
    "encode_context_section",
    "marker",
    "marker_lines",
    "prepend_part",
    "result_entry",
    "tool_results_block",
)

_REASON = attrgetter("reason")
TOOL_RESULTS_BEGIN = "LIONAGI_TOOL_RESULTS_JSON"
TOOL_RESULTS_END = "END_LIONAGI_TOOL_RESULTS_JSON"
_BIG_INT = "Integer exceeds 64-bit range"  # orjson's refusal, raised through json_dumps


def marker(section: str, left_out: int, reason: str) -> str:
    """D7's truncate marker (one line)."""
    return f"[LIONAGI_SECTION_TRUNCATED section={section} left_out={left_out} reason={reason}]"


def marker_lines(section: str, left_out: Sequence[LeftOut]) -> str:
    """One marker per reason present, in vocabulary order; ``""`` when nothing was left out."""
    counts = Counter(map(_REASON, left_out))
    return "\n".join(
        marker(section, counts[reason], reason) for reason in LEFT_OUT_REASONS if counts[reason]
    )


def block_entry(block: ContextBlock) -> dict[str, str]:
    """A block's canonical JSON entry (D3 amended by D8)."""
    return {
        "provider_name": block.provider_name,
        "content": block.content,
        "authority": block.authority.value,
    }


def result_entry(result: dict[str, Any]) -> str:
    """One action result as the canonical JSON the tool_results section renders it in."""
    return canonical_json(result)


def canonical_json(value: Any) -> str:
    """``lionagi.ln.json_dumps(value, sort_keys=True)``; for a value holding an integer
    beyond 64 bits, which it cannot encode, the standard library's compact sorted JSON of the
    same value (the integer's exact digits; lionagi's conversions for other types), so every
    integer the default profile sends is sent here too. The compiler's value guard has
    refused what JSON cannot carry before this runs (``_values.check_value(json_data=True)``)."""
    try:
        return json_dumps(value, sort_keys=True)
    except TypeError as exc:
        if str(exc) != _BIG_INT:
            raise
    return json.dumps(
        value,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
        default=_lionagi_json,
    )


def _lionagi_json(value: Any) -> Any:
    return json_dumps(value, as_loaded=True)


def encode_context_section(blocks: Sequence[ContextBlock]) -> str:
    """The three-line envelope for ``blocks``, ``""`` for none."""
    if not blocks:
        return ""
    encoded = json_dumps([block_entry(b) for b in blocks], sort_keys=True)
    return f"{BEGIN_MARKER}\n{encoded}\n{END_MARKER}"


def context_section(blocks: Sequence[ContextBlock], left_out: Sequence[LeftOut]) -> str:
    """The context section as the fold carries it: skip markers, then the envelope."""
    return "\n".join(p for p in (marker_lines("context", left_out), encode_context_section(blocks))
                     if p)


def decode_context_section(section: str) -> tuple[ContextBlock, ...]:
    """The blocks of an envelope made by ``encode_context_section`` (strict: exactly three
    lines, entries with exactly ``authority``/``content``/``provider_name``, canonical JSON,
    every authority ``"material"``)."""
    lines = section.split("\n")
    if len(lines) != 3 or lines[0] != BEGIN_MARKER or lines[2] != END_MARKER:
        raise ValueError(
            f"not a context section: expected 3 lines {BEGIN_MARKER!r}, <json>, {END_MARKER!r}"
        )
    payload = json.loads(lines[1])
    if not isinstance(payload, list):
        raise ValueError("context section JSON must be a list of blocks")
    blocks = []
    for i, item in enumerate(payload):
        if not isinstance(item, dict) or set(item) != {"authority", "content", "provider_name"}:
            raise ValueError(
                f"context block [{i}] must hold exactly authority, content and provider_name"
            )
        if item["authority"] != "material":
            raise ValueError(f"context block [{i}] has authority {item['authority']!r}")
        blocks.append(ContextBlock(item["provider_name"], item["content"]))
    if encode_context_section(blocks) != section:
        raise ValueError("context section is not in canonical form (sorted keys, compact JSON)")
    return tuple(blocks)


def tool_results_block(results: Sequence[dict[str, Any]]) -> str:
    """One tool_results entry as its block; ``""`` for an empty entry."""
    if not results:
        return ""
    return f"{TOOL_RESULTS_BEGIN}\n{canonical_json(list(results))}\n{TOOL_RESULTS_END}"


def append_part(content: Any, text: str) -> Any:
    """``content`` followed by ``text`` (two newlines between; a trailing text part for list
    content; ``text`` alone when ``content`` rendered empty)."""
    if not text:
        return content
    if isinstance(content, list):
        return [*content, {"type": "text", "text": text}]
    return f"{content}\n\n{text}" if content else text


def prepend_part(content: Any, text: str) -> Any:
    """``text`` followed by ``content`` (two newlines between; joined to the leading text part
    of list content)."""
    if not text:
        return content
    if isinstance(content, list):
        first, *rest = content
        joined = dict(first)
        joined["text"] = f"{text}\n\n{first['text']}" if first.get("text") else text
        return [joined, *rest]
    return f"{text}\n\n{content}" if content else text
