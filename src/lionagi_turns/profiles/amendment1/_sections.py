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
  JSON array (``canonical_json``: every value lionagi's YAML sends, integers beyond 64 bits,
  NaN/infinity, keys that are not text and bytes included, encoded deterministically),
  ``END_LIONAGI_TOOL_RESULTS_JSON``.
- ``append_part(content, text)`` / ``prepend_part(content, text)``: put a section text after
  (before) rendered content, separated by exactly two newlines; list (multimodal) content gets
  a trailing text part (the text joins the leading text part).
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from operator import attrgetter, itemgetter

from lionagi.ln import json_dumps

from lionagi_turns.core.envelope import BEGIN_MARKER, END_MARKER
from lionagi_turns.core.render import Content
from lionagi_turns.core.values import MAX_DEPTH
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


def result_entry(result: Mapping[str, object]) -> str:
    """One action result as the canonical JSON the tool_results section renders it in."""
    return canonical_json(result)


def canonical_json(value: object) -> str:
    """``value`` as compact JSON with sorted keys: ``lionagi.ln.json_dumps(value,
    sort_keys=True)`` whenever that encodes it exactly, else the same text built item by item
    (``_encode``) for the values lionagi's YAML sends that orjson cannot, each a deterministic
    function of the value:

    - an integer beyond 64 bits: its exact digits;
    - a NaN or infinite float: ``NaN``, ``Infinity``, ``-Infinity`` (the tokens Python's
      ``json`` writes with ``allow_nan``; the section is prompt text for the model, never
      parsed back by this package, and Python's ``json.loads`` reads these tokens);
    - a dict key that is not text: converted as Python's ``json`` converts keys (``1`` ->
      ``"1"``, ``1.5`` -> ``"1.5"``, ``True`` -> ``"true"``, ``None`` -> ``"null"``, a NaN ->
      ``"NaN"``), any other key to its own canonical JSON text (``(1, 2)`` -> ``"[1,2]"``);
      keys are sorted on the converted text, so mixed key types never fail to sort. A dict
      in which two keys convert to the same text (``1`` and ``"1"``) is written as a JSON
      array of ``[key, value]`` pairs instead, each key in its own JSON form (``[["1","b"],
      [1,"a"]]``), sorted on the keys' JSON text, so no value is dropped and the keys stay
      distinguishable;
    - ``bytes``: a JSON string of their standard base64 encoding (with padding), the same
      base64 text lionagi's YAML sends under its ``!!binary`` tag.

    Any other value orjson refuses raises what ``json_dumps`` raised."""
    try:
        return json_dumps(value, sort_keys=True, check_non_finite=True)
    except (TypeError, ValueError) as exc:
        try:
            return _encode(value, 0)
        except (_Unencodable, TypeError, ValueError):
            raise exc from None  # lionagi's own refusal of the value


class _Unencodable(Exception):
    """The item-by-item encoder met a value nested too deep (a cycle included)."""


def _encode(value: object, depth: int) -> str:
    kind = type(value)
    if kind is float:
        return _FLOAT_TOKENS.get(str(value)) or json_dumps(value)
    if kind is int:  # orjson's digits, and the exact digits beyond its 64 bits
        return int.__repr__(value)
    if type(value) is bytes:
        return json_dumps(base64.b64encode(value).decode("ascii"))
    if kind in _SCALARS:
        return json_dumps(value)
    if depth > MAX_DEPTH:
        raise _Unencodable
    if isinstance(value, dict):
        return _encode_dict(value, depth + 1)
    if isinstance(value, list | tuple):
        return "[" + ",".join(_encode(item, depth + 1) for item in value) + "]"
    return json_dumps(value, sort_keys=True)  # lionagi's conversions, or its refusal


def _encode_dict(value: dict[object, object], depth: int) -> str:
    pairs = sorted(((_key_text(key, depth), key, item) for key, item in value.items()),
                   key=_FIRST)
    if len({text for text, _, _ in pairs}) == len(pairs):
        return "{" + ",".join(
            f"{json_dumps(text)}:{_encode(item, depth)}" for text, _, item in pairs
        ) + "}"
    encoded = sorted(((_encode(key, depth), item) for key, item in value.items()), key=_FIRST)
    return "[" + ",".join(f"[{key},{_encode(item, depth)}]" for key, item in encoded) + "]"


def _key_text(key: object, depth: int) -> str:
    """A dict key as Python's ``json`` converts it; a key it refuses as its own JSON text."""
    kind = type(key)
    if kind is str:
        return str(key)
    if kind is bool or key is None:
        return "true" if key is True else "false" if key is False else "null"
    if kind is float:
        return _FLOAT_TOKENS.get(str(key)) or float.__repr__(key)
    if kind is int:
        return int.__repr__(key)
    return _encode(key, depth)


_FLOAT_TOKENS = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
_SCALARS = frozenset({str, bool, type(None)})
_FIRST = itemgetter(0)


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


def tool_results_block(results: Sequence[Mapping[str, object]]) -> str:
    """One tool_results entry as its block; ``""`` for an empty entry."""
    if not results:
        return ""
    return f"{TOOL_RESULTS_BEGIN}\n{canonical_json(list(results))}\n{TOOL_RESULTS_END}"


def append_part(content: Content, text: str) -> Content:
    """``content`` followed by ``text`` (two newlines between; a trailing text part for list
    content; ``text`` alone when ``content`` rendered empty)."""
    if not text:
        return content
    if isinstance(content, list):
        return [*content, {"type": "text", "text": text}]
    return f"{content}\n\n{text}" if content else text


def prepend_part(content: Content, text: str) -> Content:
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
