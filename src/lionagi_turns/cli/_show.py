"""``lionagi-turns show CAPTURE.jsonl [--call N] [--format text|json|html]``: the calls a
capture file recorded (``lionagi-turns/capture@1``, ``schema/capture.schema.json``).

Contract:

- ``read_captures(path, max_bytes)`` is the file's lines as objects, in order; it exits 2 with
  one line naming the file and the line number for a line that is not JSON or not a capture
  line, and as any command does for an unreadable or oversized file.
- ``chosen(calls, n, path)`` is call ``n`` (1-based); exits 2 naming the range when out of it.
- Without ``--call``: one row per call (number, time, branch, model, each section's tokens as
  ``compile`` measures them, records left out, cache read and write tokens); ``--format json``
  prints ``{"schema": "lionagi-turns/show@1", "calls": [...rows]}``.
- With ``--call N``: that call as ``compile`` shows a request (the same message frames and
  sections table; ``--format html`` the same page); ``--format json`` prints the line itself.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console

from lionagi_turns.cli._inputs import EXIT_BAD_INPUT, die
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._load import BranchLoadError
from lionagi_turns.cli._read import read_branch_file
from lionagi_turns.cli._request_view import RequestView, message_frame, render_request
from lionagi_turns.cli._sections import SECTION_NAMES, Measured, measure
from lionagi_turns.cli._tables import add_column, view_table
from lionagi_turns.cli._views import inert_text

__all__ = ("CAPTURE_SCHEMA", "call_report", "chosen", "list_report", "read_captures",
           "render_call", "render_list")

CAPTURE_SCHEMA = "lionagi-turns/capture@1"


def read_captures(path: str, max_bytes: int) -> list[JsonObject]:
    """The capture lines of ``path`` (see the module contract)."""
    try:
        raw = read_branch_file(path, max_bytes)
    except BranchLoadError as exc:
        die(EXIT_BAD_INPUT, str(exc))
    calls: list[JsonObject] = []
    for number, line in enumerate(raw.decode("utf-8", "replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            die(EXIT_BAD_INPUT, f"{path}: line {number} is not JSON ({exc.msg}); "
                "it is not a capture line")
        if not isinstance(value, dict) or value.get("schema") != CAPTURE_SCHEMA:
            die(EXIT_BAD_INPUT, f"{path}: line {number} is not a {CAPTURE_SCHEMA} line")
        if not isinstance(value.get("messages"), list):
            die(EXIT_BAD_INPUT, f"{path}: line {number} has no messages list")
        calls.append(value)
    return calls


def chosen(calls: list[JsonObject], n: int, path: str) -> JsonObject:
    """Call ``n`` (1-based) of ``calls``; exit 2 naming the range when out of it."""
    if not 1 <= n <= len(calls):
        span = f"1..{len(calls)}" if calls else "none: the file has no call"
        die(EXIT_BAD_INPUT, f"bad option: --call {n} is out of range for {path} ({span})")
    return calls[n - 1]


def _measured(call: JsonObject) -> Measured:
    return measure(call["messages"], None, ())


def list_report(calls: list[JsonObject]) -> JsonObject:
    """The ``show --format json`` object without ``--call``."""
    rows = []
    for n, call in enumerate(calls, 1):
        usage = call.get("usage") or {}
        sections = _measured(call).sections
        rows.append({
            "call": n,
            "time": call.get("time"),
            "branch": call.get("branch"),
            "model": call.get("model"),
            "profile": call.get("profile"),
            "tokens": {name: sections[name]["tokens"] for name in (*SECTION_NAMES, "total")},
            "left_out": call.get("left_out", 0),
            "cache_read_tokens": usage.get("cache_read_tokens"),
            "cache_write_tokens": usage.get("cache_write_tokens"),
            "outcome": call.get("outcome"),
        })
    return {"schema": "lionagi-turns/show@1", "calls": rows}


def render_list(console: Console, report: JsonObject) -> None:
    """One table row per call (see the module contract)."""
    table = view_table("Captured calls")
    for name in ("#", "time", "branch", "model", "tokens", "left out", "cache r/w", "outcome"):
        add_column(table, name, "right" if name in ("#", "tokens") else "left")
    for row in report["calls"]:
        read, write = row["cache_read_tokens"], row["cache_write_tokens"]
        cache = "-" if read is None and write is None else f"{read or 0:,}/{write or 0:,}"
        table.add_row(
            str(row["call"]), str(row["time"] or "")[:19], str(row["branch"] or "")[:8],
            str(row["model"]), f"{row['tokens']['total']:,}", str(row["left_out"]), cache,
            str(row["outcome"]),
        )
    console.print(table)


def call_report(call: JsonObject, n: int, path: str) -> tuple[JsonObject, Measured]:
    """Call ``n`` as the report ``compile``'s views read, and its measured sections."""
    measured = _measured(call)
    report: dict[str, Any] = {
        "path": f"{path}#{n}",
        "profile": call.get("profile", "default"),
        "messages": call["messages"],
        "sections": measured.sections,
        "instruction_is_placeholder": False,
        "at": None,
    }
    return report, measured


def render_call(console: Console, call: JsonObject, report: JsonObject, measured: Measured) -> None:
    """The text view of one call, ``_request_view``'s one view (as ``compile`` shows a
    request): its facts, each message framed, then the sections table."""

    def preamble(console: Console) -> None:
        usage = call.get("usage") or {}
        facts = [f"branch {call.get('branch')}", f"model {call.get('model')}",
                 f"profile {report['profile']}", f"outcome {call.get('outcome')}"]
        console.print(inert_text(" · ".join(facts)))
        if usage:
            console.print(inert_text("usage: " + ", ".join(f"{k} {v:,}" for k, v in usage.items())))
        if call.get("left_out"):
            console.print(f"left out: {call['left_out']:,} record(s)")
        marks = (call.get("cache") or {}).get("marks") or []
        if marks:
            console.print(inert_text("cache marks: " + ", ".join(marks)))
        console.print()

    view = RequestView(
        f"lionagi-turns show {report['path']}", report, measured,
        dict.fromkeys((*SECTION_NAMES, "total"), ""),
        lambda i: message_frame(i, report, measured), preamble=preamble,
    )
    render_request(console, view)
