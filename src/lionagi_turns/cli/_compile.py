"""``lionagi-turns compile``: the provider messages of a turn, and their sections.

``compile_report`` is pure (it reads the loaded branch and returns a JSON-ready dict, the
``lionagi-turns/compile@1`` shape of ``schema/lionagi-turns.schema.json``); ``render_compile``
is its text view.

The report: ``messages`` is exactly ``to_provider_messages(compile_chat_request(branch,
request))``; ``sections`` partitions every character of it (``_sections``: system, tools,
context blocks, guidance, history, current turn, and a total that is the sum of the rows), with
``o200k_base`` tokens counted offline (``tokenizer`` names the encoding). ``fold`` says which
message carries the fold, its parts and the compiler's ``FoldPlan.encoding``. ``at`` is None
for the next turn, else what ``--at K`` rebuilt (``_turn``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from rich.console import Console
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from lionagi_turns.cli._inputs import EXIT_REJECTED, die
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._lines import Lines
from lionagi_turns.cli._load import LoadedBranch, one_line
from lionagi_turns.cli._sections import (
    SECTION_NAMES,
    Measured,
    MessageSize,
    fold_labels,
    measure,
    text_parts,
)
from lionagi_turns.cli._shape import header
from lionagi_turns.cli._turn import TurnSpec, turn_spec
from lionagi_turns.cli._views import bounded_rows, inert_text
from lionagi_turns.cli._window import Paging, select
from lionagi_turns.core.contracts import ContextBlock, TurnRequest
from lionagi_turns.core.errors import with_notes
from lionagi_turns.core.history import (
    HistoryError,
    UnknownMessageTypeError,
)
from lionagi_turns.core.measure import ENCODING
from lionagi_turns.core.pipeline import Trace, compile_traced
from lionagi_turns.core.providers import to_provider_messages
from lionagi_turns.core.stage import Stage

__all__ = (
    "TOKENIZER",
    "compile_error",
    "compile_report",
    "compiled_turn",
    "fold_parts",
    "fold_report",
    "measured_turn",
    "render_at",
    "render_compile",
    "render_reload_note",
    "render_sections",
    "section_notes",
    "shown_range",
    "text_of",
    "turn_fields",
)

TOKENIZER = {"encoding": ENCODING, "package": "bpe-openai"}


def text_of(content: object) -> tuple[str, int]:
    """The text of a message's content (its text parts, one per line) and its images."""
    texts, images = text_parts(content)
    return "\n".join(texts), images


def fold_report(trace: Trace) -> JsonObject:
    """Where the compile put the fold: the message, the parts it folded, the encoding."""
    plan = trace.fold
    return {
        "message_index": trace.fold_message_index,
        "sections": [label for label, _ in plan.parts.sections()] if plan else [],
        "encoding": plan.encoding if plan else None,
    }


def fold_parts(trace: Trace) -> list[tuple[str, str]]:
    """The fold's ``(label, text)`` parts as the compile planned them (none: nothing folded)."""
    return trace.fold.parts.sections() if trace.fold is not None else []


def turn_fields(
    loaded: LoadedBranch, spec: TurnSpec, profile: str, measured: Measured
) -> JsonObject:
    """The fields every ``compile`` report starts with, in every profile."""
    return {
        **header("compile", loaded),
        "profile": profile,
        "instruction": spec.text,
        "instruction_is_placeholder": spec.placeholder,
        "lionagi_reload_sends_no_system": loaded.system_lost_by_from_dict,
        "context_blocks": [b.provider_name for b in spec.blocks],
        "at": spec.at,
        "sections": measured.sections,
        "tokenizer": dict(TOKENIZER),
    }


def compile_report(
    loaded: LoadedBranch,
    instruction: str | None = None,
    blocks: tuple[ContextBlock, ...] = (),
    at: int | None = None,
) -> JsonObject:
    """The ``compile --format json`` object for ``loaded`` (see the module docstring).

    Raises what ``compile_chat_request`` raises for a history it rejects.
    """
    return compiled_turn(loaded, turn_spec(loaded, instruction, blocks, at, "default"))[0]


def compiled_turn(loaded: LoadedBranch, spec: TurnSpec) -> tuple[JsonObject, Trace]:
    """``compile_report`` and the traced compile it reports (the fold plan the text view
    marks comes from it, never from a second walk)."""
    report, trace, _ = measured_turn(loaded, spec)
    return report, trace


def measured_turn(
    loaded: LoadedBranch, spec: TurnSpec, stages: tuple[Stage, ...] = ()
) -> tuple[JsonObject, Trace, Measured]:
    """``compiled_turn`` and the sections it measured (each message counted once), under
    ``stages`` (a registered stage profile; none: the default profile)."""
    request = TurnRequest(
        instruction=spec.instruction, progression=spec.progression, context_blocks=spec.blocks
    )
    trace = compile_traced(loaded.branch, request, stages=stages)
    messages = to_provider_messages(trace.compiled)
    measured = measure(messages, trace.fold_message_index, fold_parts(trace))
    report = {
        **turn_fields(loaded, spec, "default", measured),
        **({"stages": [stage.name for stage in stages]} if stages else {}),
        "fold": fold_report(trace),
        "messages": messages,
    }
    return report, trace, measured


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


def _message_body(
    out: Lines, content: str | list[JsonObject], labels_for: Callable[[list[str]], dict[int, str]]
) -> None:
    """One line per shown line (see ``_views.bounded_rows``): the section label when the line
    belongs to the fold, and the line, inert; then one line per image."""
    text, _ = text_of(content)
    lines = text.split("\n")
    labels = labels_for(lines)
    width = max(len(k) for k in _STYLES)
    for row in bounded_rows(lines):
        if row.index is None:
            out.write(f"│ {'':{width}} ┆ {out.styled(row.text, 'italic dim')}")
            continue
        label = labels.get(row.index, "")
        style = _STYLES[label] if label == "context" else ""
        tag = out.styled(f"{label:{width}}", _STYLES[label]) if label else " " * width
        out.write(f"│ {tag} │ {out.inert(row.text, style)}")
    if not isinstance(content, str):
        images = [p for p in content if p.get("type") == "image_url"]
        for n, part in enumerate(images, 1):
            url = str(part.get("image_url", {}).get("url", ""))
            detail = part.get("image_url", {}).get("detail")
            shown = url if len(url) <= 48 else url[:45] + "…"
            note = f"[image {n}] {shown} ({len(url):,} chars, detail={detail})"
            tag = out.styled(f"{'image':{width}}", _STYLES["image"])
            out.write(f"│ {tag} │ {out.inert(note, 'green')}")


def _size_note(size: MessageSize) -> str:
    note = f"{size.characters:,} chars · {size.tokens:,} tokens"
    if size.images:
        note += f" · {size.images} image(s)"
    return note


def render_compile(
    console: Console,
    loaded: LoadedBranch,
    report: JsonObject,
    trace: Trace,
    measured: Measured,
    last: int | Paging | None = None,
) -> None:
    """The text view of ``report``: the header, each message framed with the fold's sections
    marked (as the compile ``trace`` planned them; with ``last``, only the messages it selects,
    ``shown_range``, a line saying how many are left out), then the sections table."""
    _print_header(console, loaded, report)
    parts = fold_parts(trace)
    messages: list[JsonObject] = report["messages"]
    out = Lines(console)
    for i in shown_range(out, len(messages), last):
        folded = parts if i == trace.fold_message_index else []
        _message_frame(out, i, messages[i], report, folded, measured.messages[i])
    out.flush()
    render_sections(console, report, measured, section_notes(report, measured))


def shown_from(out: Lines, count: int, last: int | None) -> int:
    """The index of the first of ``count`` messages ``--last`` shows; writes the line saying
    how many it leaves out when it leaves any out."""
    if last is None or last >= count:
        return 0
    left_out = count - last
    out.write(
        out.styled(
            f"… {left_out:,} earlier message(s) of {count:,} not shown (--last {last}); "
            "--format json prints them all",
            "italic dim",
        )
    )
    return left_out


def shown_range(out: Lines, count: int, last: int | Paging | None) -> range:
    """The indexes of the messages a text view shows: ``--last N`` as ``shown_from``, or
    ``--around K``'s window (``_window.select``), with a line saying what is left out."""
    if not isinstance(last, Paging):
        return range(shown_from(out, count, last), count)
    if last.around is None:
        return range(shown_from(out, count, last.last), count)
    window = select(count, last)
    if window.hidden:
        out.write(out.styled(f"… {window.note()}", "italic dim"))
    return range(window.start, window.stop)


#: The one line the text views print when ``LoadedBranch.system_lost_by_from_dict``.
RELOAD_NOTE = (
    "plain lionagi sends no system text after Branch.from_dict; install() sends it"
)


def _print_header(console: Console, loaded: LoadedBranch, report: JsonObject) -> None:
    header = Text()
    header.append("lionagi-turns compile ", style="bold")
    header.append_text(inert_text(loaded.path))
    console.print(Rule(header))
    sent = len(report["messages"])
    facts = Text()
    facts.append(
        f"messages sent: {sent} ({sent - 1} from the history, read from the "
        f"{len(loaded.view)} record(s) listed in {loaded.view_name}, then the current turn) · "
    )
    facts.append(f"system text: {'yes' if loaded.branch.msgs.system is not None else 'no'} · ")
    facts.append(f"context blocks: {len(report['context_blocks'])}")
    console.print(facts)
    fold = report["fold"]
    if fold["sections"]:
        parts = " + ".join(_FOLD_WORDS.get(label, label) for label in fold["sections"])
        console.print(f"{parts} placed in message [{fold['message_index']}] (the fold)")
    render_reload_note(console, report)
    for note in loaded.notes:
        console.print(inert_text(f"note: {note}", "yellow"))
    render_at(console, report)
    console.print()


def render_reload_note(console: Console, report: JsonObject) -> None:
    """``RELOAD_NOTE``, once, when the report's ``lionagi_reload_sends_no_system`` is true."""
    if report["lionagi_reload_sends_no_system"]:
        console.print(RELOAD_NOTE)


def render_at(console: Console, report: JsonObject) -> None:
    """The ``--at K`` lines: which instruction, and what the saved branch does not record."""
    at = report["at"]
    if at is None:
        return
    console.print(
        f"rebuilt: instruction {at['instruction']} of {at['of']} (view position "
        f"{at['position']}), from the {at['position']} record(s) before it"
    )
    if at["not_recorded"]:
        console.print(
            Text(
                "not recorded (shown as none): " + ", ".join(at["not_recorded"]),
                style="yellow",
            )
        )
    if at["recorded"]:
        console.print(f"recorded by the profile: {', '.join(at['recorded'])}")
    if at["sent_text_matches"] is False:
        console.print(
            Text("the recorded sent text differs from the rebuilt current turn", style="yellow")
        )


# The fold's parts in words, for the tag of the message that carries them.
_FOLD_WORDS = {"system": "system text", "context": "context blocks", "guidance": "guidance"}
_FOLDED = "carries {}"


def _message_frame(
    out: Lines,
    i: int,
    message: JsonObject,
    report: JsonObject,
    folded: list[tuple[str, str]],
    size: MessageSize,
) -> None:
    """Message ``i`` framed; ``folded`` are the fold's parts when it carries the fold."""
    role = message["role"]
    current = i == len(report["messages"]) - 1
    tags = [_FOLDED.format(" + ".join(_FOLD_WORDS[label] for label, _ in folded))] if folded else []
    if not current:
        tags.append("history")
    elif report["instruction_is_placeholder"]:
        tags.append("current turn (placeholder; pass --instruction TEXT)")
    elif report["at"] is not None:
        tags.append(f"current turn (instruction {report['at']['instruction']}, rebuilt)")
    else:
        tags.append("current turn")

    def labels_for(lines: list[str]) -> dict[int, str]:
        return (fold_labels(lines, folded) or {}) if folded else {}

    border = "yellow" if current else ("blue" if role == "user" else "green")
    title = out.styled(f"[{i}] ", "bold") + out.inert(role, "bold") + f"  {' · '.join(tags)}"
    out.rule(title, _size_note(size), border)
    _message_body(out, message["content"], labels_for)
    out.end(border)


_NOTES = {
    "tools": "a call option; not saved",
    "guidance": "the fold target's own",
    "current_turn": "1 message, the rest",
}


def section_notes(report: JsonObject, measured: Measured) -> dict[str, str]:
    """The notes column of the default profile's sections table."""
    blocks = len(report["context_blocks"])
    history = sum(1 for m in measured.messages if m.section == "history")
    folded = report["fold"]["sections"]
    return {
        **_NOTES,
        "system": "folded into the first instruction" if "system" in folded else "none sent",
        "context_blocks": (
            f"{blocks} block(s), D3 JSON envelope" if blocks else "none (--context NAME=TEXT)"
        ),
        "history": f"{history} message(s), the rest",
        "total": "the sum of the rows",
    }


def render_sections(
    console: Console, report: JsonObject, measured: Measured, notes: dict[str, str]
) -> None:
    """The sections table every ``compile`` view ends with: one row per section, each
    character counted once, the total the sum of the rows; then how tokens are counted."""
    table = Table(title="Sections", title_justify="left", show_edge=False, pad_edge=False)
    table.add_column("section")
    table.add_column("characters", justify="right")
    table.add_column("tokens", justify="right")
    table.add_column("notes")
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
