"""The one table style of the request views (the sections table, Amendment 1's bounds, the
ceiling, the captured calls): a left-aligned title, no outer edge, and columns that fold a
word too long for them onto the next line rather than cut it (Rich's default shortens it
with ``…``), so a table in a narrow console still shows every character of every cell.
"""

from __future__ import annotations

from typing import Literal

from rich.table import Table
from rich.text import Text

__all__ = ("add_column", "view_table")


def view_table(title: str | Text | None = None) -> Table:
    """An empty table in the views' style, titled ``title``."""
    return Table(title=title, title_justify="left", show_edge=False, pad_edge=False)


def add_column(
    table: Table, name: str, justify: Literal["left", "right"] = "left"
) -> None:
    """A column named ``name`` whose cells wrap at words and fold a longer word."""
    table.add_column(name, justify=justify, overflow="fold")
