"""``compile --profile amendment1``: the next turn under ADR-0007 Amendment 1, with each
section's authority, posture, budget, kept and left-out; and ``check``'s view exclusions.

- ``parse_budgets(values)``: ``SECTION=N`` options (N tokens, o200k) as ``SectionBudgets``;
  ValueError names the bad option.
- ``amended_turn(loaded, instruction, blocks, budgets)``: ``{"path", "profile", "instruction",
  "instruction_is_placeholder", "messages", "bounds"}``; a refused section (exit 1) reports
  its bound records in the error line.
- ``render_amended(console, report)``: a section table, then each message's text (inert).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..amendment1 import SectionBudgets, bounds_rows, compile_report, exclusions_rows
from ..amendment1._contracts import SECTIONS
from ._compile import text_of
from ._inputs import DEFAULT_INSTRUCTION
from ._load import LoadedBranch
from ._views import bounded_rows, inert_text

__all__ = (
    "amended_turn",
    "exclusions_rows",
    "parse_budgets",
    "refused_summary",
    "render_amended",
    "render_exclusions",
)


def parse_budgets(values: Sequence[str]) -> SectionBudgets:
    budgets: dict[str, int] = {}
    for i, value in enumerate(values):
        name, sep, number = value.partition("=")
        name = name.strip()
        if not sep or name not in SECTIONS or not number.strip().isdigit():
            raise ValueError(
                f"--budget #{i + 1} {value[:60]!r} is not SECTION=N with SECTION one of "
                f"{', '.join(SECTIONS)} and N a whole number of tokens"
            )
        budgets[name] = int(number)
    return SectionBudgets(**budgets)


def amended_turn(
    loaded: LoadedBranch,
    instruction: str | None,
    blocks: Sequence[Any],
    budgets: SectionBudgets,
) -> dict[str, Any]:
    text = DEFAULT_INSTRUCTION if instruction is None else instruction
    report = compile_report(
        loaded.branch, text, [(b.provider_name, b.content) for b in blocks], budgets
    )
    return {
        "path": loaded.path,
        "profile": "amendment1",
        "instruction": text,
        "instruction_is_placeholder": instruction is None,
        **report,
    }


def refused_summary(exc: Any) -> str:
    """The refused sections of a ``SectionBudgetRefused`` and every record, one line."""
    parts = [
        f"{r['section']}({r['authority']}, {r['posture']}, budget {r['budget']}, "
        f"kept {len(r['kept'])}, left out {len(r['left_out'])})"
        for r in bounds_rows(exc)
    ]
    return "; ".join(parts)


def _left(row: dict[str, Any]) -> str:
    if not row["left_out"]:
        return "—"
    counts: dict[str, int] = {}
    for entry in row["left_out"]:
        counts[entry["reason"]] = counts.get(entry["reason"], 0) + 1
    return ", ".join(f"{n} {reason}" for reason, n in counts.items())


def render_amended(console: Console, report: dict[str, Any]) -> None:
    table = Table(title="Sections (ADR-0007 Amendment 1)", title_justify="left",
                  show_edge=False, pad_edge=False)
    for column in ("section", "authority", "posture", "budget", "kept", "left out"):
        table.add_column(column)
    for row in report["bounds"]:
        table.add_row(
            row["section"], row["authority"], row["posture"],
            "unbounded" if row["budget"] is None else f"{row['budget']} tokens",
            str(len(row["kept"])), _left(row),
        )
    console.print(table)
    for row in report["bounds"]:
        for entry in row["left_out"]:
            tokens = "" if entry["tokens"] is None else f" ({entry['tokens']} tokens)"
            console.print(inert_text(
                f"  {row['section']}: left out {entry['name']} [{entry['reason']}]{tokens}", "dim"
            ))
    for i, message in enumerate(report["messages"]):
        text = text_of(message["content"])[0]
        console.print(Text(f"[{i}] {message['role']}", style="bold"))
        lines = text.split("\n")
        for row in bounded_rows(lines):
            console.print(inert_text(row.text))


def render_exclusions(console: Console, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    console.print(Text(
        f"view exclusions ({len(rows)}): records the active view leaves out "
        "(history left_out under the amendment1 profile)", style="yellow",
    ))
    table = Table(show_edge=False, pad_edge=False)
    for column in ("id", "record", "reason", "source"):
        table.add_column(column)
    for row in rows:
        table.add_row(row["id"], row["kind"], row["reason"],
                      "recorded" if row["recorded"] else "unrecorded (read as evicted)")
    console.print(table)
