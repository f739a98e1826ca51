"""``compile --format html``: one self-contained page showing a request's anatomy.

Contracts:

- ``request_page(report, measured)`` is a complete HTML5 document; ``request_body(report,
  measured)`` is the part a notebook shows (``CompiledChatRequest._repr_html_``), the page's
  ``<body>`` content exactly. Both are pure functions of their arguments.
- The page loads nothing: no script, no stylesheet link, no font, no image; its CSS is inline
  (scoped under ``.lt-request``), and it runs no JavaScript (every message is a ``<details>``
  element, expandable without script).
- Every text that comes from the input (message text, path, instruction, names, reasons) is
  HTML-escaped (``html.escape``, quotes included), so no stored text becomes markup. Each
  shown message's exact text (``_compile.text_of``: its text parts, one per line) is in its
  ``<pre class="text">``, not shortened, inside a ``<details>`` anchored ``id="mK"``.
- Summary first (``_html_summary``): the sections bar and table, the current turn, the
  largest messages linked, the fold, segments, bounds (what was left out and why) and
  ceiling; then the messages, as ``_window.select`` chooses them: ``--last N``, ``--around
  K``, else all of a request of at most ``PAGE`` messages or its last ``PAGE``; the page says
  how many it leaves out and how to show them. Every system block is always shown.
- Bars: the sections bar has one segment per section with tokens (never drawn narrower than a
  visible minimum; its true share in its title and in the table), and each message (and, in the
  prompt-cache profile, each system block) a bar of its share of the request's tokens, split
  in turn by the sections it holds (coloured as in the sections bar). Widths are percentages
  with two decimals, apportioned by largest remainder so that the sections' widths, the rows'
  widths, and each row's parts each sum to exactly 100.00 (when there are any tokens).
- The page shows the profile's extras when the report has them: the fold (``fold``), the
  prompt-cache segments and marks (``segments``, ``marks``, ``system``), and Amendment 1's
  bounds with what was left out and why (``bounds``).
"""

from __future__ import annotations

import html
import sys
from collections.abc import Sequence

from lionagi_turns.cli._compile import text_of
from lionagi_turns.cli._html_summary import ceiling, current_turn, largest, row_id, window_note
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._sections import SECTION_NAMES, Measured, count_tokens, measure
from lionagi_turns.cli._window import PAGE, Paging, Window, select
from lionagi_turns.core.contracts import CompiledChatRequest
from lionagi_turns.core.providers import to_provider_messages
from lionagi_turns.profiles.amendment1._ceiling import CEILING_KEY
from lionagi_turns.profiles.amendment1._contracts import CompiledChatRequest as AmendedRequest
from lionagi_turns.profiles.amendment1._report import bounds_rows

__all__ = ("compiled_body", "print_html", "request_body", "request_page", "widths")

_CSS = """
.lt-request{font:14px/1.45 system-ui,sans-serif;color:#1d2330;max-width:72rem}
.lt-request h1{font-size:1.25rem;margin:.2rem 0}
.lt-request h2{font-size:1.05rem;margin:1.2rem 0 .4rem}
.lt-request .facts{color:#4a5263;margin:.2rem 0}
.lt-request table{border-collapse:collapse;margin:.3rem 0}
.lt-request td,.lt-request th{padding:.15rem .6rem;text-align:left;border-bottom:1px solid #e3e6ec}
.lt-request td.n{text-align:right;font-variant-numeric:tabular-nums}
.lt-request .stack{display:flex;height:1.1rem;border:1px solid #c9ced8;margin:.4rem 0}
.lt-request .seg{min-width:.6rem;flex-shrink:1}.lt-request .row-bar{min-width:2px}
.lt-request .off,.lt-request .window{color:#6b7385}
.lt-request blockquote.preview{white-space:pre-wrap;margin:.3rem 0;padding:.3rem .6rem;
border-left:3px solid #d56a5b;background:#f7f8fa}
.lt-request .bar{display:inline-flex;height:.7rem;vertical-align:middle}
.lt-request .part{display:inline-block;height:100%}
.lt-request .key{display:inline-block;width:.7rem;height:.7rem;margin-right:.35rem}
.lt-request .track{display:inline-block;width:12rem;background:#eef0f4;vertical-align:middle}
.lt-request .s-system{background:#a05bd5}.lt-request .s-tools{background:#7f8796}
.lt-request .s-context_blocks{background:#2aa1b3}.lt-request .s-guidance{background:#d5a22a}
.lt-request .s-history{background:#5b7bd5}.lt-request .s-current_turn{background:#d56a5b}
.lt-request details{border:1px solid #dde1e8;border-radius:4px;margin:.25rem 0;padding:.2rem .5rem}
.lt-request summary{cursor:pointer}
.lt-request pre.text{white-space:pre-wrap;word-break:break-word;background:#f7f8fa;
padding:.4rem;margin:.3rem 0;font:12.5px/1.4 ui-monospace,monospace}
.lt-request .mark{background:#ffe7a3;border-radius:3px;padding:0 .3rem;margin-left:.4rem}
.lt-request .fold{background:#e8dcf7;border-radius:3px;padding:0 .3rem;margin-left:.4rem}
.lt-request .left{color:#9a3b2f}
.lt-request .images{display:flex;flex-wrap:wrap;gap:.5rem;margin:.3rem 0}
.lt-request img.thumb{max-width:10rem;max-height:7.5rem;border:1px solid #c9ced8}
.lt-request .remote{font:12.5px ui-monospace,monospace;word-break:break-all}
"""


def widths(values: Sequence[int]) -> list[float]:
    """Each value's share of their sum as a percentage with two decimals, by largest
    remainder: the result sums to exactly 100.00 when the sum is positive, else all 0.0."""
    total = sum(values)
    if total <= 0:
        return [0.0 for _ in values]
    exact = [v * 10_000 / total for v in values]
    floors = [int(x) for x in exact]
    short = 10_000 - sum(floors)
    for k in sorted(range(len(values)), key=lambda k: floors[k] - exact[k])[:short]:
        floors[k] += 1
    return [f / 100 for f in floors]


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _header(report: JsonObject) -> list[str]:
    path = report.get("path")
    title = "lionagi-turns compile" + (f" {path}" if path else "")
    out = [f"<h1>{_e(title)}</h1>"]
    facts = [f"profile: {report.get('profile', 'default')}"]
    if report.get("instruction") is not None:
        placeholder = " (placeholder)" if report.get("instruction_is_placeholder") else ""
        facts.append(f"instruction: {report['instruction']}{placeholder}")
    if report.get("context_blocks"):
        facts.append("context blocks: " + ", ".join(report["context_blocks"]))
    at = report.get("at")
    if at is not None:
        facts.append(f"rebuilt: instruction {at['instruction']} of {at['of']}")
    facts.append(f"{len(report['messages'])} message(s)")
    out.append(f'<p class="facts">{_e(" · ".join(facts))}</p>')
    return out


def _sections(measured: Measured) -> list[str]:
    rows = measured.sections
    names = [n for n in SECTION_NAMES if rows[n]["tokens"]]
    shares = dict(zip(names, widths([rows[n]["tokens"] for n in names]), strict=True))
    out = ['<h2>Sections</h2><div class="stack">']
    out += [
        f'<span class="seg s-{n}" data-section="{n}" style="width:{shares[n]:.2f}%" '
        f'title="{n}: {rows[n]["tokens"]:,} tokens, {_share(shares[n], rows[n])}%"></span>'
        for n in names
    ]
    out.append('</div><table class="sections"><tr><th>section</th><th>characters</th>'
               "<th>tokens</th><th>share</th></tr>")
    for n in (*SECTION_NAMES, "total"):
        share = "100.00" if n == "total" and names else _share(shares.get(n, 0.0), rows[n])
        out.append(
            f'<tr data-section="{n}"><td>{_key(n)}{n}</td>'
            f'<td class="n">{rows[n]["characters"]:,}</td>'
            f'<td class="n">{rows[n]["tokens"]:,}</td><td class="n">{share}%</td></tr>'
        )
    out.append("</table><p class=\"facts\">tokens: o200k_base, counted offline, each "
               "section's own text on its own</p>")
    return out


def _share(width: float, row: JsonObject) -> str:
    """A section's share as the page shows it (HTML): ``&lt;0.01`` for a section with tokens
    too few to reach 0.01%, never a 0.00 that reads as empty."""
    return "&lt;0.01" if row["tokens"] and width == 0.0 else f"{width:.2f}"


def _key(name: str) -> str:
    """The colour key of a section's row in the table (none for the total)."""
    return "" if name == "total" else f'<span class="key s-{name}"></span>'


def _fold(report: JsonObject) -> list[str]:
    if "fold" not in report:
        return ['<h2>Fold</h2><p class="fold-none">the fold plan is not recorded on a compiled '
                "request (lionagi-turns compile BRANCH --format html shows it)</p>"]
    fold = report["fold"]
    if not fold or fold.get("message_index") is None:
        return ['<h2>Fold</h2><p class="fold-none">no fold: nothing is folded into a message</p>']
    parts = " + ".join(fold["sections"]) or "none"
    return [
        f'<h2>Fold</h2><p class="fold-info">messages[{fold["message_index"]}] carries the fold: '
        f"{_e(parts)} (encoding {_e(fold['encoding'])})</p>"
    ]


def _bounds(report: JsonObject) -> list[str]:
    if "bounds" not in report:
        return []
    out = ['<h2>Amendment 1 sections</h2><table class="bounds"><tr><th>section</th>'
           "<th>authority</th><th>posture</th><th>budget</th><th>kept</th><th>left out</th></tr>"]
    for row in report["bounds"]:
        budget = "unbounded" if row["budget"] is None else f"{row['budget']:,} tokens"
        left = "".join(
            f'<li class="left">{_e(e["name"])}: {_e(e["reason"])}{_tokens(e["tokens"])}</li>'
            for e in row["left_out"]
        )
        out.append(
            f"<tr><td>{_e(row['section'])}</td><td>{_e(row['authority'])}</td>"
            f"<td>{_e(row['posture'])}</td><td>{_e(budget)}</td><td class=\"n\">"
            f"{len(row['kept'])}</td><td>{_left_out(row['left_out'], left)}</td></tr>"
        )
    out.append("</table>")
    return out


def _left_out(entries: list[JsonObject], items: str) -> str:
    """What a section left out: none, or how many and why, expandable to each record."""
    if not entries:
        return "none"
    reasons: dict[str, int] = {}
    for entry in entries:
        reasons[entry["reason"]] = reasons.get(entry["reason"], 0) + 1
    why = ", ".join(f"{n:,} {_e(reason)}" for reason, n in reasons.items())
    return f'<details class="left-out"><summary>{len(entries):,} left out: {why}</summary>' \
        f"<ul>{items}</ul></details>"


def _segments(report: JsonObject) -> list[str]:
    if "segments" not in report:
        return []
    segments = report["segments"]
    out = ['<h2>Prompt-cache segments</h2><table class="segments"><tr><th>segment</th>'
           "<th>blocks</th><th>characters</th><th>tokens</th></tr>"]
    for name in ("stable", "conversation"):
        s = segments[name]
        out.append(f"<tr><td>{name}</td><td class=\"n\">{s['blocks']}</td><td class=\"n\">"
                   f"{s['characters']:,}</td><td class=\"n\">{s['tokens']:,}</td></tr>")
    out.append(f"<tr><td>turn</td><td colspan=\"3\">{_e(_turn(segments['turn']))}</td></tr>"
               "</table>")
    marks = "".join(f"<li>{_e(m['at'])}: {_e(m['ttl'])} ({_e(m['segment'])})</li>"
                    for m in report["marks"])
    changed = [k for k, v in report["changes"].items() if v]
    out.append(f'<p>marks:</p><ul class="marks">{marks or "<li>none</li>"}</ul>')
    out.append(f"<p>changes against the previous recorded request: "
               f"{_e(', '.join(changed) or 'none')}</p>")
    return out


def _turn(turn: JsonObject) -> str:
    """The turn segment in words: its messages and where the previous recorded request ended."""
    end = turn.get("previous_request_end")
    previous = ("no previous request recorded" if end is None
                else f"the previous recorded request ended at {end}")
    return f"{turn['messages']:,} message(s); {previous}"


def _tokens(tokens: int | None) -> str:
    return "" if tokens is None else f" ({tokens:,} tokens)"


def _rows(report: JsonObject, measured: Measured) -> list[JsonObject]:
    """One row per system block (prompt-cache) and message: label, tokens, exact text."""
    rows: list[JsonObject] = []
    stable = report.get("segments", {}).get("stable", {}).get("blocks", 0)
    for i, block in enumerate(report.get("system", [])):
        text = str(block.get("text", ""))
        kind = "stable" if i < stable else "conversation"
        name = "context_blocks" if i >= stable else ("system" if i == 0 else "tools")
        tokens = count_tokens(text)
        rows.append({"at": f"system[{i}]", "label": f"system[{i}] · {kind} segment",
                     "tokens": tokens, "text": text, "images": 0, "tags": [],
                     "counts": {name: tokens}})
    fold = (report.get("fold") or {}).get("message_index")
    messages = report["messages"]
    for i, message in enumerate(messages):
        text, images = text_of(message["content"])
        size = measured.messages[i]
        tags = [size.section.replace("_", " ")]
        if i == fold:
            tags.append("fold: " + " + ".join(report["fold"]["sections"]))
        rows.append({"at": f"messages[{i}]", "label": f"messages[{i}] · {message['role']}",
                     "tokens": size.tokens, "text": text, "images": images, "tags": tags,
                     "counts": size.counts, "shown": _images(message["content"])})
    return rows


def _row_marks(report: JsonObject, at: str) -> list[JsonObject]:
    return [m for m in report.get("marks", []) if m["at"] == at or m["at"].startswith(at + ".")]


def _shown(rows: list[JsonObject], window: Window) -> list[int]:
    """The rows the page shows: every system block, then the window's messages."""
    blocks = [k for k, r in enumerate(rows) if not r["at"].startswith("messages[")]
    return blocks + [len(blocks) + i for i in range(window.start, window.stop)]


def _messages(report: JsonObject, rows: list[JsonObject], window: Window) -> list[str]:
    shares = widths([r["tokens"] for r in rows])
    out = ["<h2>Messages</h2>", window_note(window)]
    for k in _shown(rows, window):
        row, share = rows[k], shares[k]
        tags = "".join(
            f'<span class="fold">{_e(t)}</span>' if t.startswith("fold") else f" · {_e(t)}"
            for t in row["tags"]
        )
        marks = "".join(
            f'<span class="mark">cache mark {_e(m["ttl"])} ({_e(m["segment"])})</span>'
            for m in _row_marks(report, row["at"])
        )
        images = f" · {row['images']} image(s)" if row["images"] else ""
        out.append(
            f'<details class="message" id="{row_id(row["at"])}" data-at="{_e(row["at"])}">'
            "<summary>"
            f'<span class="track"><span class="bar row-bar" style="width:{share:.2f}%">'
            f"{_parts(row['counts'])}</span></span> <b>{_e(row['label'])}</b>{tags}{marks} · "
            f"{len(row['text']):,} chars · {row['tokens']:,} tokens ({share:.2f}%){images}"
            f'</summary><pre class="text">{_e(row["text"])}</pre>{row.get("shown", "")}</details>'
        )
    return out


_DATA_IMAGE = "data:image/"


def _images(content: object) -> str:
    """A message's images: an inline ``data:image/`` URL as a small thumbnail (the page still
    loads nothing from outside), any other URL as text, never loaded; each with its detail."""
    if not isinstance(content, list):
        return ""
    shown = []
    for k, part in enumerate(p for p in content if p.get("type") == "image_url"):
        image = part.get("image_url") or {}
        url = str(image.get("url", "")) if isinstance(image, dict) else str(image)
        detail = image.get("detail") if isinstance(image, dict) else None
        caption = f"image {k + 1} · detail: {detail or 'not set (the provider default)'}"
        if url.startswith(_DATA_IMAGE):
            shown.append(f'<figure><img class="thumb" src="{_e(url)}" alt="{_e(caption)}">'
                         f"<figcaption>{_e(caption)}</figcaption></figure>")
        else:
            shown.append(f'<figure><figcaption>{_e(caption)} · remote, not loaded:</figcaption>'
                         f'<span class="remote">{_e(url)}</span></figure>')
    return f'<div class="images">{"".join(shown)}</div>' if shown else ""


def _parts(counts: dict[str, int]) -> str:
    """A message bar's inside: one span per section it holds, its share of the message."""
    names = [n for n in SECTION_NAMES if counts.get(n)]
    return "".join(
        f'<span class="part s-{n}" data-section="{n}" style="width:{w:.2f}%"></span>'
        for n, w in zip(names, widths([counts[n] for n in names]), strict=True)
    )


def request_body(report: JsonObject, measured: Measured, paging: Paging | None = None) -> str:
    """The page's body (see the module contract): one ``<div class="lt-request">`` holding
    its own ``<style>``; ``paging`` chooses the messages shown (``_window.select``, with the
    default window of ``PAGE`` messages)."""
    rows = _rows(report, measured)
    window = select(len(report["messages"]), paging or Paging(), PAGE)
    parts = [f'<div class="lt-request"><style>{_CSS}</style>', *_header(report)]
    parts += _sections(measured)
    parts += current_turn(rows, window)
    parts += largest(rows, window)
    parts += _fold(report)
    parts += _segments(report)
    parts += _bounds(report)
    parts += ceiling(report)
    parts += _messages(report, rows, window)
    parts.append("</div>")
    return "\n".join(parts)


def request_page(report: JsonObject, measured: Measured, paging: Paging | None = None) -> str:
    """The complete page (see the module contract), its messages as ``paging`` selects."""
    title = _e("lionagi-turns compile " + str(report.get("path") or ""))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title></head><body>\n{request_body(report, measured, paging)}\n"
        "</body></html>\n"
    )


def compiled_body(request: CompiledChatRequest | AmendedRequest) -> str:
    """``request_body`` of a compiled request alone: its messages, sections and bars, and for
    Amendment 1's its bounds and the ceiling record its instruction carries; it carries no
    path or fold plan, so the fold counts in its message."""
    messages = to_provider_messages(request)  # type: ignore[arg-type]  # reads .messages only
    measured = measure(messages, None, ())
    report: JsonObject = {"profile": "default", "messages": messages,
                          "sections": measured.sections}
    if isinstance(request, AmendedRequest):
        report["profile"] = "amendment1"
        report["bounds"] = bounds_rows(request)
        record = request.instruction.metadata.get(CEILING_KEY)
        if isinstance(record, dict):
            report["ceiling"] = dict(record)
    return request_body(report, measured)


def print_html(report: JsonObject, measured: Measured, paging: Paging | None = None) -> None:
    """``request_page`` on standard output, as UTF-8 whatever the locale (a lone surrogate,
    which UTF-8 cannot carry, is written as its character reference)."""
    data = request_page(report, measured, paging).encode("utf-8", "xmlcharrefreplace")
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        sys.stdout.write(data.decode("utf-8"))
        return
    sys.stdout.flush()
    buffer.write(data)
    buffer.flush()
