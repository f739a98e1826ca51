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
- a text is ``base`` itself, or ``base`` (without the YAML document end marker ``...`` it ends
  in when its last value keeps its line breaks), line breaks and the response sections only a
  current instruction renders (``base`` ``{}``, an instruction with no visible section:
  the sections alone): ``Tools`` (a list of tool names or schemas), ``ResponseSchema`` (an object),
  ``ResponseFormat`` (a string or an object), in that order, each at most once, written as the
  profile writes them: ``minimal_yaml`` of what they load back to (PyYAML's safe loader; no
  alias), byte for byte;
- plain content (``plain_content``, which replaces the structured rendering): ``base`` only;
- multimodal content: a list of the same length as ``base`` whose parts after the first equal
  ``base``'s and whose first part is a text part (no other key) whose text verifies as above.

Pure; reads ``turn.message.content`` (durable fields) and ``record`` only. The check of a
section text is remembered for the last 256 distinct texts (an answer is a function of the
text alone).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import yaml

from ._cache_record import digest
from ._envelope import encode_context_section
from ._fast.yaml import minimal_yaml
from ._fold import FoldParts, guidance_text
from ._render import render_view

if TYPE_CHECKING:
    from ._cache_record import SentRecord
    from ._history import InstructionTurn
    from ._render import Content

__all__ = ("check_sent", "response_sections", "verified_text")

_SECTIONS = ("Tools", "ResponseSchema", "ResponseFormat")
_KINDS: dict[str, tuple[type, ...]] = {
    "Tools": (list,),
    "ResponseSchema": (dict,),
    "ResponseFormat": (str, dict),
}
_EMPTY_DOC = "{}"
_DOC_END = "\n..."
_KEPT_TAILS = 256  # distinct section texts whose check is remembered
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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
    base = _base(turn, rendered, record)
    if base is None:
        return None
    plain = bool(turn.message.content.plain_content)
    if isinstance(base, str):
        return text if isinstance(text, str) and _verifies(base, text, plain) else None
    if not isinstance(text, list) or len(text) != len(base) or text[1:] != base[1:]:
        return None
    head, sent = base[0], text[0]
    if set(sent) != {"type", "text"} or sent.get("type") != "text":
        return None
    base_text, sent_text = head.get("text"), sent.get("text")
    if not isinstance(base_text, str) or not isinstance(sent_text, str):
        return None
    return text if _verifies(base_text, sent_text, plain) else None


def _base(turn: InstructionTurn, rendered: Content, record: SentRecord) -> Content | None:
    if record.fold is None:
        return rendered
    content = turn.message.content
    try:
        section = encode_context_section(record.fold)
        fold = FoldParts("", section, guidance_text(content.guidance))
        base, _ = render_view(
            content, results=turn.results, context=turn.context, fold=fold.text, section=section
        )
    except (TypeError, ValueError):  # not a fold this instruction can carry
        return None
    return base


def _verifies(base: str, text: str, plain: bool) -> bool:
    if text == base:
        return True
    if plain:
        return False
    if base == _EMPTY_DOC:
        tail = text
    else:
        # A rendering whose last value is a block kept with its line breaks ends in YAML's
        # document end marker, which a following section replaces.
        head = base[: -len(_DOC_END)] if base.endswith(_DOC_END) else base
        if not text.startswith(head):
            return False
        rest = text[len(head) :]
        tail = rest.lstrip("\n")
        if not head.endswith("\n") and len(tail) == len(rest):
            return False  # no line break between the rendering and the sections
    return _renders_sections(tail)


@functools.lru_cache(maxsize=_KEPT_TAILS)
def _renders_sections(tail: str) -> bool:
    """``response_sections(tail) is not None``, remembered: a conversation's instructions
    mostly carry the same response sections."""
    return response_sections(tail) is not None


def response_sections(tail: str, keys: Sequence[str] = _SECTIONS) -> dict[str, Any] | None:
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
    return loaded if again == tail else None
