"""The sections of a request: a partition of every character it sends, with o200k counts.

Contract of ``measure(messages, fold_index, fold_parts, system_blocks)``:

- The request's text is its system blocks' text (the prompt-cache profile's ``system`` array;
  none in the other profiles) and every message's text (a string content, or each ``text`` part
  of a multimodal content). Every character of it is in exactly one section of
  ``SECTION_NAMES``; images are counted (``images``), not measured in characters or tokens.
- ``system``, ``context_blocks`` and ``guidance`` are the fold's parts (``fold_parts``, the
  compiler's ``FoldParts.sections()``) where the fold message (``fold_index``) carries them line
  for line, plus the system blocks labelled so; each counts exactly its own text. The fold's
  framing around them (a YAML key, indentation, the blank lines between parts) stays in the
  message's own section. ``tools`` is the stable segment's tool section (prompt-cache only).
- ``history`` is the rest of every message before the last; ``current_turn`` the rest of the
  last message.
- Tokens: each section's own text in one text part (or system block) is counted on its own
  (``o200k_base``, offline), and a row is the sum of those counts; ``total`` is the sum of the
  rows, for characters, tokens and images alike. A provider counting the whole request at once
  may differ by a few tokens (merges across a section boundary) and adds its own per-message
  framing, which no row holds.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from lionagi_turns.core.measure import count_tokens as _count_tokens

__all__ = (
    "SECTION_NAMES",
    "Measured",
    "MessageSize",
    "fold_labels",
    "measure",
    "system_block_sections",
    "text_parts",
)

SECTION_NAMES = ("system", "tools", "context_blocks", "guidance", "history", "current_turn")
_FOLD_SECTION = {"system": "system", "context": "context_blocks", "guidance": "guidance"}


@functools.lru_cache(maxsize=4096)
def count_tokens(text: str) -> int:
    """``core.measure.count_tokens``, remembered (the same texts are counted by several views)."""
    return _count_tokens(text)


def text_parts(content: object) -> tuple[list[str], int]:
    """The texts a message's content sends, in order, and its number of images; TypeError for
    content that is neither text nor a list of part objects."""
    if isinstance(content, str):
        return [content], 0
    if isinstance(content, list):
        odd = next((p for p in content if not isinstance(p, dict)), None)
        if odd is not None:
            raise TypeError(f"message content holds a {type(odd).__name__} part, not an object")
        texts = [str(p.get("text", "")) for p in content if p.get("type") == "text"]
        images = sum(1 for p in content if p.get("type") == "image_url")
        return texts, images
    raise TypeError(f"message content is a {type(content).__name__}, not a str or a list")


@dataclass(frozen=True, slots=True)
class MessageSize:
    """One message's text split by section: ``texts[section]`` are its pieces (one per text
    part that holds some of that section), ``images`` its image count; ``counts[section]``
    the o200k tokens of that section's pieces, each piece counted on its own (once, here)."""

    section: str
    texts: dict[str, list[str]]
    images: int
    counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.counts:
            for name, pieces in self.texts.items():
                self.counts[name] = sum(count_tokens(t) for t in pieces)

    @property
    def characters(self) -> int:
        return sum(len(t) for pieces in self.texts.values() for t in pieces)

    @property
    def tokens(self) -> int:
        return sum(self.counts.values())


@dataclass(slots=True)
class Measured:
    """``sections``: one row per ``SECTION_NAMES`` entry then ``total`` (``characters``,
    ``tokens``, ``images``); ``messages``: each message's split; ``fold_located``: False when a
    fold was planned but not found line for line (its parts then count in the message's own
    section); ``fold_index`` and ``fold_parts``: the fold ``measure`` was given, so a view
    labels the fold's lines as they were counted."""

    sections: dict[str, dict[str, int]]
    messages: list[MessageSize] = field(default_factory=list)
    fold_located: bool = True
    fold_index: int | None = None
    fold_parts: tuple[tuple[str, str], ...] = ()


_Found = tuple[int, str, list[tuple[str, str]]]


def _locate(lines: list[str], parts: Sequence[tuple[str, str]]) -> _Found | None:
    """Where ``parts`` stand in ``lines`` line for line: the first line, the indentation (none,
    a YAML block's, or an inline ``Guidance:`` key for a one-line fold) and the fold's lines as
    ``(label, text)`` (label "" for the blank line between two parts); None when absent."""
    fold_lines: list[tuple[str, str]] = []
    for n, (label, text) in enumerate(parts):
        if n:
            fold_lines.append(("", ""))
        fold_lines.extend((label, line) for line in text.split("\n"))
    first = fold_lines[0][1]
    for start, line in enumerate(lines):
        if not line.endswith(first):
            continue
        indent = line[: len(line) - len(first)]
        if indent.strip() and not (len(fold_lines) == 1 and indent.strip() == "Guidance:"):
            continue
        window = lines[start : start + len(fold_lines)]
        if len(window) == len(fold_lines) and all(
            got == indent + want if want else not got.strip()
            for got, (_, want) in zip(window, fold_lines, strict=True)
        ):
            return start, indent, fold_lines
    return None


def fold_labels(lines: list[str], parts: Sequence[tuple[str, str]]) -> dict[int, str] | None:
    """Line index -> fold label (system/context/guidance) for the fold in ``lines``, or None."""
    found = _locate(lines, parts) if parts else None
    if found is None:
        return None
    start, _, fold_lines = found
    return {start + k: label for k, (label, _) in enumerate(fold_lines) if label}


def _split(text: str, parts: Sequence[tuple[str, str]]) -> tuple[str, dict[str, str]] | None:
    """``text`` as its remainder (everything but the parts' own characters) and each part's
    text, when the parts stand in it line for line; None otherwise."""
    lines = text.split("\n")
    found = _locate(lines, parts)
    if found is None:
        return None
    start, indent, fold_lines = found

    def label(k: int) -> str:
        inside = start <= k < start + len(fold_lines)
        return fold_lines[k - start][0] if inside else ""

    rest: list[str] = []
    for k, line in enumerate(lines):
        own = label(k)
        if not own:
            rest.append(line)
        else:
            want = fold_lines[k - start][1]
            rest.append(indent if want else line)  # a blank part line keeps its spaces here
        if k + 1 < len(lines) and not (own and label(k + 1) == own):
            rest.append("\n")
    return "".join(rest), dict(parts)


def _message(
    content: object, section: str, parts: Sequence[tuple[str, str]]
) -> tuple[MessageSize, bool]:
    """One message split (see ``measure``); True when ``parts`` were found in it."""
    texts, images = text_parts(content)
    pieces: dict[str, list[str]] = {}
    located = not parts
    for text in texts:
        split = None if located else _split(text, parts)
        if split is None:
            pieces.setdefault(section, []).append(text)
            continue
        located = True
        rest, own = split
        pieces.setdefault(section, []).append(rest)
        for label, part in own.items():
            pieces.setdefault(_FOLD_SECTION[label], []).append(part)
    return MessageSize(section, pieces, images), located


def system_block_sections(has_system: bool, stable: int, count: int) -> list[str]:
    """The section of each of a prompt-cache layout's ``count`` system blocks: the stable
    segment (its first ``stable`` blocks) is the system text then the tool section, each only
    when non-empty (``has_system``: the branch has a system text); the rest is the
    conversation's context section."""
    names = []
    for i in range(count):
        if i >= stable:
            names.append("context_blocks")
        elif i == 0 and (has_system or stable == 2):
            names.append("system")
        else:
            names.append("tools")
    return names


def measure(
    messages: Sequence[Mapping[str, object]],
    fold_index: int | None,
    fold_parts: Sequence[tuple[str, str]],
    system_blocks: Sequence[tuple[str, str]] = (),
) -> Measured:
    """The sections of a request (module contract). ``system_blocks`` are ``(section, text)``
    for the payload's system array, in order."""
    rows = {name: {"characters": 0, "tokens": 0, "images": 0} for name in SECTION_NAMES}
    for name, text in system_blocks:
        rows[name]["characters"] += len(text)
        rows[name]["tokens"] += count_tokens(text)
    out = Measured(rows, fold_index=fold_index, fold_parts=tuple(fold_parts))
    last = len(messages) - 1
    for i, message in enumerate(messages):
        base = "current_turn" if i == last else "history"
        parts = fold_parts if i == fold_index else ()
        size, located = _message(message["content"], base, parts)
        out.fold_located = out.fold_located and located
        out.messages.append(size)
        rows[base]["images"] += size.images
        for name, pieces in size.texts.items():
            rows[name]["characters"] += sum(len(t) for t in pieces)
            rows[name]["tokens"] += size.counts[name]
    rows["total"] = {
        key: sum(rows[name][key] for name in SECTION_NAMES)
        for key in ("characters", "tokens", "images")
    }
    return out
