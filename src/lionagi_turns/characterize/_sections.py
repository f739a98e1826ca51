"""The characterization oracle's own reading of a rendered instruction's top-level sections.

A structured instruction (lionagi's ``InstructionContent.rendered``) is minimal YAML whose
top-level keys are the ``_SECTION_KEYS``; block values are indented and list items start with
``-``, so each section starts exactly at a column-0 ``<Key>:`` line. Sections are kept as raw
text so that a rewrite re-renders only the sections it changes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import yaml
from lionagi.libs.schema.minimal_yaml import minimal_yaml


def content_text(content: object) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and isinstance(content[0], dict):
        part = content[0]
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            text: str = part["text"]
            return text
    return None


def with_content_text(
    content: str | list[dict[str, object]], text: str
) -> str | list[dict[str, object]]:
    if isinstance(content, str):
        return text
    return [{**content[0], "text": text}, *content[1:]]


_SECTION_KEYS = ("Guidance", "Instruction", "Context", "Tools", "ResponseSchema", "ResponseFormat")
_SECTION_START = re.compile("^(" + "|".join(_SECTION_KEYS) + r"):(?: |$)")


def split_sections(text: str) -> list[tuple[str, str]] | None:
    """The top-level sections of a rendered instruction as ``(key, raw text)`` in order, or
    None when ``text`` is not a structured instruction. Block values are indented and list
    items start with ``-``, so a section starts exactly at a column-0 ``<Key>:`` line."""
    lines = text.split("\n")
    out: list[tuple[str, list[str]]] = []
    for line in lines:
        match = _SECTION_START.match(line)
        if match:
            out.append((match.group(1), [line]))
        elif out:
            out[-1][1].append(line)
        else:
            return None
    keys = [k for k, _ in out]
    if len(set(keys)) != len(keys):
        return None
    # Each section keeps the line break that ends it; only the last has none.
    return [
        (k, "\n".join(chunk) + ("\n" if i < len(out) - 1 else ""))
        for i, (k, chunk) in enumerate(out)
    ]


def section_value(raw: str, key: str, last: bool) -> tuple[bool, object]:
    """``(True, value)`` for one raw section, or ``(False, None)`` if it does not load. The
    last section lost its line break to lionagi's final ``strip()``; it is loaded with one."""
    try:
        loaded = yaml.safe_load(raw + "\n" if last else raw)
    except yaml.YAMLError:
        return False, None
    if not isinstance(loaded, dict) or set(loaded) != {key}:
        return False, None
    return True, loaded[key]


def render_sections(sections: Sequence[tuple[str, str | None]]) -> str:
    """Raw sections back to instruction text; a None section is left out. With none left the
    text is lionagi's rendering of an empty document."""
    kept = [raw for _, raw in sections if raw is not None]
    if not kept:
        return str(minimal_yaml({})).strip()
    # A section rendered on its own ends a keep-chomped block (``|+``) with YAML's document-end
    # marker; inside a document, where another key follows, lionagi's emitter writes none.
    inner = [raw[:-4] if raw.endswith("\n...\n") else raw for raw in kept[:-1]]
    return "".join([*inner, kept[-1]]).strip()


def section_text(key: str, value: object) -> str | None:
    """``key: value`` as lionagi renders that section, or None when lionagi leaves it out."""
    if value in (None, "", [], {}):
        return None
    rendered = str(minimal_yaml({key: value}))
    return None if rendered.strip() == "{}" else rendered


# A section rewrite gets the message's loaded sections and its source and returns the new
