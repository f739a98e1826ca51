"""``lionagi-turns diff A.json B.json``: how the next request differs between two saved branches.

``branch_diff_report`` is pure and returns the ``lionagi-turns/branch-diff@1`` shape: both
branches' next requests compiled with the same instruction and context blocks (the default
profile), ``a`` and ``b`` (each branch's ``path``, ``view``, ``records`` and ``sections``),
``section_changes`` (per section, B minus A in characters, tokens and images), and per message
index its ``status`` (``identical``, ``changed``, ``only_a``, ``only_b``), both roles, the
sections whose text differs (``_sections`` split each message) and the unified diff lines;
``identical`` is True when the two requests' messages are equal. ``render_branch_diff`` is its
text view. Exit 0 when identical, 1 when they differ (as ``diff(1)``).
"""

from __future__ import annotations

import difflib

from rich.console import Console
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from lionagi_turns.cli import _frame as frame
from lionagi_turns.cli._compile import measured_turn
from lionagi_turns.cli._diff import message_lines
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._lines import Lines
from lionagi_turns.cli._load import LoadedBranch
from lionagi_turns.cli._numbers import count
from lionagi_turns.cli._request_view import shown_from
from lionagi_turns.cli._sections import SECTION_NAMES, MessageSize
from lionagi_turns.cli._shape import schema_name
from lionagi_turns.cli._turn import TurnSpec
from lionagi_turns.cli._views import bounded_rows, inert_text
from lionagi_turns.core.version import __version__

__all__ = ("Side", "branch_diff_report", "render_branch_diff", "side")

_KEYS = ("characters", "tokens", "images")

# One branch's report part (path, view, records, sections, messages) and its messages' split.
Side = tuple[JsonObject, list[MessageSize]]


def side(loaded: LoadedBranch, spec: TurnSpec) -> Side:
    """One branch's part of the report and its messages split by section. Raises what the
    compiler raises for a history it rejects."""
    report, _, measured = measured_turn(loaded, spec)
    split = measured.messages
    out = {
        "path": loaded.path,
        "view": loaded.view_name,
        "records": len(loaded.view),
        "sections": report["sections"],
        "messages": report["messages"],
    }
    return out, split


def _changed_sections(a: MessageSize, b: MessageSize) -> list[str]:
    names = [n for n in SECTION_NAMES if a.texts.get(n, []) != b.texts.get(n, [])]
    if a.images != b.images and a.section not in names:
        names.append(a.section)
    return names


def _message(i: int, a: JsonObject | None, b: JsonObject | None,
             split_a: MessageSize | None, split_b: MessageSize | None) -> JsonObject:
    if a is None or b is None:
        status = "only_b" if a is None else "only_a"
        present = split_b if split_a is None else split_a
        assert present is not None
        changed = [n for n in SECTION_NAMES if present.texts.get(n)]
    elif a == b:
        status, changed = "identical", []
    else:
        assert split_a is not None and split_b is not None
        status, changed = "changed", _changed_sections(split_a, split_b)
        if not changed:  # the same texts in other roles or content forms
            changed = [split_a.section]
    diff = [] if status == "identical" else list(difflib.unified_diff(
        message_lines(a), message_lines(b),
        fromfile=f"a/messages[{i}]", tofile=f"b/messages[{i}]", lineterm="",
    ))
    return {
        "index": i,
        "status": status,
        "a_role": None if a is None else a["role"],
        "b_role": None if b is None else b["role"],
        "sections": changed,
        "diff": diff,
    }


def branch_diff_report(a: Side, b: Side, spec: TurnSpec) -> JsonObject:
    """The ``diff A B --format json`` object (module docstring) from both branches' ``side``,
    compiled for the same turn ``spec`` (its instruction text and blocks)."""
    (side_a, split_a), (side_b, split_b) = (dict(a[0]), a[1]), (dict(b[0]), b[1])
    messages_a, messages_b = side_a.pop("messages"), side_b.pop("messages")
    messages = []
    for i in range(max(len(messages_a), len(messages_b))):
        in_a, in_b = i < len(messages_a), i < len(messages_b)
        messages.append(_message(
            i,
            messages_a[i] if in_a else None, messages_b[i] if in_b else None,
            split_a[i] if in_a else None, split_b[i] if in_b else None,
        ))
    changes = {
        name: {k: side_b["sections"][name][k] - side_a["sections"][name][k] for k in _KEYS}
        for name in (*SECTION_NAMES, "total")
    }
    return {
        "schema": schema_name("branch-diff"),
        "version": __version__,
        "a": side_a,
        "b": side_b,
        "instruction": spec.text,
        "instruction_is_placeholder": spec.placeholder,
        "context_blocks": [blk.provider_name for blk in spec.blocks],
        "section_changes": changes,
        "messages": messages,
        "identical": messages_a == messages_b,
    }


def _signed(n: int) -> str:
    return f"{n:+,}" if n else "0"


def render_branch_diff(
    console: Console, report: JsonObject, last: int | None = None
) -> None:
    """The text view: the sections of both requests side by side, then each message that
    differs framed, titled with its roles and the sections that changed (with ``last``, only
    the last ``last`` message indexes, a line saying how many are left out)."""
    a, b = report["a"], report["b"]
    console.print(Rule(Text.assemble(
        ("lionagi-turns diff ", "bold"), inert_text(a["path"]), " ", inert_text(b["path"])
    )))
    console.print(Text.assemble("--- a: ", inert_text(a["path"]), "   +++ b: ",
                                inert_text(b["path"]), " (the next request of each)"))
    table = Table(title="Sections (a → b)", title_justify="left", show_edge=False,
                  pad_edge=False)
    for column in ("section", "a chars", "b chars", "Δ chars", "a tokens", "b tokens", "Δ tokens"):
        table.add_column(column, justify="left" if column == "section" else "right")
    for name in (*SECTION_NAMES, "total"):
        sa, sb = a["sections"][name], b["sections"][name]
        delta = report["section_changes"][name]
        table.add_row(name, f"{sa['characters']:,}", f"{sb['characters']:,}",
                      _signed(delta["characters"]), f"{sa['tokens']:,}", f"{sb['tokens']:,}",
                      _signed(delta["tokens"]))
    console.print(table)
    out = Lines(console)
    messages = report["messages"]
    identical = 0
    for message in messages[shown_from(out, len(messages), last):]:
        i = message["index"]
        role = message["a_role"] or message["b_role"]
        if message["status"] == "identical":
            identical += 1
            continue
        where = {"only_a": "only in a", "only_b": "only in b"}.get(message["status"], "changed")
        # the frame's first line, wrapped when it is wider than the console
        frame.top(out, f"messages[{i}]", f"{role} · {where}: {', '.join(message['sections'])}",
                  "", "", "blue")
        for row in bounded_rows(message["diff"]):
            line = row.text
            style = {"+": "green", "-": "red", "@": "bold"}.get(line[:1], "")
            frame.line(out, line, "italic dim" if row.index is None else style)
        out.end("blue")
    if identical:
        out.write(out.styled(f"{count(identical, 'identical message')}, not shown", "dim"))
    out.flush()
    if report["identical"]:
        console.print(Text("= the two branches send the same next request", style="bold green"))
    else:
        changed = sum(1 for m in report["messages"] if m["status"] != "identical")
        console.print(Text(f"≠ {changed} message(s) differ", style="bold yellow"))
