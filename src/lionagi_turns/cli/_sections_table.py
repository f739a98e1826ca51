"""The sections table every view of a request ends with (each profile's, a captured call's).

Contract of ``render_sections(console, report, measured, notes)``: one row per section of
``SECTION_NAMES`` then ``total`` (characters, tokens, ``notes[name]`` and the images it
holds), each character counted once and the total the sum of the rows; a line when the fold
was not found line for line; then how tokens are counted. Rich lays the table out within the
console's width (a long note wraps in its column).
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._tables import add_column, view_table
from lionagi_turns.core.measure import ENCODING
from lionagi_turns.core.sections import SECTION_NAMES, Measured

__all__ = ("render_sections",)


def render_sections(
    console: Console, report: JsonObject, measured: Measured, notes: dict[str, str]
) -> None:
    """The sections table (module contract)."""
    table = view_table("Sections")
    add_column(table, "section")
    add_column(table, "characters", "right")
    add_column(table, "tokens", "right")
    add_column(table, "notes")
    for name in (*SECTION_NAMES, "total"):
        size = report["sections"][name]
        extra = f" · {size['images']} image(s)" if size["images"] else ""
        table.add_row(name, f"{size['characters']:,}", f"{size['tokens']:,}", notes[name] + extra)
    console.print(table)
    if not measured.fold_located:
        console.print(
            Text("the fold was not found line for line: its parts count in its message", "yellow")
        )
    console.print(Text(f"tokens: {ENCODING}, counted offline, each section on its own;", "dim"))
    console.print(Text("a provider counting the whole request may differ slightly", "dim"))
