"""``lionagi-turns compile --profile prompt-cache``: the next request, prompt-cache profile.

``prompt_cache_report`` is pure: the compile report's identification fields plus
``integration._cache.prompt_cache_view`` of the next turn (``profile: "prompt-cache"``;
``segments``, ``marks``, ``changes``, ``system``, ``messages``). A saved branch holds no tool
functions, so the stable segment is the one last recorded on the branch. ``render_prompt_cache``
is its text view: the segments, each mark with its segment and lifetime, and what changed
against the previous recorded request, i.e. why the next call does or does not read the cache.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from .._contracts import ContextBlock
from ..integration._cache import prompt_cache_view
from ._inputs import next_request
from ._load import LoadedBranch, one_line
from ._views import inert_text

__all__ = ("prompt_cache_report", "render_prompt_cache")


def prompt_cache_report(
    loaded: LoadedBranch, instruction: str | None = None, blocks: tuple[ContextBlock, ...] = ()
) -> dict[str, Any]:
    """The ``compile --profile prompt-cache --format json`` object (module docstring). Raises
    what the compiler raises for a history it rejects."""
    request = next_request(loaded.branch, instruction, blocks)
    view = prompt_cache_view(loaded.branch, request)
    return {
        "path": loaded.path,
        "view": loaded.view_name,
        "records": len(loaded.view),
        "instruction": request.instruction.content.instruction,
        "instruction_is_placeholder": instruction is None,
        "profile": "prompt-cache",
        **view,
    }


def render_prompt_cache(console: Console, report: dict[str, Any]) -> None:
    """Text view of ``report``."""
    header = Text()
    header.append("lionagi-turns compile --profile prompt-cache ", style="bold")
    header.append_text(inert_text(report["path"]))
    console.print(Rule(header))
    segments = report["segments"]
    table = Table("segment", "size", "mark")
    marks = {m["at"]: f'{m["ttl"]} ({m["segment"]})' for m in report["marks"]}
    for i, block in enumerate(report["system"]):
        kind = "stable" if i < segments["stable"]["blocks"] else "conversation"
        preview = one_line(str(block.get("text", "")))[:60]
        table.add_row(
            inert_text(f"system[{i}] {kind}: {preview}"),
            f'{len(str(block.get("text", "")))} chars',
            marks.get(f"system[{i}]", ""),
        )
    for i, message in enumerate(report["messages"]):
        content = message["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        text = "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
        at = next((k for k in marks if k.startswith(f"messages[{i}].")), None)
        table.add_row(
            inert_text(f"messages[{i}] {message['role']}: {one_line(text)[:60]}"),
            f"{len(text)} chars",
            marks.get(at, "") if at else "",
        )
    console.print(table)
    changes = report["changes"]
    changed = [name for name, value in changes.items() if value]
    previous = segments["turn"]["previous_request_end"]
    console.print(
        "changes against the previous recorded request: "
        + (", ".join(changed) if changed else "none")
        + (f" · previous request ended at messages[{previous}]" if previous is not None else "")
    )
