"""What every command's human output shares: a console, inert text and bounded bodies.

Contracts:

- Text that comes from the input (message text, ids, paths, notes, error details) is shown
  inert: C0 controls other than line feed and tab, DEL, C1 controls, and the Unicode line,
  paragraph and bidirectional-override controls are shown as ``\\xNN`` / ``\\uNNNN`` escapes
  (styled reverse on a colour terminal), so a saved branch cannot retitle the window, write the
  clipboard (OSC 0/52), clear the screen, move the cursor over earlier lines or reorder what a
  reviewer reads. Lone surrogates (a file name that is not UTF-8, decoded by Python with
  ``surrogateescape``) are shown as ``\\udcNN`` too. ``--format json`` output is exact JSON and
  is not escaped; only when it holds a lone surrogate, which UTF-8 cannot carry, is all of it
  written ASCII-escaped (the same JSON value).
- Long message bodies are bounded before they are shown (as plain lines, ``_lines``, or in a
  Rich table, whose wrapping is quadratic in line length): a line over ``MAX_LINE_CHARS``
  characters shows its first ``LINE_HEAD`` and last ``LINE_TAIL`` characters around a marker
  giving the number of characters left out, and a body of more than ``MAX_BODY_LINES`` lines
  shows its first ``BODY_HEAD`` and last ``BODY_TAIL`` lines around a marker giving the lines
  and characters left out. Sizes and token counts are always of the whole text;
  ``--format json`` prints everything.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from rich.console import Console
from rich.segment import Segment
from rich.text import Text

__all__ = (
    "BODY_HEAD",
    "BODY_TAIL",
    "LINE_HEAD",
    "LINE_TAIL",
    "MAX_BODY_LINES",
    "MAX_LINE_CHARS",
    "ClosedPipe",
    "Row",
    "bounded_line",
    "bounded_rows",
    "console",
    "inert",
    "inert_text",
    "print_json",
)

MAX_LINE_CHARS = 2_000
LINE_HEAD, LINE_TAIL = 1_200, 400
MAX_BODY_LINES = 400
BODY_HEAD, BODY_TAIL = 300, 60

CONTROL_CHARS = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff]"
)
_ESCAPED = "reverse"


def escape_char(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert(text: str) -> str:
    """``text`` with every control character escaped (see the module contract)."""
    return CONTROL_CHARS.sub(lambda m: escape_char(m.group()), text)


def bounded_line(text: str) -> str:
    """``text`` shortened like an over-long body line (see the module contract)."""
    return _row(0, text).text


def inert_text(text: str, style: str = "") -> Text:
    """``inert(bounded_line(text))`` as Rich ``Text`` in ``style``, the escapes styled apart;
    never parsed as markup. Every input-derived text a view prints goes through here, so an
    error message or a warning quoting stored text is bounded like a body line."""
    text = bounded_line(text)
    out = Text(style=style)
    position = 0
    for match in CONTROL_CHARS.finditer(text):
        out.append(text[position : match.start()])
        out.append(escape_char(match.group()), style=_ESCAPED)
        position = match.end()
    out.append(text[position:])
    return out


@dataclass(frozen=True, slots=True)
class Row:
    """One displayed line of a body: ``index`` of the source line (None for a marker row),
    the text shown, and how many characters of the source it leaves out."""

    index: int | None
    text: str
    elided: int = 0


def bounded_rows(lines: list[str]) -> list[Row]:
    """The rows that show ``lines`` within the display bounds (see the module contract)."""
    if len(lines) > MAX_BODY_LINES:
        hidden = lines[BODY_HEAD : len(lines) - BODY_TAIL]
        chars = sum(len(line) for line in hidden) + len(hidden)
        marker = Row(
            None,
            f"… {len(hidden):,} lines ({chars:,} characters) not shown; "
            "--format json prints them …",
            chars,
        )
        head = [_row(i, lines[i]) for i in range(BODY_HEAD)]
        tail = [_row(i, lines[i]) for i in range(len(lines) - BODY_TAIL, len(lines))]
        return [*head, marker, *tail]
    return [_row(i, line) for i, line in enumerate(lines)]


def _row(index: int, line: str) -> Row:
    if len(line) <= MAX_LINE_CHARS:
        return Row(index, line)
    hidden = len(line) - LINE_HEAD - LINE_TAIL
    text = (
        f"{line[:LINE_HEAD]} … [{hidden:,} characters not shown; --format json prints them] … "
        f"{line[-LINE_TAIL:]}"
    )
    return Row(index, text, hidden)


class ClosedPipe(Exception):
    """Standard output was closed by its reader (``| head``). Not an ``OSError``, so nothing on
    the way to the CLI's ``main`` turns it into an exit code; ``main`` ends quietly with
    ``verdict``: 0, or the code the command had decided before it printed (a ``check`` that
    found defects still exits 1)."""

    def __init__(self, verdict: int = 0) -> None:
        super().__init__(verdict)
        self.verdict = verdict


class _Console(Console):
    """A console whose closed standard output raises ``ClosedPipe`` instead of Rich's exit 1."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        raise ClosedPipe

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        """Rich's text; into a pipe or file, with no trailing whitespace on any line (table
        padding, wrapped titles), so a reader receives exactly the words."""
        text = super()._render_buffer(buffer)
        if self.is_terminal:
            return text
        return "\n".join(map(unpadded, text.split("\n")))


_TRAILING_SPACE = re.compile(r"\s+((?:\x1b\[[0-9;]*m)*)$")


def unpadded(line: str) -> str:
    """``line`` without whitespace at its end, also where style codes follow it."""
    return _TRAILING_SPACE.sub(r"\1", line)


def console() -> Console:
    """The console every text view prints to (standard output, no markup or highlighting)."""
    return _Console(highlight=False, soft_wrap=False, markup=False, emoji=False)


def print_json(value: object) -> None:
    """``value`` as indented JSON on standard output, as UTF-8 whatever the locale;
    ``ClosedPipe`` when the reader has gone."""
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: the same JSON value, ASCII-escaped
        text = json.dumps(value, indent=2) + "\n"
        data = text.encode("ascii")
    buffer = getattr(sys.stdout, "buffer", None)
    try:
        if buffer is None:
            sys.stdout.write(text)
            return
        sys.stdout.flush()
        buffer.write(data)
        buffer.flush()
    except BrokenPipeError:
        raise ClosedPipe from None
