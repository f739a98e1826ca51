"""Plain lines for the text views: what a message or a diff shows, written straight to the
console's file.

A view of a long branch writes hundreds of thousands of lines; laying each out through Rich
(a panel of a grid per message) costs far more than compiling the request, so the per-message
views write lines themselves and keep Rich for the small tables.

Contracts of ``Lines``:

- Every line is written as given plus a line feed, never wrapped or padded here; the views fit
  each line to ``width`` (the console's, 80 in a pipe, at least ``MIN_WIDTH``) before they
  write it (``_frame``, ``_wrap``).
- ANSI styles (SGR sequences) are written only when the console is a terminal; with
  ``NO_COLOR`` set, only bold, dim, italic and reverse (as Rich does); in a pipe, a file or a
  captured test the output holds no escape character at all.
- ``inert(text)`` is ``_views.inert(_views.bounded_line(text))``: input text is shown inert
  and bounded exactly as the Rich views show it; on a colour terminal the escapes are styled
  reverse.
"""

from __future__ import annotations

from rich.console import Console

from lionagi_turns.cli._views import (
    CONTROL_CHARS,
    ClosedPipe,
    bounded_line,
    escape_char,
    inert,
    unpadded,
)

__all__ = ("MIN_WIDTH", "Lines", "sgr")

#: The narrowest width a view is laid out for (a console reporting less is taken as this).
MIN_WIDTH = 20

_CODES = {
    "bold": "1",
    "dim": "2",
    "italic": "3",
    "reverse": "7",
    "red": "31",
    "green": "32",
    "yellow": "33",
    "blue": "34",
    "magenta": "35",
    "cyan": "36",
}


_COLOURS = frozenset({"red", "green", "yellow", "blue", "magenta", "cyan"})


def sgr(style: str, colour: bool = True) -> str:
    """The SGR parameters of a space-separated ``style`` of ``_CODES`` names (without the
    colours when ``colour`` is False); ValueError names an unknown one."""
    try:
        codes = [_CODES[word] for word in style.split()]
    except KeyError as exc:
        raise ValueError(f"unknown style {exc.args[0]!r}; known: {', '.join(_CODES)}") from None
    if colour:
        return ";".join(codes)
    return ";".join(c for word, c in zip(style.split(), codes, strict=True) if word not in _COLOURS)


class Lines:
    """Writes a view's lines to ``console.file`` (see the module contract)."""

    __slots__ = ("_file", "_hues", "colour", "width")

    def __init__(self, console: Console) -> None:
        self._file = console.file
        self.colour = console.is_terminal and console.color_system is not None
        self._hues = not console.no_color
        self.width = max(console.width, MIN_WIDTH)

    def styled(self, text: str, style: str) -> str:
        """``text`` in ``style`` on a terminal (see the module contract), else ``text``."""
        if not self.colour or not style or not text:
            return text
        codes = sgr(style, self._hues)
        return f"\x1b[{codes}m{text}\x1b[0m" if codes else text

    def inert(self, text: str, style: str = "") -> str:
        """``text`` bounded and inert (see the module contract), in ``style``."""
        shown = bounded_line(text)
        if not self.colour:
            return inert(shown)
        pieces, position = [], 0
        for match in CONTROL_CHARS.finditer(shown):
            pieces.append(self.styled(shown[position : match.start()], style))
            pieces.append(self.styled(escape_char(match.group()), "reverse"))
            position = match.end()
        pieces.append(self.styled(shown[position:], style))
        return "".join(pieces)

    def write(self, line: str = "") -> None:
        """``line`` and a newline, with no whitespace before the newline (a wrapped row ends at
        the space it broke after; a pipe receives the words only)."""
        try:
            self._file.write((line.rstrip() if "\x1b" not in line else unpadded(line)) + "\n")
        except BrokenPipeError:
            raise ClosedPipe from None

    def rule(self, title: str, right: str = "", style: str = "") -> None:
        """A frame's top line: ``╭─`` ``title``, ``─`` up to the width, then ``right``, the
        frame in ``style``. ``title`` and ``right`` are already inert (and styled)."""
        fill = max(self.width - _visible(title) - _visible(right) - 5, 3)
        line = f"{self.styled('╭─', style)} {title} {self.styled('─' * fill, style)}"
        self.write(f"{line} {right}" if right else line)

    def end(self, style: str = "") -> None:
        """A frame's closing line, in ``style``."""
        self.write(self.styled("╰" + "─" * (self.width - 1), style))

    def flush(self) -> None:
        """Flush the console's file; ``ClosedPipe`` when its reader has gone (so no layer on
        the way to ``main`` reads it as an ``OSError``)."""
        try:
            self._file.flush()
        except BrokenPipeError:
            raise ClosedPipe from None


def _visible(text: str) -> int:
    """The characters of ``text`` a terminal shows (its SGR sequences left out)."""
    if "\x1b" not in text:
        return len(text)
    count, inside = 0, False
    for char in text:
        if char == "\x1b":
            inside = True
        elif inside:
            inside = char != "m"
        else:
            count += 1
    return count
