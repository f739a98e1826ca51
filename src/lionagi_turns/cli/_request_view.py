"""The one text view of a request: every ``compile`` profile's, and a captured call's.

Contract of ``render_request(console, view, last)``:

- The rule over the view (``_frame.header``, ``view.title``), then ``view.preamble`` (the
  facts and tables the profile shows before the messages).
- Each of ``view.blocks`` (the payload's system blocks; always shown), then each message
  ``shown_range`` selects (``--last N``, ``--around K``: a line says what is left out), as one
  ``Framed`` in the frame of ``_frame``: its top line (index, role, tags, size), one row per
  line of its text (bounded as ``_views.bounded_rows`` bounds a body; a line in the fold
  labelled with its part), one ``image`` row per image, then its facts, one labelled row each
  (a profile's own: a cache mark, ...). Every profile frames the same way; only facts differ.
- ``view.after``, then the sections table (``_sections_table.render_sections``).
- No line is wider than the console (80 columns in a pipe); a preview that shortens a text
  says how many characters it leaves out (``_wrap.preview``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from rich.console import Console

from lionagi_turns.cli import _frame
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._lines import Lines
from lionagi_turns.cli._sections_table import render_sections
from lionagi_turns.cli._views import bounded_rows
from lionagi_turns.cli._window import Paging, select
from lionagi_turns.cli._wrap import fit, preview
from lionagi_turns.core.sections import Measured, MessageSize, fold_labels, text_parts

__all__ = (
    "Framed",
    "RequestView",
    "message_frame",
    "render_request",
    "shown_from",
    "shown_range",
    "size_note",
    "write_note",
)

_STYLES = {
    "system": "bold magenta",
    "context": "bold cyan",
    "guidance": "bold yellow",
    "image": "green",
}
# The fold's parts in words, for the tag of the message that carries them.
FOLD_WORDS = {"system": "system text", "context": "context blocks", "guidance": "guidance"}
_URL_PREVIEW = 48


@dataclass(frozen=True, slots=True)
class Framed:
    """One framed part of a request: ``head`` (``[3]``, ``system[0]``), ``role`` (input text),
    ``tags``, ``size``, the ``content`` sent (text or parts), ``labels`` (line index -> fold
    part), ``facts`` (label, text) rows after the body, and the frame's ``border`` style."""

    head: str
    role: str
    tags: str
    size: str
    content: object
    labels: Mapping[int, str] = field(default_factory=dict)
    facts: Sequence[tuple[str, str]] = ()
    border: str = ""


def _nothing(console: Console) -> None:
    return None


@dataclass(frozen=True, slots=True)
class RequestView:
    """What ``render_request`` shows (module contract): ``message(i)`` frames message ``i``."""

    title: str
    report: JsonObject
    measured: Measured
    notes: dict[str, str]
    message: Callable[[int], Framed]
    blocks: Sequence[Framed] = ()
    preamble: Callable[[Console], None] = _nothing
    after: Callable[[Console], None] = _nothing


def size_note(size: MessageSize) -> str:
    note = f"{size.characters:,} chars · {size.tokens:,} tokens"
    if size.images:
        note += f" · {size.images} image(s)"
    return note


def write_note(out: Lines, text: str) -> None:
    """``text`` in italic dim, wrapped to the width (a view's note outside any frame)."""
    for piece in fit(text, out.width):
        out.write(out.styled(piece, "italic dim"))


def shown_from(out: Lines, count: int, last: int | None) -> int:
    """The index of the first of ``count`` messages ``--last`` shows; writes the line saying
    how many it leaves out when it leaves any out."""
    if last is None or last >= count:
        return 0
    left_out = count - last
    write_note(out, f"… {left_out:,} earlier message(s) of {count:,} not shown (--last {last}); "
               "--format json prints them all")
    return left_out


def shown_range(out: Lines, count: int, last: int | Paging | None) -> range:
    """The indexes of the messages a text view shows: ``--last N`` as ``shown_from``, or
    ``--around K``'s window (``_window.select``), with a line saying what is left out."""
    if not isinstance(last, Paging):
        return range(shown_from(out, count, last), count)
    if last.around is None:
        return range(shown_from(out, count, last.last), count)
    window = select(count, last)
    if window.hidden:
        write_note(out, f"… {window.note()}")
    return range(window.start, window.stop)


def _tags(i: int, report: JsonObject) -> str:
    """Where message ``i`` stands: the fold it carries, history or the current turn."""
    fold = report.get("fold") or {}
    tags = []
    if fold.get("sections") and fold.get("message_index") == i:
        tags.append("carries " + " + ".join(FOLD_WORDS[s] for s in fold["sections"]))
    if i != len(report["messages"]) - 1:
        tags.append("history")
    elif report.get("instruction_is_placeholder"):
        tags.append("current turn (placeholder; pass --instruction TEXT)")
    elif report.get("at") is not None:
        tags.append(f"current turn (instruction {report['at']['instruction']}, rebuilt)")
    else:
        tags.append("current turn")
    return " · ".join(tags)


def message_frame(
    i: int, report: JsonObject, measured: Measured, facts: Sequence[tuple[str, str]] = ()
) -> Framed:
    """Message ``i`` of ``report`` framed: its place, its size, the fold's lines labelled
    (as ``measured`` located them), then ``facts``."""
    message = report["messages"][i]
    current = i == len(report["messages"]) - 1
    labels: Mapping[int, str] = {}
    if i == measured.fold_index and measured.fold_parts:
        lines = "\n".join(text_parts(message["content"])[0]).split("\n")
        labels = fold_labels(lines, measured.fold_parts) or {}
    border = "yellow" if current else ("blue" if message["role"] == "user" else "green")
    return Framed(f"[{i}]", str(message["role"]), _tags(i, report),
                  size_note(measured.messages[i]), message["content"], labels, facts, border)


def _frame_body(out: Lines, framed: Framed) -> None:
    texts, _ = text_parts(framed.content)
    for line in bounded_rows("\n".join(texts).split("\n")):
        if line.index is None:
            _frame.marker(out, line.text)
            continue
        label = framed.labels.get(line.index, "")
        style = _STYLES[label] if label == "context" else ""
        _frame.row(out, label, line.text, style, _STYLES.get(label, ""))
    if isinstance(framed.content, list):
        images = [p for p in framed.content if p.get("type") == "image_url"]
        for n, part in enumerate(images, 1):
            url = str(part.get("image_url", {}).get("url", ""))
            detail = part.get("image_url", {}).get("detail")
            note = f"[image {n}] {preview(url, _URL_PREVIEW)} ({len(url):,} chars, detail={detail})"
            _frame.row(out, "image", note, "green", "green")


def write_frame(out: Lines, framed: Framed) -> None:
    """``framed`` in the one frame (module contract)."""
    _frame.top(out, framed.head, framed.role, framed.tags, framed.size, framed.border)
    _frame_body(out, framed)
    for label, text in framed.facts:
        _frame.row(out, label, text, "", "bold")
    _frame.end(out, framed.border)


def render_request(console: Console, view: RequestView, last: int | Paging | None = None) -> None:
    """The text view of a request (module contract)."""
    out = Lines(console)
    _frame.header(out, view.title)
    out.flush()
    view.preamble(console)
    for block in view.blocks:
        write_frame(out, block)
    for i in shown_range(out, len(view.report["messages"]), last):
        write_frame(out, view.message(i))
    out.flush()
    view.after(console)
    render_sections(console, view.report, view.measured, view.notes)
