"""Instruction rendering for the compiler (ADR-0007 D2 §5).

Guarantees:

- Instructions render as lionagi's own structured renderer
  (``InstructionContent._format_text_content``) renders a fresh ``InstructionContent`` built for
  this call, byte for byte (the active memo may emit the YAML with libyaml; see ``memo.yaml``'s
  domain rules); no stored content object is touched.
- A historical view renders durable sections only (``CallOptions()``); the current view adds
  the call's Tools, ResponseSchema and ResponseFormat sections from its ``CallOptions``.
  ``ShownSections`` gives those sections as the values a rendering writes under them (what a
  recorded text loads back to): the instruction then renders exactly as with call options whose
  sections display those values (lionagi's section document: Guidance, Instruction, Context,
  Tools, ResponseSchema, ResponseFormat, empty ones left out, ``minimal_yaml``, stripped).
- ``context`` replaces the source's prompt context for this rendering only (a compiler step
  such as ReAct's de-dup); action ``results`` are merged after it (ADR D2 §2), or, with
  ``results_section``, rendered by it after the content instead (a profile option).
- A fold target carries the fold as ``core.fold.encode`` decides (its round-trip check keeps the
  D3 section byte-exact on three lines of its own); plain-content instructions carry it
  verbatim before their text.
- Images render as one text part followed by ``image_url`` parts, shaped as lionagi shapes them,
  without network access (rules in ``core.parts``; the SSRF host check runs in
  ``core.providers.check_image_hosts``); ``image_detail`` is checked for every instruction.
- Every value rendered passes ``core.values.check_value`` first (cycles, depth, types YAML cannot
  represent, sets, lone surrogates; text fields ``check_text``), action results included (the
  same rules on every profile: what lionagi renders is sent everywhere), and results fold with
  ``core.merge.merge_results``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from lionagi.protocols.messages.instruction import InstructionContent
from pydantic import BaseModel

from lionagi_turns.core.fold import Encoding, encode, guidance_text, holds_section
from lionagi_turns.core.memo import active, section_doc
from lionagi_turns.core.merge import merge_results
from lionagi_turns.core.parts import check_image_detail, image_part
from lionagi_turns.core.values import JsonObject, check_text, check_value

# guidance_text, holds_section and merge_results are re-exported beside the renderer that uses
# them.
__all__ = (
    "CallOptions",
    "Content",
    "ShownSections",
    "guidance_text",
    "holds_section",
    "merge_results",
    "own_copy",
    "render_instruction",
    "render_view",
)

Result = dict[str, object]  # one folded action result
Part = JsonObject  # one part of a multimodal rendering
Content = str | list[Part]
ResultsSection = Callable[[Sequence[Result], Sequence[object]], str]


@dataclass(frozen=True, slots=True)
class CallOptions:
    """The call options an instruction renders with; empty for a historical view (D1).
    ``tool_schemas`` holds tool schemas, or a registered tool's name where a profile shows
    tools by reference (ADR-0127 D2)."""

    tool_schemas: Sequence[JsonObject | str] = ()
    response_format: type[BaseModel] | JsonObject | BaseModel | None = None
    structure: type | str | None = None


HISTORICAL = CallOptions()


@dataclass(frozen=True, slots=True)
class ShownSections:
    """Response sections as a current instruction's rendering writes them: ``sections`` maps
    ``Tools``, ``ResponseSchema`` and ``ResponseFormat`` (any of them, in that order) to the
    value written under each. Read only; never changed by rendering."""

    sections: Mapping[str, object]


_RESPONSE_KEYS = ("ResponseSchema", "ResponseFormat")
_EMPTY: tuple[object, ...] = (None, "", [], {})  # lionagi's test for a section left out


def own_copy(content: Content) -> Content:
    """``content`` as a caller may keep it: list (multimodal) content deep-copied, so no
    caller-visible object is shared; text as it is."""
    return copy.deepcopy(content) if isinstance(content, list) else content


def render_instruction(
    source: InstructionContent,
    *,
    results: Sequence[Result] = (),
    fold: str = "",
    section: str = "",
    tool_schemas: Sequence[JsonObject] = (),
    response_format: type[BaseModel] | JsonObject | BaseModel | None = None,
    structure: type | str | None = None,
) -> Content:
    """Render one instruction as the provider sees it (``render_view`` without a context
    override or results section; the encoding is dropped)."""
    options = CallOptions(tool_schemas, response_format, structure)
    return render_view(source, results=results, fold=fold, section=section, options=options)[0]


def render_view(
    source: InstructionContent,
    *,
    results: Sequence[Result] = (),
    context: Sequence[object] | None = None,
    fold: str = "",
    section: str = "",
    options: CallOptions | ShownSections = HISTORICAL,
    results_section: ResultsSection | None = None,
) -> tuple[Content, Encoding | None]:
    """One instruction as this request renders it, and the fold's encoding (None when ``fold``
    is ``""``).

    ``source`` supplies only its durable fields; ``context`` (None: the source's own) is its
    prompt context for this request; ``fold`` is the joined fold text when this instruction is
    the fold target and ``section`` the D3 section inside it (``""`` when no blocks).
    """
    check_image_detail(source.image_detail)
    _check_values(source, results, options)
    base = source.prompt_context if context is None else context
    if results_section is None:
        merged = merge_results(base, results) if results else base
        tail = ""
    else:
        merged = base
        tail = results_section(results, base) if results else ""
    encoding: Encoding | None = None
    if source.plain_content:
        text = _plain_text(source.plain_content, base, merged, fold)
        encoding = "plain" if fold else None
    else:
        def text_with(guidance: object) -> str:
            return _structured_text(source, guidance, merged, options)

        if fold:
            text, encoding = encode(text_with, fold, section)
        else:
            text = text_with(source.guidance)
    if not source.images:
        if tail:
            text = f"{text}\n\n{tail}" if text else tail
        return text, encoding
    detail = source.image_detail
    parts: list[Part] = [{"type": "text", "text": text}]
    parts.extend(image_part(url, detail) for url in source.images)
    if tail:
        parts.append({"type": "text", "text": tail})
    return parts, encoding


def _check_values(
    source: InstructionContent,
    results: Sequence[Result],
    options: CallOptions | ShownSections,
) -> None:
    """Every value the renderer reads passes ``core.values.check_value`` (named by field); text
    fields are text and ``images`` a list."""
    value = source.plain_content
    if value is not None and not isinstance(value, str):
        raise TypeError(f"plain_content is of type {type(value).__name__}; give text or None")
    if value:
        check_text(value, "plain_content")
    if not isinstance(source.images, list):
        raise TypeError(
            f"images is of type {type(source.images).__name__}; give a list of image strings"
        )
    for index, image in enumerate(source.images):
        if type(image) is str:  # other kinds are refused by ``core.parts``
            check_text(image, f"images[{index}]")
    for name in ("instruction", "guidance"):
        value = getattr(source, name)
        if isinstance(value, str):
            check_text(value, name)
        else:
            check_value(value, name)
    check_value(source.prompt_context, "prompt_context")
    for index, result in enumerate(results):
        check_value(result, f"folded action result {index}")
    if isinstance(options, ShownSections):
        check_value(dict(options.sections), "the recorded response sections")
        return
    if options.tool_schemas:
        check_value(list(options.tool_schemas), "TurnRequest.tool_schemas")
    if isinstance(options.response_format, dict):
        check_value(options.response_format, "TurnRequest.response_format")


def _structured_text(
    source: InstructionContent,
    guidance: object,
    context: Sequence[object],
    options: CallOptions | ShownSections,
) -> str:
    """The structured rendering of ``source`` with ``guidance``, ``context`` and ``options``
    (module contract)."""
    if isinstance(options, CallOptions):
        return instruction_text(_content(source, guidance, context, options))
    if isinstance(options, ShownSections):
        shown = options.sections
        doc = section_doc(guidance, source.instruction, list(context), shown.get("Tools"))
        for key in _RESPONSE_KEYS:
            value = shown.get(key)
            if value not in _EMPTY:
                doc[key] = value
        return active().yaml(doc).strip()
    raise TypeError(
        f"options is of type {type(options).__name__}; give CallOptions or ShownSections"
    )


def instruction_text(content: InstructionContent) -> str:
    """Exactly ``content._format_text_content()``, from the active memo (``core.memo``)."""
    return active().instruction_text(content)


def _content(
    source: InstructionContent, guidance: Any, context: Sequence[object], options: CallOptions
) -> InstructionContent:
    return InstructionContent(
        instruction=source.instruction,
        guidance=guidance,
        prompt_context=list(context),
        # lionagi annotates dicts, and its own ADR-0127 path (``_tool_refs``) puts names here
        tool_schemas=cast("list[dict[str, Any]]", list(options.tool_schemas)),
        response_format=options.response_format,
        structure=options.structure,
    )


def _plain_text(
    plain: str, base: Sequence[object], merged: Sequence[object], fold: str
) -> str:
    """plain_content replaces the structured rendering, but never swallows the fold or folded
    results (docs/architecture.md decision 7): they stand as blank-line separated sections
    around it. Its own context stays hidden, as in lionagi."""
    added = list(merged[len(base):])
    sections = [fold, plain]
    if added:
        sections.append(active().yaml({"Context": added}).strip())
    return "\n\n".join(s for s in sections if s)
