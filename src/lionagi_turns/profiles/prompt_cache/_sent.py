"""ADR-0127: whether a historical instruction's recorded sent text is one the profile renders.

A ``SentRecord``'s ``text`` travels with saved branches and any code can write it in memory, so
the prompt-cache profile sends it only when it is what the profile itself renders for that
instruction as the current one. ``verified_text(turn, rendered, record)`` returns
``record.text`` when all of this holds, else None (the caller then sends ``rendered``, the
durable view):

- ``base`` is ``rendered`` (the instruction's durable rendering in this request), or, when the
  record holds ``fold`` blocks, the same instruction rendered with those blocks folded as the
  profile folds a later call's blocks into the current instruction (their D3 section, then the
  guidance), the same results and context;
- a text is ``base`` itself, or the instruction rendered again as the profile renders a current
  instruction (with the same fold, results and context) whose call options show exactly the
  response sections the text ends in, byte for byte (``core.render.ShownSections``). Those
  sections are read from the text's last lines: from one of its last three lines that start
  with ``Tools:``, ``ResponseSchema:`` or ``ResponseFormat:`` on, the text must be exactly the
  profile's rendering of the sections it loads back to (``response_sections``: in that order,
  each at most once, ``Tools`` a list, ``ResponseSchema`` an object, ``ResponseFormat`` a string
  or an object, no alias). So a text differing from what the profile renders in any byte, even
  whitespace the durable rendering strips, does not verify;
- plain content (``plain_content``, which replaces the structured rendering): ``base`` only;
- multimodal content: compared whole, a list equal to the rendering of the same sections
  (its first part the text part, the image parts as ``base`` holds them).

When no string of the instruction ends in whitespace and no fold is recorded, the rendering
again is not computed: stripping the durable rendering then removes only its final line break,
so the rendering with the sections is ``base``, a line break and the sections (``{}``: the
sections alone), which is compared instead (a property test checks both decide alike).

Pure; reads ``turn.message.content`` (durable fields) and ``record`` only. The check of a
section text is remembered for the last 256 distinct texts (an answer is a function of the
text alone); the memo of ``prompt_cache._memo`` remembers each record's answer.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, TypedDict, cast

import yaml

from lionagi_turns.core.envelope import encode_context_section
from lionagi_turns.core.fold import FoldParts, guidance_text
from lionagi_turns.core.render import CallOptions, ShownSections, render_view
from lionagi_turns.memo.yaml import minimal_yaml
from lionagi_turns.profiles.prompt_cache._record import digest

if TYPE_CHECKING:
    from lionagi_turns.core.history import InstructionTurn
    from lionagi_turns.core.render import Content
    from lionagi_turns.profiles.prompt_cache._record import SentRecord

__all__ = (
    "ResponseSections",
    "check_sent",
    "recorded_sections",
    "response_sections",
    "verified_text",
)

_SECTIONS = ("Tools", "ResponseSchema", "ResponseFormat")
_KINDS: dict[str, tuple[type, ...]] = {
    "Tools": (list,),
    "ResponseSchema": (dict,),
    "ResponseFormat": (str, dict),
}
# A line where a response section may start: the sections are the rendering's last top-level
# keys, and a section's own lines at column 0 are list items ("- "), never one of these keys.
_SECTION_LINE = re.compile(r"^(?:Tools|ResponseSchema|ResponseFormat):", re.MULTILINE)
_EMPTY_DOC = "{}"  # the rendering of an instruction with no visible section
_DOC_END = "\n..."  # YAML's document end marker, after a value that keeps its line breaks
_KEPT_TAILS = 256  # distinct section texts whose check is remembered
_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class ResponseSections(TypedDict, total=False):
    """The response sections a rendering ends in, as ``response_sections`` loads them back."""

    Tools: list[object]
    ResponseSchema: dict[str, object]
    ResponseFormat: str | dict[str, object]


def check_sent(
    turn: InstructionTurn, rendered: Content, record: SentRecord
) -> tuple[Content, bool, Content | None]:
    """``(rendered, whether record.basis is digest(rendered), the verified text or None)``."""
    if record.basis != digest(rendered):
        return rendered, False, None
    return rendered, True, verified_text(turn, rendered, record)


def verified_text(turn: InstructionTurn, rendered: Content, record: SentRecord) -> Content | None:
    """``record.text`` when the profile renders it for ``turn`` (module contract), else None."""
    text = record.text
    if text is None:
        return None
    base = _render(turn, rendered, record, None)
    if base is None:
        return None
    if text == base:
        return text
    if turn.message.content.plain_content:
        return None  # its rendering shows no response section
    head = _text_part(text)
    if head is None:
        return None
    if record.fold is None and not _strips_more(turn):
        joined = _joined(base, head)
        if joined is not None:
            return text if joined and _same_rest(text, base, head) else None
    for sections in _shown_sections(head):
        if _render(turn, rendered, record, ShownSections(sections)) == text:
            return text
    return None


def _strips_more(turn: InstructionTurn) -> bool:
    """Whether a string the durable rendering writes (a key or value of the instruction's
    guidance, instruction, context or results) ends in whitespace: stripping the rendering
    may then remove more than its final line break."""
    content = turn.message.content
    context = content.prompt_context if turn.context is None else turn.context
    stack: list[object] = [content.guidance, content.instruction, context, turn.results]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if value[-1:].isspace():
                return True
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
    return False


def _joined(base: Content, head: str) -> bool | None:
    """For a rendering no strip shortened but by its final line break: whether ``head`` is
    ``base``'s text, a line break and the response sections (``base`` ``{}``: the sections
    alone), as the rendering with those sections is; None when this rule does not decide."""
    base_text = _text_part(base)
    if base_text is None or base_text.endswith(_DOC_END):
        return None  # the document end marker a following section replaces: render again
    if base_text == _EMPTY_DOC:
        tail = head
    elif head.startswith(base_text) and head[len(base_text) : len(base_text) + 1] == "\n":
        tail = head[len(base_text) + 1 :]
    else:
        return False
    return _sections_of(tail) is not None


def _same_rest(text: Content, base: Content, head: str) -> bool:
    """``text`` is ``base`` with its text (or first, text part's text) replaced by ``head``."""
    if isinstance(base, str):
        return isinstance(text, str)
    return (
        isinstance(text, list)
        and len(text) == len(base)
        and text[0] == {"type": "text", "text": head}
        and text[1:] == base[1:]
    )


def _text_part(text: Content) -> str | None:
    """The text a response section would be in: ``text`` itself, or its first part's text."""
    if isinstance(text, str):
        return text
    if isinstance(text, list) and text and isinstance(text[0], dict):
        value = text[0].get("text")
        return value if isinstance(value, str) else None
    return None


def _shown_sections(text: str) -> Iterator[ResponseSections]:
    """The response sections ``text`` may end in, from each of its last three lines that can
    start one (the sections hold at most three such lines), longest first."""
    starts = [m.start() for m in _SECTION_LINE.finditer(text)][-len(_SECTIONS) :]
    for start in starts:
        sections = _sections_of(text[start:])
        if sections is not None:
            yield sections


def _render(
    turn: InstructionTurn, rendered: Content, record: SentRecord, shown: ShownSections | None
) -> Content | None:
    """``turn`` rendered with ``record``'s fold (if any) and ``shown`` (None: its durable view,
    ``rendered`` when there is no fold either); None when the profile cannot render that."""
    if record.fold is None and shown is None:
        return rendered
    content = turn.message.content
    options = CallOptions() if shown is None else shown
    try:
        section = encode_context_section(record.fold) if record.fold is not None else ""
        fold = FoldParts("", section, guidance_text(content.guidance)).text if section else ""
        text, _ = render_view(
            content,
            results=turn.results,
            context=turn.context,
            fold=fold,
            section=section,
            options=options,
        )
    except (TypeError, ValueError):  # not a fold or sections this instruction can carry
        return None
    return text


def recorded_sections(text: Content | None) -> ResponseSections | None:
    """The response sections a recorded sent ``text`` (or its first, text part) carries: the
    longest run from a line that can start one, ending at the text's end or before a blank line
    (a results section follows the sections), that is exactly the profile's rendering of the
    sections it loads back to; None when there is none."""
    head = _text_part(text) if text is not None else None
    if head is None:
        return None
    for match in _SECTION_LINE.finditer(head):
        start = match.start()
        ends = [start + m.start() for m in re.finditer("\n\n", head[start:])]
        for end in (len(head), *reversed(ends)):
            sections = _sections_of(head[start:end])
            if sections is not None:
                return sections
    return None


@functools.lru_cache(maxsize=_KEPT_TAILS)
def _sections_of(tail: str) -> ResponseSections | None:
    """``response_sections(tail)``, remembered (a conversation's instructions mostly carry the
    same response sections); the answer is shared, so it is never changed."""
    return response_sections(tail)


def response_sections(
    tail: str, keys: Sequence[str] = _SECTIONS
) -> ResponseSections | None:
    """The sections ``tail`` holds when it is exactly the profile's rendering of them (module
    contract), each one of ``keys`` (a subsequence of the response sections), else None."""
    try:
        if any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(tail, Loader=_LOADER)):
            return None  # the profile never writes an alias; expanding one could be huge
        loaded = yaml.load(tail, Loader=_LOADER)
    except yaml.YAMLError:
        return None
    if type(loaded) is not dict or not loaded:
        return None
    present = [k for k in keys if k in loaded]
    if list(loaded) != present:
        return None
    if not all(isinstance(loaded[k], _KINDS[k]) for k in present):
        return None
    try:
        again = minimal_yaml(loaded).strip()
    except (TypeError, ValueError):
        return None
    # the checks above are the shape ResponseSections names (YAML's loader is untyped)
    return cast("ResponseSections", loaded) if again == tail else None
