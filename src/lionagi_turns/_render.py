"""Instruction and assistant rendering for the compiler (ADR-0007 D2 step 5).

Guarantees:

- Instructions render as lionagi's own structured renderer
  (``InstructionContent._format_text_content``) renders a fresh ``InstructionContent`` built for
  this call, byte for byte (``_fastyaml`` may emit the YAML with libyaml; see its domain rules);
  no stored content object is touched.
- A historical view renders durable sections only; the current view adds the call's Tools,
  ResponseSchema and ResponseFormat sections from the ``TurnRequest``.
- Images render as one text part followed by ``image_url`` parts, shaped as lionagi shapes them,
  without network access (rules in ``_parts``; the SSRF host check runs in
  ``_providers.check_image_hosts``); ``image_detail`` is checked for every instruction.
- Every value rendered passes ``_values.check_value`` first (cycles, depth, types YAML cannot
  represent, sets), and results fold with ``_values.merge_results``.
- A folded guidance section keeps the D3 context section byte-exact on three lines of its own
  (a common indentation allowed). When lionagi's YAML emitter would not (it quotes text with
  trailing spaces or tabs), the fold is written as an equivalent YAML literal block that loads
  back to the same text; when no literal block can carry it (CR, NEL, LS/PS, DEL, C1 controls),
  the fold stands verbatim as a section of its own before the YAML sections.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import yaml
from lionagi.protocols.messages.instruction import InstructionContent

from ._fast.yaml import instruction_text, minimal_yaml
from ._parts import check_image_detail, image_part
from ._values import check_value, merge_results

__all__ = (
    "guidance_text",
    "holds_section",
    "merge_results",
    "render_instruction",
)

_FOLD_SLOT = "LIONAGI_TURNS_FOLD_SLOT_7f3a"


def guidance_text(guidance: Any) -> str:
    """Guidance as text for the fold: falsy guidance (None, "", {}, [], 0) is absent, as in
    lionagi's fold; strings are kept as they are; anything else is minimal YAML."""
    if not guidance:
        return ""
    if isinstance(guidance, str):
        return guidance
    check_value(guidance, "guidance")
    return minimal_yaml(guidance).strip()


def render_instruction(
    source: InstructionContent,
    *,
    results: Sequence[dict[str, Any]] = (),
    fold: str = "",
    section: str = "",
    tool_schemas: Sequence[dict[str, Any]] = (),
    response_format: Any = None,
    structure: Any = None,
) -> str | list[dict[str, Any]]:
    """Render one instruction as the provider sees it.

    ``source`` supplies only its durable fields. ``results`` are action-result dictionaries
    folded into its context; ``fold`` is the system/context/guidance prefix (already joined)
    when this instruction is the fold target, else ``""``; ``section`` is the D3 context section
    inside ``fold`` (``""`` when there are no blocks). The call options are given only for the
    current instruction.
    """
    check_image_detail(source.image_detail)
    _check_values(source, results, tool_schemas, response_format)
    context = merge_results(source.prompt_context, results) if results else source.prompt_context
    if source.plain_content:
        text = _plain_text(source, context, fold)
    else:
        def text_with(guidance: Any) -> str:
            return instruction_text(
                _content(source, guidance, context, tool_schemas, response_format, structure)
            )

        text = text_with(fold if fold else source.guidance)
        if section and not holds_section(_guidance_part(text), section):
            text = _splice_guidance(text_with, fold) or _fold_first(text_with, fold)
    if not source.images:
        return text
    detail = source.image_detail
    return [{"type": "text", "text": text}, *(image_part(url, detail) for url in source.images)]


def _check_values(
    source: InstructionContent,
    results: Sequence[dict[str, Any]],
    tool_schemas: Sequence[dict[str, Any]],
    response_format: Any,
) -> None:
    """Every value the renderer reads passes ``_values.check_value`` (named by field); text
    fields are text and ``images`` a list."""
    value = source.plain_content
    if value is not None and not isinstance(value, str):
        raise TypeError(f"plain_content is of type {type(value).__name__}; give text or None")
    if not isinstance(source.images, list):
        raise TypeError(
            f"images is of type {type(source.images).__name__}; give a list of image strings"
        )
    for name in ("instruction", "guidance"):
        value = getattr(source, name)
        if not isinstance(value, str):
            check_value(value, name)
    check_value(source.prompt_context, "prompt_context")
    for index, result in enumerate(results):
        check_value(result, f"folded action result {index}")
    if tool_schemas:
        check_value(list(tool_schemas), "TurnRequest.tool_schemas")
    if isinstance(response_format, dict):
        check_value(response_format, "TurnRequest.response_format")


def _content(
    source: InstructionContent,
    guidance: Any,
    context: Sequence[Any],
    tool_schemas: Sequence[dict[str, Any]],
    response_format: Any,
    structure: Any,
) -> InstructionContent:
    return InstructionContent(
        instruction=source.instruction,
        guidance=guidance,
        prompt_context=list(context),
        tool_schemas=list(tool_schemas),
        response_format=response_format,
        structure=structure,
    )


def _plain_text(source: InstructionContent, context: Sequence[Any], fold: str) -> str:
    """plain_content replaces the structured rendering, but never swallows the fold or folded
    results (design §4 item 11): they stand as blank-line separated sections around it."""
    added = list(context[len(source.prompt_context):])
    sections = [fold, source.plain_content or ""]
    if added:
        sections.append(minimal_yaml({"Context": added}).strip())
    return "\n\n".join(s for s in sections if s)


def _guidance_part(text: str) -> str:
    """The leading ``Guidance`` section of a structured rendering: its first line and every
    following line that is blank or indented (a YAML block's body). The fold must keep the
    context section there; a copy elsewhere (an instruction quoting it) does not count."""
    lines = text.split("\n")
    end = 1
    while end < len(lines) and (not lines[end] or lines[end].startswith(" ")):
        end += 1
    return "\n".join(lines[:end])


def holds_section(text: str, section: str) -> bool:
    """Whether ``section``'s lines stand byte-exact as whole lines of ``text``, all with the same
    indentation: none (a verbatim section) or the two spaces of a YAML block under a key."""
    padded = f"\n{text}\n"
    for indent in ("", "  "):
        lines = "\n".join(indent + line for line in section.split("\n"))
        if f"\n{lines}\n" in padded:
            return True
    return False


def _splice_guidance(text_with: Callable[[Any], str], fold: str) -> str | None:
    """Render (``text_with(guidance)``) with a placeholder guidance, then put ``fold`` in as a
    YAML literal block.

    Used only when lionagi's emitter would not keep the context section intact (it quotes
    text with trailing spaces or tabs). None when no literal block can carry ``fold`` (the
    block must load back to exactly ``fold``).
    """
    text = text_with(_FOLD_SLOT)
    head = f"Guidance: {_FOLD_SLOT}"
    block = literal_block("Guidance", fold)
    if block is None or not text.startswith(head):
        return None
    rest = text[len(head):]  # "" or "\n<next key>..."
    if rest:
        return block + rest[1:]
    return block.rstrip("\n") if block.split("\n", 1)[0].endswith("-") else block


def _fold_first(text_with: Callable[[Any], str], fold: str) -> str:
    """``fold``, verbatim, as a section of its own before the instruction's other sections.

    The last resort when YAML can carry ``fold`` neither as the emitter writes it nor as a
    literal block (CR, NEL, LS/PS, DEL or C1 controls in the system text or a block's
    content): the context section then still reaches the provider byte-exact on its own
    three lines, as plain_content instructions show it.
    """
    rest = text_with(None)
    return fold if rest in ("", _EMPTY_DOC) else f"{fold}\n\n{rest}"


_EMPTY_DOC = "{}"  # lionagi's rendering of an instruction with no visible section


_BLOCK_BREAKERS = frozenset("\r\x85\u2028\u2029\ufeff")


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
