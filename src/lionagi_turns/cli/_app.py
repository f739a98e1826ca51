"""``lionagi-turns``: see, diff and check what a saved lionagi branch sends next.

A saved branch is the JSON of lionagi's ``Branch.to_dict()`` (see ``branch_io``).

Commands and exit codes:

- ``compile PATH [--instruction TEXT] [--context NAME=TEXT]... [--format text|json]``: the
  provider messages of the next turn. Without ``--instruction`` the current turn is the
  placeholder ``DEFAULT_INSTRUCTION`` (it is marked as such), so the output shows exactly what
  the stored history contributes. 0 compiled, 1 the compiler rejects the history.
- ``diff PATH [--instruction TEXT] [--context NAME=TEXT]...``: lionagi 0.36's own payload next
  to the compiled one, a unified diff per message, each labelled with its intended-difference
  registry entry. 0 every difference is registered, 1 any is not.
- ``check PATH [--format text|json]``: every defect the compiler would reject, with positions and
  ids. 0 clean, 1 defects.

Every command exits 2 for unreadable input (missing file, not JSON, not a lionagi 0.36 branch,
bad option) with one line on stderr naming the file and the problem, and 3 for an internal error
(one line; ``LIONAGI_TURNS_DEBUG=1`` shows the traceback).

``compile --format json`` prints one object: ``messages`` is exactly
``to_provider_messages(compile_chat_request(branch, request))``; ``sections`` gives characters
(text only; images are counted, not measured) and tokens per section, counted offline with
``o200k_base`` (``lionagi_turns._measure``; ``tokenizer`` names the encoding). The system,
context-block and guidance sections are parts of the fold and are also counted inside the
message that carries it (``fold.message_index``); history and current turn partition the
messages.
"""

from __future__ import annotations

import difflib
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, NoReturn
from uuid import UUID

# Effective for lionagi settings read after this point; the loader also pins the branch's log
# manager to never save (branch_io), since the package may have imported lionagi already.
os.environ.setdefault("LOG_AUTO_SAVE_ON_EXIT", "false")

import typer
from rich.console import Console
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from .._compiler import compile_chat_request
from .._contracts import ContextBlock, TurnRequest
from .._envelope import BEGIN_MARKER, END_MARKER, encode_context_section
from .._history import (
    HistoryError,
    InstructionTurn,
    UnknownMessageTypeError,
    project_history,
    select_ids,
)
from .._measure import ENCODING as TOKEN_ENCODING
from .._measure import count_tokens
from .._providers import to_provider_messages
from .._render import guidance_text
from ._load import BranchLoadError, LoadedBranch, load_branch

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = (
    "DEFAULT_INSTRUCTION",
    "app",
    "check_report",
    "compile_report",
    "main",
    "parse_context",
)

DEFAULT_INSTRUCTION = "(next instruction)"

EXIT_OK, EXIT_REJECTED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3

app = typer.Typer(
    name="lionagi-turns",
    help="See, diff and check exactly what a saved lionagi branch sends to the model next.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class Format(StrEnum):
    text = "text"
    json = "json"


# --------------------------------------------------------------------------- helpers


class _Fail(Exception):
    """A one-line failure with its exit code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def _die(code: int, message: str) -> NoReturn:
    raise _Fail(code, message)


def _load(path: str) -> LoadedBranch:
    try:
        return load_branch(path)
    except BranchLoadError as exc:
        _die(EXIT_BAD_INPUT, str(exc))


def parse_context(values: Sequence[str]) -> tuple[ContextBlock, ...]:
    """``NAME=TEXT`` options as context blocks, in the order given; ValueError names the bad
    one."""
    blocks = []
    for i, value in enumerate(values):
        name, sep, text = value.partition("=")
        if not sep or not name.strip() or not text:
            raise ValueError(
                f"--context #{i + 1} {value[:60]!r} is not NAME=TEXT with a non-empty name and text"
            )
        blocks.append(ContextBlock(provider_name=name.strip(), content=text))
    return tuple(blocks)


def _turn_inputs(
    path: str, instruction: str | None, context: Sequence[str] | None
) -> tuple[LoadedBranch, tuple[ContextBlock, ...]]:
    """The options of a command that compiles a turn, checked, then the branch loaded; exits 2
    on a blank ``--instruction``, a malformed ``--context`` or an unreadable branch."""
    if instruction is not None and not instruction.strip():
        _die(EXIT_BAD_INPUT, "bad option: --instruction must have visible text")
    blocks = _blocks(context)
    return _load(path), blocks


def _blocks(values: Sequence[str] | None) -> tuple[ContextBlock, ...]:
    try:
        return parse_context(values or ())
    except ValueError as exc:
        _die(EXIT_BAD_INPUT, f"bad option: {exc}")


def _request(branch: Branch, instruction: str, blocks: tuple[ContextBlock, ...]) -> TurnRequest:
    current = branch.msgs.create_instruction(instruction=instruction)
    return TurnRequest(instruction=current, context_blocks=blocks)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


# --------------------------------------------------------------------------- tokens

TOKENIZER = {"encoding": TOKEN_ENCODING, "package": "bpe-openai"}


# --------------------------------------------------------------------------- compile


def _text_of(content: Any) -> tuple[str, int]:
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


@dataclass(frozen=True, slots=True)
class FoldParts:
    """The fold's sections, in order, and the index of the message that carries them."""

    system: str
    context: str
    guidance: str
    message_index: int | None

    def sections(self) -> list[tuple[str, str]]:
        """Non-empty (label, text) parts, in fold order; empty when nothing is folded."""
        if not (self.system or self.context):
            return []
        parts = (("system", self.system), ("context", self.context), ("guidance", self.guidance))
        return [(label, text) for label, text in parts if text]


def _fold_parts(
    branch: Branch, request: TurnRequest, messages: list[dict[str, Any]]
) -> FoldParts:
    system = branch.msgs.system
    projection = project_history(branch, select_ids(branch, request.progression))
    target = next((t for t in projection.turns if isinstance(t, InstructionTurn)), None)
    guidance = (target.message if target else request.instruction).content.guidance
    system_text = system.rendered if system is not None else ""
    context = encode_context_section(request.context_blocks)
    index = None
    if system_text or context:
        index = next((i for i, m in enumerate(messages) if m["role"] == "user"), None)
    return FoldParts(system_text, context, guidance_text(guidance), index)


def compile_report(
    loaded: LoadedBranch,
    instruction: str | None = None,
    blocks: tuple[ContextBlock, ...] = (),
) -> dict[str, Any]:
    """The ``compile --format json`` object for ``loaded`` (see the module docstring).

    Raises what ``compile_chat_request`` raises for a history it rejects.
    """
    return _compile(loaded, instruction, blocks)[0]


def _compile(
    loaded: LoadedBranch, instruction: str | None, blocks: tuple[ContextBlock, ...]
) -> tuple[dict[str, Any], FoldParts]:
    branch = loaded.branch
    text = DEFAULT_INSTRUCTION if instruction is None else instruction
    request = _request(branch, text, blocks)
    messages = to_provider_messages(compile_chat_request(branch, request))
    fold = _fold_parts(branch, request, messages)
    history = [_text_of(m["content"]) for m in messages[:-1]]
    current = [_text_of(m["content"]) for m in messages[-1:]]
    everything = history + current
    report = {
        "path": loaded.path,
        "view": loaded.view_name,
        "records": len(loaded.view),
        "instruction": text,
        "instruction_is_placeholder": instruction is None,
        "messages": messages,
        "fold": {"message_index": fold.message_index, "sections": [s for s, _ in fold.sections()]},
        "sections": {
            "system": _size([fold.system]),
            "context_blocks": {"count": len(blocks), **_size([fold.context])},
            "guidance": _size([fold.guidance]),
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
    return report, fold


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


def _envelope_labels(lines: list[str]) -> dict[int, str]:
    for i in range(len(lines) - 2):
        if lines[i].strip() == BEGIN_MARKER and lines[i + 2].strip() == END_MARKER:
            return {i: "context", i + 1: "context", i + 2: "context"}
    return {}


def _message_body(content: Any, labels_for: Callable[[list[str]], dict[int, str]]) -> Table:
    """One row per line: the section label (when the line belongs to the fold) and the line;
    long lines wrap inside their column."""
    text, _ = _text_of(content)
    lines = text.split("\n")
    labels = labels_for(lines)
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=max(len(k) for k in _STYLES), no_wrap=True)
    grid.add_column(width=1, style="dim")
    grid.add_column(overflow="fold")
    for i, line in enumerate(lines):
        label = labels.get(i, "")
        style = _STYLES[label] if label == "context" else ""
        grid.add_row(Text(label, style=_STYLES[label]), "│", Text(line, style=style))
    if not isinstance(content, str):
        images = [p for p in content if p.get("type") == "image_url"]
        for n, part in enumerate(images, 1):
            url = str(part.get("image_url", {}).get("url", ""))
            detail = part.get("image_url", {}).get("detail")
            shown = url if len(url) <= 48 else url[:45] + "…"
            grid.add_row(
                Text("image", style=_STYLES["image"]),
                "│",
                Text(f"[image {n}] {shown} ({len(url):,} chars, detail={detail})", style="green"),
            )
    return grid


def _size_note(size: dict[str, Any]) -> str:
    note = f"{size['characters']:,} chars"
    if size.get("tokens") is not None:
        note += f" · {size['tokens']:,} tokens"
    if size.get("images"):
        note += f" · {size['images']} image(s)"
    return note


def _render_compile(
    console: Console, loaded: LoadedBranch, report: dict[str, Any], fold: FoldParts
) -> None:
    branch = loaded.branch
    messages: list[dict[str, Any]] = report["messages"]
    request_blocks = report["sections"]["context_blocks"]["count"]
    fold_index = fold.message_index
    system = branch.msgs.system
    parts = fold.sections()

    header = Text()
    header.append("lionagi-turns compile ", style="bold")
    header.append(loaded.path)
    console.print(Rule(header))
    facts = Text()
    facts.append(f"view: {loaded.view_name} ({len(loaded.view)} records) · ")
    facts.append(f"system: {'yes' if system is not None else 'no'} · ")
    facts.append(f"context blocks: {request_blocks} · ")
    facts.append(f"{len(messages)} message(s) to send")
    console.print(facts)
    for note in loaded.notes:
        console.print(Text(f"note: {note}", style="yellow"))
    console.print()

    last = len(messages) - 1
    for i, message in enumerate(messages):
        role = message["role"]
        tags = []
        if i == fold_index:
            tags.append("fold: " + " + ".join(label for label, _ in parts))
        if i == last:
            tags.append(
                "current turn (placeholder; pass --instruction TEXT)"
                if report["instruction_is_placeholder"]
                else "current turn"
            )
        else:
            tags.append("history")
        text, images = _text_of(message["content"])
        size = {
            "characters": len(text),
            "tokens": count_tokens(text),
            "images": images,
        }

        def labels_for(lines: list[str], i: int = i) -> dict[int, str]:
            if i == fold_index and parts:
                found = _fold_labels(lines, parts)
                if found is not None:
                    return found
            return _envelope_labels(lines) if i == fold_index else {}

        title = Text.assemble((f"[{i}] {role}", "bold"), f"  {' · '.join(tags)}")
        border = "yellow" if i == last else ("blue" if role == "user" else "green")
        console.print(
            Panel(
                _message_body(message["content"], labels_for),
                title=title,
                title_align="left",
                subtitle=_size_note(size),
                subtitle_align="right",
                border_style=border,
            )
        )

    table = Table(title="Sections", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("section")
    table.add_column("characters", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("notes")
    sections = report["sections"]
    notes = {
        "system": "folded into the first instruction" if fold.system else "no system message",
        "context_blocks": (
            f"{request_blocks} block(s), D3 JSON envelope"
            if request_blocks
            else "none (add some with --context NAME=TEXT)"
        ),
        "guidance": "the fold target's own guidance",
        "history": f"{sections['history']['messages']} message(s)",
        "current_turn": "1 message",
        "total": f"{sections['total']['messages']} message(s)",
    }
    for name, size in sections.items():
        tokens = f"{size['tokens']:,}"
        extra = f" · {size['images']} image(s)" if size.get("images") else ""
        table.add_row(name, f"{size['characters']:,}", tokens, notes[name] + extra)
    console.print(table)


def _compile_error(loaded: LoadedBranch, exc: Exception) -> NoReturn:
    if isinstance(exc, HistoryError | UnknownMessageTypeError):
        _die(
            EXIT_REJECTED,
            f"{loaded.path}: the compiler rejects this history: {_one_line(str(exc))} "
            f"(run `lionagi-turns check {loaded.path}` to list every defect)",
        )
    problem = f"{type(exc).__name__}: {_one_line(str(exc))}"
    _die(EXIT_REJECTED, f"{loaded.path}: cannot compile: {problem}")


InstructionOpt = Annotated[
    str | None,
    typer.Option(
        "--instruction",
        "-i",
        help=f"Text of the current instruction. Default: the placeholder {DEFAULT_INSTRUCTION!r}.",
    ),
]
ContextOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--context",
        "-c",
        metavar="NAME=TEXT",
        help="Add a context block from provider NAME (repeatable, kept in order).",
    ),
]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
PathArg = Annotated[str, typer.Argument(help="A saved branch: the JSON of Branch.to_dict().")]


@app.command("compile")
def compile_command(
    path: PathArg,
    instruction: InstructionOpt = None,
    context: ContextOpt = None,
    format: FormatOpt = Format.text,
) -> None:
    """Print the provider messages the next turn sends (ADR-0007 compile_chat_request)."""
    loaded, blocks = _turn_inputs(path, instruction, context)
    try:
        report, fold = _compile(loaded, instruction, blocks)
    except (ValueError, TypeError) as exc:
        _compile_error(loaded, exc)
    if format is Format.json:
        _print_json(report)
        return
    _render_compile(_console(), loaded, report, fold)


# --------------------------------------------------------------------------- check


def check_report(loaded: LoadedBranch) -> dict[str, Any]:
    """The ``check --format json`` object: every history defect of the stored view, and, when
    there is none, the error a compile of the next turn would still raise (kind
    ``compile_error``)."""
    branch = loaded.branch
    projection = project_history(branch, select_ids(branch, None))
    defects = [d.to_dict() for d in projection.defects]
    if not defects:
        try:
            compile_chat_request(branch, _request(branch, DEFAULT_INSTRUCTION, ()))
        except (ValueError, TypeError) as exc:
            defects.append(
                {
                    "kind": "compile_error",
                    "message": f"{type(exc).__name__}: {_one_line(str(exc))}",
                    "positions": [],
                    "ids": [],
                }
            )
    records = []
    msgs: Any = branch.msgs
    pile: dict[UUID, Any] = msgs.messages.collections
    for position, uid in enumerate(loaded.view):
        message = pile.get(uid)
        records.append(
            {
                "position": position,
                "id": str(uid),
                "kind": type(message).__name__ if message is not None else None,
            }
        )
    return {
        "path": loaded.path,
        "view": loaded.view_name,
        "ok": not defects,
        "defects": defects,
        "records": records,
        "notes": list(loaded.notes),
    }


def _render_check(console: Console, report: dict[str, Any]) -> None:
    defects = report["defects"]
    if not defects:
        console.print(
            Text.assemble(
                ("✓ ", "bold green"),
                f"{report['path']}: no defects in {report['view']} "
                f"({len(report['records'])} records); the compiler accepts it",
            )
        )
        return
    console.print(
        Text.assemble(
            ("✗ ", "bold red"),
            f"{report['path']}: {len(defects)} defect(s) in {report['view']} "
            f"({len(report['records'])} records)",
        )
    )
    for note in report["notes"]:
        console.print(Text(f"note: {note}", style="yellow"))
    table = Table(show_edge=False, pad_edge=False)
    table.add_column("kind", style="bold red")
    table.add_column("positions", justify="right")
    table.add_column("ids", overflow="fold")
    table.add_column("detail", overflow="fold")
    for d in defects:
        table.add_row(
            d["kind"],
            ", ".join(str(p) for p in d["positions"]) or "—",
            "\n".join(d["ids"]) or "—",
            d["message"],
        )
    console.print(table)
    flagged: dict[int, list[str]] = {}
    for d in defects:
        for p in d["positions"]:
            flagged.setdefault(p, []).append(d["kind"])
    view = Table(title="View", title_justify="left", show_edge=False, pad_edge=False)
    view.add_column("pos", justify="right")
    view.add_column("id", no_wrap=True)
    view.add_column("record")
    view.add_column("defects", style="red")
    for record in report["records"]:
        view.add_row(
            str(record["position"]),
            record["id"],
            record["kind"] or Text("— missing —", style="red"),
            ", ".join(flagged.get(record["position"], [])),
        )
    console.print(view)


@app.command("check")
def check_command(path: PathArg, format: FormatOpt = Format.text) -> None:
    """List every defect the compiler would reject in the stored view, with positions and ids."""
    loaded = _load(path)
    report = check_report(loaded)
    if format is Format.json:
        _print_json(report)
    else:
        _render_check(_console(), report)
    if not report["ok"]:
        raise typer.Exit(EXIT_REJECTED)


# --------------------------------------------------------------------------- diff


def _message_lines(message: dict[str, Any] | None) -> list[str]:
    if message is None:
        return []
    content = message["content"]
    head = [f"role: {message['role']}"]
    if isinstance(content, str):
        return [*head, *content.split("\n")]
    return [*head, *json.dumps(content, indent=2, ensure_ascii=False).split("\n")]


@app.command("diff")
def diff_command(
    path: PathArg,
    instruction: InstructionOpt = None,
    context: ContextOpt = None,
) -> None:
    """Show lionagi 0.36's payload against the compiled one, labelled by intended difference."""
    loaded, blocks = _turn_inputs(path, instruction, context)
    try:
        from .. import characterize as differences
    except ImportError as exc:  # pragma: no cover - the module ships with the package
        _die(EXIT_INTERNAL, f"the intended-difference registry is unavailable: {exc}")
    branch = loaded.branch
    text = DEFAULT_INSTRUCTION if instruction is None else instruction
    comparison = differences.compare(branch, _request(branch, text, blocks))
    registry = {entry.id: entry for entry in differences.REGISTRY}
    console = _console()
    console.print(Rule(Text.assemble(("lionagi-turns diff ", "bold"), loaded.path)))
    console.print(
        f"--- lionagi {_lionagi_version()} (_prepare_run_kwargs)   +++ lionagi-turns "
        "(compile_chat_request)"
    )
    if comparison.legacy_error:
        console.print(Text(f"lionagi raises: {comparison.legacy_error}", style="red"))
    if comparison.compiled_error:
        console.print(Text(f"lionagi-turns raises: {comparison.compiled_error}", style="red"))
    legacy = comparison.legacy or []
    compiled = comparison.compiled or []
    if (comparison.legacy is None) != (comparison.compiled is None):
        # One side raised: show what the other side sends instead of diffing against nothing.
        side, sent = ("lionagi", legacy) if comparison.compiled is None else (
            "lionagi-turns",
            compiled,
        )
        for i, message in enumerate(sent):
            console.print(
                Panel(
                    Text("\n".join(_message_lines(message))),
                    title=Text(f"{side} sends messages[{i}]", style="bold"),
                    title_align="left",
                    border_style="dim",
                )
            )
        legacy = compiled = []
    for i in range(max(len(legacy), len(compiled))):
        old = legacy[i] if i < len(legacy) else None
        new = compiled[i] if i < len(compiled) else None
        diff = list(
            difflib.unified_diff(
                _message_lines(old),
                _message_lines(new),
                fromfile=f"lionagi/messages[{i}]",
                tofile=f"lionagi-turns/messages[{i}]",
                lineterm="",
            )
        )
        if not diff:
            console.print(Text(f"messages[{i}]: identical", style="dim"))
            continue
        body = Table.grid()
        body.add_column(width=1, no_wrap=True)
        body.add_column(overflow="fold")
        for line in diff:
            header = line.startswith(("+++", "---", "@@"))
            style = "bold" if header else {"+": "green", "-": "red"}.get(line[:1], "")
            marker, rest = ("", line) if header else (line[:1], line[1:])
            body.add_row(Text(marker, style=style), Text(rest, style=style))
        labels = comparison.labels.get(i, ())
        title = Text(f"messages[{i}]", style="bold")
        console.print(Panel(body, title=title, title_align="left", border_style="blue"))
        for label in labels:
            entry = registry.get(label)
            if entry is None:
                console.print(Text(f"  ↳ {label}", style="yellow"))
                continue
            console.print(
                Text.assemble(
                    ("  ↳ intended: ", "green"),
                    (entry.id, "bold green"),
                    f" (ADR-0007 {entry.adr_clause}, {entry.design_ref}): {entry.summary}",
                )
            )
    error_labels = [e for e in comparison.entries if not any(
        e in labels for labels in comparison.labels.values()
    )]
    for label in error_labels:
        entry = registry.get(label)
        if entry is not None:
            console.print(
                Text.assemble(
                    ("intended: ", "green"),
                    (entry.id, "bold green"),
                    f" (ADR-0007 {entry.adr_clause}, {entry.design_ref}): {entry.summary}",
                )
            )
    for problem in comparison.unexplained:
        console.print(Text.assemble(("NOT REGISTERED: ", "bold red"), problem))
    if comparison.ok:
        console.print(Text("✓ every difference is an intended one", style="bold green"))
        return
    console.print(
        Text(
            f"✗ {len(comparison.unexplained)} difference(s) not in the intended-difference "
            "registry",
            style="bold red",
        )
    )
    raise typer.Exit(EXIT_REJECTED)


def _lionagi_version() -> str:
    import lionagi

    return str(getattr(lionagi, "__version__", "0.36"))


# --------------------------------------------------------------------------- entry point


def _console() -> Console:
    return Console(highlight=False, soft_wrap=False)


def _print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point; exits with the documented code."""
    try:
        code = app(args=list(argv) if argv is not None else None, standalone_mode=False)
    except _Fail as exc:
        print(f"lionagi-turns: {exc}", file=sys.stderr)
        raise SystemExit(exc.code) from None
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except SystemExit:
        raise
    except typer.Abort:
        raise SystemExit(130) from None
    except Exception as exc:
        # click's usage errors (typer vendors click): they carry their message and exit code.
        format_message = getattr(exc, "format_message", None)
        exit_code = getattr(exc, "exit_code", None)
        if callable(format_message) and isinstance(exit_code, int):
            print(f"lionagi-turns: {_one_line(format_message())}", file=sys.stderr)
            raise SystemExit(EXIT_BAD_INPUT) from None
        if os.environ.get("LIONAGI_TURNS_DEBUG"):
            raise
        print(
            f"lionagi-turns: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
            "(set LIONAGI_TURNS_DEBUG=1 for the traceback)",
            file=sys.stderr,
        )
        raise SystemExit(EXIT_INTERNAL) from None
    raise SystemExit(code if isinstance(code, int) else EXIT_OK)
