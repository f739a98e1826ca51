"""A compiled request as a Rich renderable (``CompiledChatRequest.__rich__``, either profile's).

Contract: ``request_table(title, messages, extra_rows)`` is a ``rich.table.Table`` titled
``title`` (the request's one-line summary) with one row per message (index, role, characters,
the start of its text) for at most the last ``SHOWN`` messages, a row saying how many earlier
ones it leaves out, then ``extra_rows`` (label, value). Every text is a ``rich.text.Text``, so
no stored text is read as Rich markup. Rich is imported when the method is called, never when
the package is imported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ("SHOWN", "request_table")

#: The most messages the table lists (the last ones; the current turn is always among them).
SHOWN = 20
_START = 60


def _text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list | tuple):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return str(content)


def request_table(
    title: str, messages: Sequence[Any], extra_rows: Sequence[tuple[str, str]] = ()
) -> Any:
    """The table of the module contract (a ``rich.table.Table``); ``messages`` are
    ``CompiledMessage`` values (read by ``role`` and ``content`` only)."""
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title), title_justify="left", show_edge=False)
    for name, justify in (("#", "right"), ("role", "left"), ("characters", "right"),
                          ("text", "left")):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]  # literal names
    first = max(len(messages) - SHOWN, 0)
    if first:
        table.add_row("…", Text(f"{first:,} earlier message(s) not listed"), "", "")
    for i in range(first, len(messages)):
        message = messages[i]
        text = _text(message.content)
        start = " ".join(text.split())[:_START]
        role = str(getattr(message.role, "value", message.role))
        table.add_row(str(i), Text(role), f"{len(text):,}",
                      Text(start + ("…" if len(text) > len(start) else "")))
    for label, value in extra_rows:
        table.add_row("", Text(label), "", Text(value))
    return table
