"""ADR-0007 D3: the canonical source-attributed JSON context section.

``encode_context_section`` is the only producer of the section; ``decode_context_section`` is
its strict inverse, for tests and the CLI. The section is exactly three lines::

    LIONAGI_CONTEXT_BLOCKS_JSON
    [{"content":"...","provider_name":"..."}, ...]
    END_LIONAGI_CONTEXT_BLOCKS_JSON

The middle line is ``lionagi.ln.json_dumps(payload, sort_keys=True)``: compact, keys sorted,
quotes, newlines and control characters escaped, so a block's content can never add a line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from lionagi.ln import json_dumps

from lionagi_turns.core.contracts import ContextBlock

__all__ = (
    "BEGIN_MARKER",
    "END_MARKER",
    "decode_context_section",
    "encode_context_section",
    "find_context_section",
    "locate_sections",
)

BEGIN_MARKER = "LIONAGI_CONTEXT_BLOCKS_JSON"
END_MARKER = "END_LIONAGI_CONTEXT_BLOCKS_JSON"


def encode_context_section(blocks: Sequence[ContextBlock]) -> str:
    """The section for ``blocks`` in their given order; ``""`` when there are none.

    Raises ValueError naming the position of a block whose provider_name or content is empty.
    """
    if not blocks:
        return ""
    for i, block in enumerate(blocks):
        if not block.provider_name or not block.content:
            empty = "provider_name" if not block.provider_name else "content"
            raise ValueError(
                f"context_blocks[{i}] has an empty {empty} "
                f"(provider {block.provider_name!r}); omit empty provider results"
            )
    payload = [{"provider_name": b.provider_name, "content": b.content} for b in blocks]
    encoded = json_dumps(payload, sort_keys=True)
    if "\n" in encoded or "\r" in encoded:  # pragma: no cover - json_dumps escapes both
        raise AssertionError("encoded context blocks must be one line")
    return f"{BEGIN_MARKER}\n{encoded}\n{END_MARKER}"


def decode_context_section(section: str) -> tuple[ContextBlock, ...]:
    """The blocks a section produced by ``encode_context_section`` holds.

    Raises ValueError when ``section`` is not exactly one such section: wrong markers, not
    three lines, JSON that is not a list of objects with exactly ``content`` and
    ``provider_name`` strings, or JSON not in canonical (sorted, compact) form.
    """
    lines = section.split("\n")
    if len(lines) != 3 or lines[0] != BEGIN_MARKER or lines[2] != END_MARKER:
        raise ValueError(
            f"not a context section: expected 3 lines {BEGIN_MARKER!r}, <json>, "
            f"{END_MARKER!r}; got {len(lines)} line(s) starting {lines[0][:40]!r}"
        )
    try:
        payload = json.loads(lines[1])
    except json.JSONDecodeError as exc:
        raise ValueError(f"context section JSON does not parse: {exc}") from exc
    if not isinstance(payload, list):
        raise ValueError("context section JSON must be a list of blocks")
    blocks = []
    for i, item in enumerate(payload):
        if not isinstance(item, dict) or set(item) != {"content", "provider_name"}:
            raise ValueError(
                f"context block [{i}] must be an object with exactly 'content' and "
                "'provider_name'"
            )
        if not all(isinstance(v, str) for v in item.values()):
            raise ValueError(f"context block [{i}] fields must be strings")
        blocks.append(ContextBlock(provider_name=item["provider_name"], content=item["content"]))
    if encode_context_section(blocks) != section:
        raise ValueError("context section is not in canonical form (sorted keys, compact JSON)")
    return tuple(blocks)


def locate_sections(text: str) -> Iterator[tuple[int, str, str]]:
    """Every section embedded in ``text`` as ``(line index of its first line, indentation,
    section)``: three whole lines, the marker lines and the JSON line all carrying the same
    indentation of spaces (none, or a YAML block's). The one search for embedded sections."""
    lines = text.split("\n")
    for i, line in enumerate(lines[:-2]):
        stripped = line.lstrip(" ")
        if stripped != BEGIN_MARKER:
            continue
        indent = line[: len(line) - len(stripped)]
        middle = lines[i + 1]
        if lines[i + 2] == indent + END_MARKER and middle.startswith(indent):
            yield i, indent, f"{BEGIN_MARKER}\n{middle[len(indent):]}\n{END_MARKER}"


def find_context_section(text: str) -> str | None:
    """The first section embedded in ``text`` (its lines may carry a common indentation)."""
    return next((section for _, _, section in locate_sections(text)), None)
