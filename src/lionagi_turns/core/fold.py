"""ADR-0007 D2 §4: the fold plan — which instruction carries the fold, its parts, its encoding.

Contract:

- ``FoldParts`` are the fold's three parts as text: the system (``branch.msgs.system.rendered``),
  the D3 context section and the target's guidance (``guidance_text``); ``text`` joins the
  non-empty ones with exactly ``"\\n\\n"``. Nothing is folded (no plan) when neither a system
  nor a context section is in it: the guidance then renders as the instruction holds it.
- ``FoldPlan`` is computed once per compile by the compiler's plan pass: ``target`` is the
  index in ``Projection.turns`` of the first retained instruction, or None for the current
  instruction; ``encoding`` says how the target's rendering carries the fold, and ``rendered``
  is that rendering (the render pass uses it as it is).
- ``encode`` decides the encoding with the round-trip check the property tests assert, in
  this order, taking the first rung that passes:

  1. ``"emitter"`` — lionagi's own rendering with the fold as ``Guidance``. Always taken when
     the fold holds no context section (lionagi's bytes). With a section, taken only when the
     leading ``Guidance`` section loads back (PyYAML ``safe_load``) to exactly the fold text
     *and* holds the section's three lines byte-exact (``holds_section``).
  2. ``"literal"`` — the rendering with a placeholder guidance, the fold spliced in as a YAML
     literal block that is verified to load back to exactly the fold (``literal_block``).
  3. ``"fold-first"`` — the fold verbatim as a section of its own before the instruction's
     other sections (CR, NEL, LS/PS, BOM, DEL or C1 controls: YAML reads those as line breaks
     or refuses them in a block). Registry entry ``fold-first``.

  plain-content instructions carry the fold verbatim before their text (``"plain"``).

Lionagi's own ``|-`` block for a system ending in NEL holds the section's lines, but YAML reads
the NEL back as a line feed; rung 1's load-back check is what sends that fold to rung 3.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import yaml

from lionagi_turns.core.memo import active
from lionagi_turns.core.values import JsonObject, check_value

__all__ = (
    "Encoding",
    "FoldParts",
    "FoldPlan",
    "encode",
    "guidance_part",
    "guidance_text",
    "holds_section",
    "literal_block",
    "loads_back",
)

Encoding = Literal["emitter", "literal", "fold-first", "plain"]

_FOLD_SLOT = "LIONAGI_TURNS_FOLD_SLOT_7f3a"
_EMPTY_DOC = "{}"  # lionagi's rendering of an instruction with no visible section
_BLOCK_BREAKERS = frozenset("\r\x85\u2028\u2029\ufeff")


def guidance_text(guidance: object) -> str:
    """Guidance as text for the fold: falsy guidance (None, "", {}, [], 0) is absent, as in
    lionagi's fold; strings are kept as they are; anything else is minimal YAML."""
    if not guidance:
        return ""
    if isinstance(guidance, str):
        return guidance
    check_value(guidance, "guidance")
    return active().yaml(guidance).strip()


@dataclass(frozen=True, slots=True)
class FoldParts:
    """The fold's parts as text, each ``""`` when absent."""

    system: str
    context: str
    guidance: str

    @property
    def text(self) -> str:
        """The fold: the non-empty parts joined by exactly two newlines (ADR D2 §4)."""
        return "\n\n".join(p for p in (self.system, self.context, self.guidance) if p)

    def sections(self) -> list[tuple[str, str]]:
        """Non-empty ``(label, text)`` parts in fold order (labels system/context/guidance)."""
        parts = (("system", self.system), ("context", self.context), ("guidance", self.guidance))
        return [(label, text) for label, text in parts if text]


@dataclass(frozen=True, slots=True)
class FoldPlan:
    """Where the fold goes and how its target renders (see the module contract)."""

    target: int | None
    parts: FoldParts
    encoding: Encoding
    rendered: str | list[JsonObject]


def guidance_part(text: str) -> str:
    """The leading ``Guidance`` section of a structured rendering: its first line and every
    following line that is blank or indented (a YAML block's body). The fold must keep the
    context section there; a copy elsewhere (an instruction quoting it) does not count."""
    lines = text.split("\n")
    end = 1
    while end < len(lines) and (not lines[end] or lines[end].startswith(" ")):
        end += 1
    return "\n".join(lines[:end])


def holds_section(text: str, section: str) -> bool:
    """Whether ``section``'s lines (D3's three, and any lines a profile puts around them, such as
    Amendment 1's skip markers) stand byte-exact as consecutive whole lines of ``text``, all
    with the same indentation: none (a verbatim section) or the two spaces of a YAML block
    under a key."""
    lines = section.split("\n")
    for indent in ("", "  "):
        block = "\n".join(f"{indent}{line}" for line in lines)
        at = text.find(block)
        while at != -1:
            end = at + len(block)
            if (at == 0 or text[at - 1] == "\n") and (end == len(text) or text[end] == "\n"):
                return True
            at = text.find(block, at + 1)
    return False


def loads_back(yaml_text: str, fold: str) -> bool:
    """The round-trip check: ``yaml_text`` loads (PyYAML's safe loader) to a mapping whose
    ``Guidance`` is exactly ``fold``.

    The active memo loads it (``core.memo``: what ``SafeLoader`` loads; the fast path uses
    libyaml's loader for a text inside its proven character domain, where the readers agree).
    """
    try:
        loaded = active().safe_load(yaml_text)
    except yaml.YAMLError:
        return False
    return isinstance(loaded, dict) and loaded.get("Guidance") == fold


def encode(text_with: Callable[[str | None], str], fold: str, section: str) -> tuple[str, Encoding]:
    """The target's structured text carrying ``fold`` (``text_with(guidance)`` renders the
    instruction with that guidance) and the rung that produced it (module contract)."""
    text = text_with(fold)
    if not section:
        return text, "emitter"
    head = guidance_part(text)
    if holds_section(head, section) and loads_back(head, fold):
        return text, "emitter"
    spliced = _splice_guidance(text_with, fold)
    if spliced is not None:
        return spliced, "literal"
    rest = text_with(None)
    return (fold if rest in ("", _EMPTY_DOC) else f"{fold}\n\n{rest}"), "fold-first"


def _splice_guidance(text_with: Callable[[str | None], str], fold: str) -> str | None:
    """Render with a placeholder guidance, then put ``fold`` in as a YAML literal block; None
    when no literal block can carry ``fold``."""
    text = text_with(_FOLD_SLOT)
    head = f"Guidance: {_FOLD_SLOT}"
    block = literal_block("Guidance", fold)
    if block is None or not text.startswith(head):
        return None
    rest = text[len(head):]  # "" or "\n<next key>..."
    if rest:
        return block + rest[1:]
    return block.rstrip("\n") if block.split("\n", 1)[0].endswith("-") else block


def literal_block(key: str, value: str) -> str | None:
    """``key: |2-`` style YAML for ``value``, ending in a line break (indentation indicator
    always given, chomping from the trailing newlines), or None when ``value`` cannot be carried
    by a literal block. The block is verified to load back to exactly ``value``."""
    # YAML's own printable set: str.isprintable() also refuses characters YAML carries
    # (unassigned code points, format characters), which sent such folds to a quoted style.
    if any(ch in _BLOCK_BREAKERS for ch in value) or yaml.reader.Reader.NON_PRINTABLE.search(
        value
    ):
        return None
    body = value.rstrip("\n")
    trailing = len(value) - len(body)
    chomp = "-" if trailing == 0 else ("" if trailing == 1 else "+")
    lines = [f"  {line}" if line else "" for line in body.split("\n")]
    block = f"{key}: |2{chomp}\n" + "\n".join(lines) + "\n" * max(trailing, 1)
    try:
        loaded = yaml.safe_load(block)
    except yaml.YAMLError:
        return None
    if not isinstance(loaded, dict) or loaded.get(key) != value:
        return None
    return block
