"""The one frame every text view draws a request's parts in, and the rule over a view.

Contracts (``out`` is a ``_lines.Lines``; its ``width`` is the console's, 80 in a pipe):

- No line written here is wider than ``out.width`` terminal cells (``_wrap.shown_width``).
- ``header(out, title)``: ``── title ──`` centred across the width; a title too long for that
  is written whole, wrapped (``_wrap.fit``), under a full-width rule.
- ``top(out, head, role, tags, right, style)``: a frame's first line, ``╭─ head role  tags
  ──── right`` (``role`` is input text, shown inert). When the line cannot hold ``right`` too,
  ``right`` becomes the frame's first row, labelled ``size``; a title wider than the line is
  wrapped, its continuation on ``│`` lines.
- ``row(out, label, text, style)``: ``│ label    │ text``, ``text`` inert; a text wider than
  the room continues on ``│          ┆ `` lines (``_wrap.fit``: nothing is left out). A label
  has at most ``LABEL`` characters.
- ``line(out, text, style)``: an unlabelled row, ``│ text`` (a diff's line), ``text`` inert; a
  text wider than the room continues on ``│ ┆ `` lines (``_wrap.fit``: nothing is left out).
- ``note(out, head, text, style)``: a line under a frame, ``head`` (plain, in ``style``) then
  ``text`` (inert), continued on lines indented four cells.
- ``marker(out, text)``: ``│          ┆ text`` in italic dim, for lines a view leaves out
  (the text says how many).
- ``end(out, style)``: the frame's last line, ``╰───`` across the width.
"""

from __future__ import annotations

from lionagi_turns.cli._lines import Lines
from lionagi_turns.cli._wrap import expand_tabs, fit, is_plain, shown_width

__all__ = ("LABEL", "end", "header", "line", "marker", "note", "row", "top")

#: The width of the label column (the longest label: ``guidance``, ``left out``).
LABEL = 8
_PREFIX = 2 + LABEL + 3  # "│ " label " │ "


def header(out: Lines, title: str) -> None:
    """The rule over a view (module contract); ``title`` is input-derived, shown inert."""
    width = out.width
    if shown_width(title) + 4 <= width:
        left = (width - shown_width(title) - 2) // 2
        right = width - shown_width(title) - 2 - left
        out.write(f"{'─' * left} {out.inert(title, 'bold')} {'─' * right}")
        return
    out.write("─" * width)
    for piece in fit(title, width):
        out.write(out.inert(piece, "bold"))


def top(out: Lines, head: str, role: str, tags: str, right: str, style: str) -> None:
    """A frame's first line (module contract)."""
    plain = f"{head} {role}" + (f"  {tags}" if tags else "")
    wide, room = shown_width(plain), out.width
    title = out.styled(f"{head} ", "bold") + out.inert(role, "bold") + (f"  {tags}" if tags else "")
    if wide + shown_width(right) + 8 <= room:
        fill = room - wide - shown_width(right) - 5
        out.write(f"{out.styled('╭─', style)} {title} {out.styled('─' * fill, style)} {right}")
        return
    if wide + 7 <= room:
        out.write(f"{out.styled('╭─', style)} {title} {out.styled('─' * (room - wide - 4), style)}")
    else:
        for n, piece in enumerate(fit(plain, room - 3)):
            lead = out.styled("╭─" if n == 0 else "│ ", style)
            out.write(f"{lead} {out.inert(piece, 'bold')}")
    if right:
        row(out, "size", right, "dim")


def row(out: Lines, label: str, text: str, style: str = "", label_style: str = "") -> None:
    """A labelled row of a frame (module contract)."""
    tag = out.styled(f"{label:{LABEL}}", label_style) if label else " " * LABEL
    room = max(out.width - _PREFIX, 1)
    if len(text) <= room and not (style and out.colour) and is_plain(text):  # as it is
        out.write(f"│ {tag} │ {text}")
        return
    pieces = fit(expand_tabs(text), room)
    out.write(f"│ {tag} │ {out.inert(pieces[0], style)}")
    for piece in pieces[1:]:
        out.write(f"│ {' ' * LABEL} ┆ {out.inert(piece, style)}")


def line(out: Lines, text: str, style: str = "") -> None:
    """An unlabelled row of a frame (module contract)."""
    room = max(out.width - 2, 1)
    if len(text) <= room and not (style and out.colour) and is_plain(text):  # as it is
        out.write(f"│ {out.inert(text)}")
        return
    first, *rest = fit(expand_tabs(text), max(room - 2, 1))
    out.write(f"│ {out.inert(first, style)}")
    for piece in rest:
        out.write(f"│ ┆ {out.inert(piece, style)}")


def note(out: Lines, head: str, text: str, style: str = "") -> None:
    """A line under a frame (module contract)."""
    first, *rest = fit(head + text, max(out.width - 4, 1))
    if first.startswith(head):
        out.write(out.styled(head, style) + out.inert(first[len(head):]))
    else:
        out.write(out.inert(first, style))
    for piece in rest:
        out.write("    " + out.inert(piece))


def marker(out: Lines, text: str) -> None:
    """A row standing for lines left out (module contract)."""
    for piece in fit(text, max(out.width - _PREFIX, 1)):
        out.write(f"│ {' ' * LABEL} ┆ {out.styled(piece, 'italic dim')}")


def end(out: Lines, style: str = "") -> None:
    """A frame's last line, in ``style``."""
    out.write(out.styled("╰" + "─" * (out.width - 1), style))
