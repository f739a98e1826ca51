"""``lionagi-turns compile``: the provider messages of the next turn, and their sections.

``compile_report`` is pure (it reads the loaded branch and returns a JSON-ready dict);
``render_compile`` is its text view.

The report: ``messages`` is exactly ``to_provider_messages(compile_chat_request(branch,
request))``; ``sections`` gives characters (text only; images are counted, not measured) and
tokens per section, counted offline with ``o200k_base`` (``lionagi_turns._measure``;
``tokenizer`` names the encoding). The system, context-block and guidance sections are parts of
the fold and are also counted inside the message that carries it (``fold.message_index``;
``fold.encoding`` is the compiler's ``FoldPlan.encoding``);
history and current turn partition the messages.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from rich.console import Console
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from .._compiler import Trace, compile_traced
from .._contracts import ContextBlock
from .._errors import with_notes
from .._history import (
    HistoryError,
    UnknownMessageTypeError,
)
from .._measure import ENCODING
from .._measure import count_tokens as _count_tokens
from .._providers import to_provider_messages
from ._inputs import EXIT_REJECTED, die, next_request
from ._load import LoadedBranch, one_line
from ._views import bounded_rows, inert, inert_text

__all__ = ("TOKENIZER", "compile_error", "compile_report", "compiled_turn", "render_compile")

TOKENIZER = {"encoding": ENCODING, "package": "bpe-openai"}


@functools.lru_cache(maxsize=32)
def count_tokens(text: str) -> int:
    """``_measure.count_tokens``, remembered: the report counts a message's text in several
    sections (message, history or current turn, total)."""
    return _count_tokens(text)


def text_of(content: Any) -> tuple[str, int]:
    """The text of a message's content and its number of images."""
    if isinstance(content, str):
        return content, 0
    texts = [p.get("text", "") for p in content if p.get("type") == "text"]
    images = sum(1 for p in content if p.get("type") == "image_url")
    return "\n".join(texts), images


def _size(texts: Sequence[str], images: int | None = None) -> dict[str, Any]:
    size: dict[str, Any] = {
        "characters": sum(len(t) for t in texts),
        "tokens": sum(count_tokens(t) for t in texts),
    }
    if images is not None:
        size["images"] = images
    return size


def _fold_report(trace: Trace) -> dict[str, Any]:
    """Where the compile put the fold: the message, the parts it folded, the encoding."""
    plan = trace.fold
    return {
        "message_index": trace.fold_message_index,
        "sections": [label for label, _ in plan.parts.sections()] if plan else [],
        "encoding": plan.encoding if plan else None,
    }


def compile_report(
    loaded: LoadedBranch,
    instruction: str | None = None,
    blocks: tuple[ContextBlock, ...] = (),
) -> dict[str, Any]:
    """The ``compile --format json`` object for ``loaded`` (see the module docstring).

    Raises what ``compile_chat_request`` raises for a history it rejects.
    """
    return compiled_turn(loaded, instruction, blocks)[0]


def compiled_turn(
    loaded: LoadedBranch, instruction: str | None, blocks: tuple[ContextBlock, ...]
) -> tuple[dict[str, Any], Trace]:
    """``compile_report`` and the traced compile it reports (the fold plan the text view
    marks comes from it, never from a second walk)."""
    branch = loaded.branch
    request = next_request(branch, instruction, blocks)
    trace = compile_traced(branch, request)
    messages = to_provider_messages(trace.compiled)
    parts = trace.parts
    history = [text_of(m["content"]) for m in messages[:-1]]
    current = [text_of(m["content"]) for m in messages[-1:]]
    everything = history + current
    report = {
        "path": loaded.path,
        "view": loaded.view_name,
        "records": len(loaded.view),
        "instruction": request.instruction.content.instruction,
        "instruction_is_placeholder": instruction is None,
        "messages": messages,
        "fold": _fold_report(trace),
        "sections": {
            "system": _size([parts.system]),
            "context_blocks": {"count": len(blocks), **_size([parts.context])},
            "guidance": _size([parts.guidance]),
            "history": {
                "messages": len(history),
                **_size([t for t, _ in history], sum(n for _, n in history)),
            },
            "current_turn": _size([t for t, _ in current], sum(n for _, n in current)),
            "total": {
                "messages": len(messages),
                **_size([t for t, _ in everything], sum(n for _, n in everything)),
            },
        },
        "tokenizer": dict(TOKENIZER),
    }
    return report, trace


def compile_error(loaded: LoadedBranch, exc: Exception) -> NoReturn:
    """Exit 1 with one line: the compiler rejects this history (``exc``)."""
    if isinstance(exc, HistoryError | UnknownMessageTypeError):
        die(
            EXIT_REJECTED,
            f"{loaded.path}: the compiler rejects this history: {one_line(with_notes(exc))} "
            f"(run `lionagi-turns check {loaded.path}` to list every defect)",
        )
    problem = f"{type(exc).__name__}: {one_line(with_notes(exc))}"
    die(EXIT_REJECTED, f"{loaded.path}: cannot compile: {problem}")


# --------------------------------------------------------------------------- text view

_STYLES = {
    "system": "bold magenta",
    "context": "bold cyan",
    "guidance": "bold yellow",
    "image": "green",
    "": "dim",
}


def _fold_labels(lines: list[str], parts: list[tuple[str, str]]) -> dict[int, str] | None:
    """Line index -> section label for the fold embedded in ``lines`` (as a YAML block with any
    indentation, or as plain text), or None when it is not there line for line."""
    fold_lines: list[tuple[str, str]] = []
    for n, (label, text) in enumerate(parts):
        if n:
            fold_lines.append(("", ""))
        fold_lines.extend((label, line) for line in text.split("\n"))
    first = fold_lines[0][1]
    for start, line in enumerate(lines):
        if not line.endswith(first):
            continue
        indent = line[: len(line) - len(first)]
        if indent.strip() and not (len(fold_lines) == 1 and indent.strip() == "Guidance:"):
            continue
        window = lines[start : start + len(fold_lines)]
        if len(window) == len(fold_lines) and all(
            got == indent + want if want else not got.strip()
            for got, (_, want) in zip(window, fold_lines, strict=True)
        ):
            return {start + k: label for k, (label, _) in enumerate(fold_lines) if label}
    return None


def _message_body(content: Any, labels_for: Callable[[list[str]], dict[int, str]]) -> Table:
    """One row per shown line (see ``_views.bounded_rows``): the section label when the line
    belongs to the fold, and the line, inert; long lines wrap inside their column."""
    text, _ = text_of(content)
    lines = text.split("\n")
    labels = labels_for(lines)
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=max(len(k) for k in _STYLES), no_wrap=True)
    grid.add_column(width=1, style="dim")
    grid.add_column(overflow="fold")
    for row in bounded_rows(lines):
        if row.index is None:
            grid.add_row(Text(""), "┆", Text(row.text, style="italic dim"))
            continue
        label = labels.get(row.index, "")
        style = _STYLES[label] if label == "context" else ""
        grid.add_row(Text(label, style=_STYLES[label]), "│", inert_text(row.text, style))
    if not isinstance(content, str):
        images = [p for p in content if p.get("type") == "image_url"]
        for n, part in enumerate(images, 1):
            url = str(part.get("image_url", {}).get("url", ""))
            detail = part.get("image_url", {}).get("detail")
            shown = url if len(url) <= 48 else url[:45] + "…"
            grid.add_row(
                Text("image", style=_STYLES["image"]),
                "│",
                inert_text(
                    f"[image {n}] {shown} ({len(url):,} chars, detail={detail})", "green"
                ),
            )
    return grid


def _size_note(size: dict[str, Any]) -> str:
    note = f"{size['characters']:,} chars · {size['tokens']:,} tokens"
    if size.get("images"):
        note += f" · {size['images']} image(s)"
    return note


def render_compile(
    console: Console, loaded: LoadedBranch, report: dict[str, Any], trace: Trace
) -> None:
    """The text view of ``report``: the header, a panel per message with the fold's sections
    marked (as the compile ``trace`` planned them), then the sections table."""
    _print_header(console, loaded, report)
    parts = trace.fold.parts.sections() if trace.fold is not None else []
    messages: list[dict[str, Any]] = report["messages"]
    for i, message in enumerate(messages):
        folded = parts if i == trace.fold_message_index else []
        console.print(_message_panel(i, message, report, folded))
    console.print(_sections_table(report, has_system=bool(trace.parts.system)))
    console.print(Text(f"tokens: {ENCODING}, counted offline", style="dim"))


def _print_header(console: Console, loaded: LoadedBranch, report: dict[str, Any]) -> None:
    header = Text()
    header.append("lionagi-turns compile ", style="bold")
    header.append_text(inert_text(loaded.path))
    console.print(Rule(header))
    facts = Text()
    facts.append(f"view: {loaded.view_name} ({len(loaded.view)} records) · ")
    facts.append(f"system: {'yes' if loaded.branch.msgs.system is not None else 'no'} · ")
    facts.append(f"context blocks: {report['sections']['context_blocks']['count']} · ")
    facts.append(f"{len(report['messages'])} message(s) to send")
    console.print(facts)
    for note in loaded.notes:
        console.print(inert_text(f"note: {note}", "yellow"))
    console.print()


def _message_panel(
    i: int, message: dict[str, Any], report: dict[str, Any], folded: list[tuple[str, str]]
) -> Panel:
    """Message ``i``'s panel; ``folded`` are the fold's parts when it carries the fold."""
    role = message["role"]
    current = i == len(report["messages"]) - 1
    tags = ["fold: " + " + ".join(label for label, _ in folded)] if folded else []
    if not current:
        tags.append("history")
    elif report["instruction_is_placeholder"]:
        tags.append("current turn (placeholder; pass --instruction TEXT)")
    else:
        tags.append("current turn")
    text, images = text_of(message["content"])
    size = {"characters": len(text), "tokens": count_tokens(text), "images": images}

    def labels_for(lines: list[str]) -> dict[int, str]:
        return (_fold_labels(lines, folded) or {}) if folded else {}

    return Panel(
        _message_body(message["content"], labels_for),
        title=Text.assemble((f"[{i}] {inert(role)}", "bold"), f"  {' · '.join(tags)}"),
        title_align="left",
        subtitle=_size_note(size),
        subtitle_align="right",
        border_style="yellow" if current else ("blue" if role == "user" else "green"),
    )


def _sections_table(report: dict[str, Any], *, has_system: bool) -> Table:
    table = Table(title="Sections", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("section")
    table.add_column("characters", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("notes")
    sections = report["sections"]
    blocks = sections["context_blocks"]["count"]
    notes = {
        "system": "folded into the first instruction" if has_system else "no system message",
        "context_blocks": (
            f"{blocks} block(s), D3 JSON envelope"
            if blocks
            else "none (add some with --context NAME=TEXT)"
        ),
        "guidance": "the fold target's own guidance",
        "history": f"{sections['history']['messages']} message(s)",
        "current_turn": "1 message",
        "total": f"{sections['total']['messages']} message(s)",
    }
    for name, size in sections.items():
        extra = f" · {size['images']} image(s)" if size.get("images") else ""
        table.add_row(name, f"{size['characters']:,}", f"{size['tokens']:,}", notes[name] + extra)
    return table
