"""Text fitted to a width of terminal cells, for the text views.

Contracts:

- ``shown_width(text)`` is the number of terminal cells ``text`` takes once shown inert
  (``_views.inert``): a wide character counts 2, a combining one 0, a control character the
  length of the escape that shows it. A tab counts 1; the views expand tabs (``expand_tabs``)
  before they measure.
- ``fit(line, width)`` is ``line`` in pieces, each at most ``width`` cells, whose concatenation
  is ``line``: nothing is left out or changed. A piece ends after a space or a JSON ``,`` ``:``
  ``[`` ``{`` outside a double-quoted string where one falls within the width (so a JSON value
  or string is kept whole when it can be; a ``:`` before ``/``, as in a URL, is not such a
  place); failing that after a space, ``/``, ``&``, ``?``, ``=`` or that ``:`` anywhere;
  failing that (one unbroken run wider than ``width``: a URL, a digest, base64) exactly at the
  width. The latest such place within the width is taken.
- ``preview(text, limit)`` is ``text`` when it fits in ``limit`` cells; otherwise its start,
  cut after the last space that leaves at least half the room (else at the room's end), then
  ``… (+N chars)`` with N the characters left out; the result fits in ``limit`` cells (for a
  ``limit`` of at least 24).
"""

from __future__ import annotations

from rich.cells import cell_len, get_character_cell_size

from lionagi_turns.cli._views import CONTROL_CHARS, escape_char

__all__ = ("expand_tabs", "fit", "is_plain", "preview", "shown_width")

TAB_SIZE = 8
_STRONG = frozenset(" ,:[{")
_WEAK = frozenset(" /&?=")


def expand_tabs(text: str) -> str:
    """``text`` with each tab replaced by spaces up to the next stop of ``TAB_SIZE``."""
    return text.expandtabs(TAB_SIZE) if "\t" in text else text


def _char_width(char: str) -> int:
    if CONTROL_CHARS.match(char):
        return len(escape_char(char))
    return get_character_cell_size(char)


def is_plain(text: str) -> bool:
    """Whether every character of ``text`` is shown as itself in exactly one cell (ASCII, no
    control character, no tab): such a text is shown as it is and measured by its length."""
    return text.isascii() and "\t" not in text and CONTROL_CHARS.search(text) is None


def shown_width(text: str) -> int:
    """The cells ``text`` takes when shown inert (module contract)."""
    if is_plain(text):
        return len(text)
    if CONTROL_CHARS.search(text) is None:
        return cell_len(text)
    return sum(map(_char_width, text))


def _break_kinds(line: str) -> list[int]:
    """For each index, 2 when a piece may end after it (a strong place), 1 when it may end
    there only failing a strong one, else 0 (module contract)."""
    kinds = [0] * len(line)
    quoted = escaped = False
    for k, char in enumerate(line):
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
            if char in _WEAK:
                kinds[k] = 1
            continue
        if char == '"':
            quoted = True
        elif char in _STRONG:
            kinds[k] = 1 if line.startswith("/", k + 1) and char == ":" else 2
        elif char in _WEAK:
            kinds[k] = 1
    return kinds


def _room_end(line: str, widths: list[int] | None, start: int, width: int) -> int:
    """The end of the longest run of ``line`` from ``start`` that fits in ``width`` cells (at
    least one character, so a character wider than ``width`` still advances)."""
    if widths is None:
        return min(len(line), start + width)
    used, k = 0, start
    while k < len(line) and used + widths[k] <= width:
        used += widths[k]
        k += 1
    return max(k, start + 1)


def fit(line: str, width: int) -> list[str]:
    """``line`` in pieces of at most ``width`` cells (module contract)."""
    width = max(width, 1)
    if shown_width(line) <= width:
        return [line]
    widths = None if is_plain(line) else [_char_width(c) for c in line]
    kinds = _break_kinds(line)
    pieces: list[str] = []
    start = 0
    while start < len(line):
        end = _room_end(line, widths, start, width)
        if end < len(line):
            window = kinds[start:end]
            for kind in (2, 1):
                if kind in window:
                    end = start + len(window) - window[::-1].index(kind)
                    break
        pieces.append(line[start:end])
        start = end
    return pieces


def preview(text: str, limit: int) -> str:
    """``text`` within ``limit`` cells, its cut saying how much is left (module contract)."""
    if shown_width(text) <= limit:
        return text
    note = f" … (+{len(text):,} chars)"
    room = max(limit - len(note), 1)
    end = _room_end(text, None if is_plain(text) else [_char_width(c) for c in text], 0, room)
    space = text.rfind(" ", 0, end + 1)
    if space >= room // 2:
        end = space
    return f"{text[:end].rstrip()} … (+{len(text) - end:,} chars)"
