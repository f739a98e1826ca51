"""The summary that heads ``compile --format html``'s page, before its messages: the current
turn, the largest messages linked to their rows, and which messages the page leaves out.

Contracts:

- Pure functions of their arguments returning HTML fragments; every input text is escaped.
- A row is linked (``<a href="#ID">``, ``row_id``) only when the page shows it; a row the
  window leaves out names the ``--around K`` that shows it instead.
- The current turn is shown as its first ``PREVIEW`` characters and how many more there are;
  its exact text is in its message row (always on the page: every window ends at or moves
  with ``--last``/``--around``, and the default one ends at the last message).
"""

from __future__ import annotations

import html

from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._window import Window

__all__ = ("LARGEST", "PREVIEW", "ceiling", "current_turn", "largest", "row_id", "window_note")

#: How many of the largest messages the summary lists.
LARGEST = 20
#: The characters of the current turn the summary previews.
PREVIEW = 300


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def row_id(at: str) -> str:
    """The anchor of a row: ``messages[3]`` is ``m3``, ``system[0]`` is ``s0``."""
    name, _, rest = at.partition("[")
    return ("m" if name == "messages" else "s") + rest.rstrip("]")


def _index(at: str) -> int | None:
    return int(at[len("messages["):-1]) if at.startswith("messages[") else None


def _link(row: JsonObject, window: Window) -> str:
    index = _index(row["at"])
    if index is None or window.start <= index < window.stop:
        return f'<a href="#{row_id(row["at"])}">{_e(row["at"])}</a>'
    return f'{_e(row["at"])} <span class="off">(not on this page: --around {index})</span>'


def current_turn(rows: list[JsonObject], window: Window) -> list[str]:
    """The last message: its role, size, a preview and a link to its exact text."""
    if not rows or _index(rows[-1]["at"]) is None:
        return []
    row = rows[-1]
    text = row["text"]
    more = len(text) - PREVIEW
    preview = _e(text[:PREVIEW]) + (f' <span class="off">… {more:,} more character(s) in the '
                                     "message</span>" if more > 0 else "")
    return [f'<h2>Current turn</h2><p class="current">{_link(row, window)} · '
            f"{_e(row['label'].split(' · ', 1)[-1])} · {len(text):,} chars · "
            f"{row['tokens']:,} tokens</p>",
            f'<blockquote class="preview">{preview}</blockquote>']


def largest(rows: list[JsonObject], window: Window) -> list[str]:
    """The ``LARGEST`` rows with the most tokens, largest first (ties: in order)."""
    ranked = sorted(range(len(rows)), key=lambda k: -rows[k]["tokens"])[:LARGEST]
    if not ranked:
        return []
    items = "".join(f"<li>{_link(rows[k], window)} · {_e(rows[k]['label'].split(' · ', 1)[-1])}"
                    f" · {rows[k]['tokens']:,} tokens</li>" for k in ranked)
    return [f"<h2>Largest {len(ranked):,}</h2><ol class=\"largest\">{items}</ol>"]


def window_note(window: Window) -> str:
    """The line under the messages' heading: what the page leaves out and how to see it."""
    if not window.hidden:
        return f'<p class="window">all {window.count:,} message(s) are on this page</p>'
    return f'<p class="window">{_e(window.note())}</p>'


def ceiling(report: JsonObject) -> list[str]:
    """``--ceiling``'s report, as the text view gives it: the ceiling and low-water mark, how
    full each section is, the truncation point, whether this request steps, the turns left."""
    if "ceiling" not in report:
        return []
    record = report["ceiling"]
    used, tokens = record["used"], record["ceiling"]
    out = [f'<h2>Input ceiling</h2><p class="ceiling">ceiling {tokens:,} tokens, low-water '
           f"mark {record['low_water']:,} tokens: {used:,} tokens used, "
           f"{used * 100 // tokens}% full</p>",
           '<table class="ceiling"><tr><th>section</th><th>tokens</th><th>share</th></tr>']
    out += [f'<tr><td>{_e(name)}</td><td class="n">{size:,}</td>'
            f'<td class="n">{size * 100 // tokens}%</td></tr>'
            for name, size in record["sections"].items()]
    out.append("</table>")
    if record["kept_turns"]:
        first = record["first"] or "the first turn (nothing dropped yet)"
        point = f"truncation point: the first kept turn is {first}"
    else:
        point = "truncation point: no turn is kept"
    step = "this request is a drop step" if record["stepped"] else "no drop step this request"
    left = record["turns_before_next_step"]
    typical = record["typical_turn"]
    kept = f"{record['kept_turns']:,} turn(s) kept" + (
        f", typical {typical:,} tokens" if typical is not None else "")
    fit = (f"{left:,} more turn(s) of that size fit before the next drop step"
           if left is not None else "no kept turn to size the next step by")
    from lionagi_turns.cli._amendment1 import calibration_line

    calibration = calibration_line(record.get("calibration"))
    cleared = (f"<li>{len(record['cleared']):,} older tool result(s) cleared, "
               f"{record['cleared_tokens']:,} tokens (listed as cleared)</li>"
               if "cleared" in record else "")
    summary = report.get("summary")
    summarized = ("<li>the turns before the first kept turn are sent as their recorded "
                  "summary (listed as summarized)</li>" if record.get("summarized") else "")
    if summary is not None:
        by = f"model {summary['model']}" if summary["model"] else "a callable"
        summarized = (f"<li>summary (tier 3): drop step {summary['step']:,}, stands for "
                      f"{len(summary['covers']):,} record(s) (listed as summarized), adds "
                      f"{(summary['tokens'] or {}).get('summary', 0):,} tokens; written by "
                      f"{_e(by)}</li>")
    out.append(f'<ul class="ceiling"><li>{_e(point)}; {step}</li>'
               f"<li>{_e(kept)}; {_e(fit)}</li>{cleared}{summarized}"
               f"<li>{_e(calibration)}</li></ul>")
    return out
