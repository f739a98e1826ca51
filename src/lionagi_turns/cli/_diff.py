"""``lionagi-turns diff``: lionagi 0.36's own payload against the compiled one, per message, each
difference labelled with the intended-difference registry entry that explains it.

``diff_report`` is pure (it imports the characterization registry, the one command that does)
and returns the ``lionagi-turns/diff@1`` shape; ``render_diff`` is its text view. Exit 0 when
every difference is registered and the compiler accepts the history; 1 when a difference is not
registered or the compiler rejects the history (``compiled_error``: then nothing is sent,
whatever lionagi does). ``sections`` are the compiled request's
(``_sections``; None when the compiler rejects the history); ``lionagi_sections`` are
lionagi's payload split by message only (``history``, ``current_turn``: lionagi keeps no fold
plan, so its system, guidance and context count in the message that carries them).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence

from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from lionagi_turns.cli import _frame as frame
from lionagi_turns.cli._compile import compiled_turn
from lionagi_turns.cli._inputs import next_request
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._lines import Lines
from lionagi_turns.cli._load import LIONAGI_VERSION, LoadedBranch
from lionagi_turns.cli._request_view import shown_from
from lionagi_turns.cli._sections import measure
from lionagi_turns.cli._shape import header
from lionagi_turns.cli._turn import TurnSpec, turn_spec
from lionagi_turns.cli._views import bounded_rows, inert_text
from lionagi_turns.core.contracts import ContextBlock

__all__ = ("diff_report", "message_lines", "render_diff")


def message_lines(message: JsonObject | None) -> list[str]:
    if message is None:
        return []
    content = message["content"]
    head = [f"role: {message['role']}"]
    if isinstance(content, str):
        return [*head, *content.split("\n")]
    return [*head, *json.dumps(content, indent=2, ensure_ascii=False).split("\n")]


def diff_report(
    loaded: LoadedBranch, instruction: str | None = None, blocks: tuple[ContextBlock, ...] = ()
) -> JsonObject:
    """Both payloads of the next turn compared (``characterize.compare``): per compiled
    message index its unified diff lines (empty when identical) and the ids of the entries that
    explain it; the entries that explain an error outcome; what no entry explains; ``ok``."""
    from lionagi_turns import characterize

    branch = loaded.branch
    comparison = characterize.compare(branch, next_request(branch, instruction, blocks))
    entries = {
        e.id: {"adr_clause": e.adr_clause, "design_ref": e.design_ref, "summary": e.summary}
        for e in characterize.REGISTRY
    }
    legacy = comparison.legacy or []
    compiled = comparison.compiled or []
    one_side: JsonObject | None = None
    if (comparison.legacy is None) != (comparison.compiled is None):
        # One side raised: show what the other side sends instead of diffing against nothing.
        side = "lionagi" if comparison.compiled is None else "lionagi-turns"
        one_side = {"side": side, "messages": legacy or compiled}
        legacy = compiled = []
    messages = _message_diffs(legacy, compiled, comparison.labels)
    labelled = {label for labels in comparison.labels.values() for label in labels}
    spec = turn_spec(loaded, instruction, blocks, None, "default")
    sections, legacy_sections = _both_sections(loaded, spec, comparison.legacy)
    return {
        **header("diff", loaded),
        "instruction": spec.text,
        "instruction_is_placeholder": spec.placeholder,
        "context_blocks": [b.provider_name for b in blocks],
        "sections": sections,
        "lionagi_sections": legacy_sections,
        "lionagi_version": LIONAGI_VERSION,
        "legacy_error": comparison.legacy_error,
        "compiled_error": comparison.compiled_error,
        "one_side": one_side,
        "messages": messages,
        "outcome_entries": [e for e in comparison.entries if e not in labelled],
        "entries": entries,
        "unexplained": list(comparison.unexplained),
        "ok": comparison.ok,
    }


def _message_diffs(
    legacy: Sequence[JsonObject],
    compiled: Sequence[JsonObject],
    labels: Mapping[int, tuple[str, ...]],
) -> list[JsonObject]:
    """Per message index: its unified diff lines (empty when equal) and its entry labels."""
    messages = []
    for i in range(max(len(legacy), len(compiled))):
        old = legacy[i] if i < len(legacy) else None
        new = compiled[i] if i < len(compiled) else None
        # Equal messages have an empty unified diff: skip the matcher (most of a long branch).
        diff = [] if old == new else list(difflib.unified_diff(
            message_lines(old),
            message_lines(new),
            fromfile=f"lionagi/messages[{i}]",
            tofile=f"lionagi-turns/messages[{i}]",
            lineterm="",
        ))
        messages.append({"index": i, "diff": diff, "labels": list(labels.get(i, ()))})
    return messages


def _both_sections(
    loaded: LoadedBranch, spec: TurnSpec, legacy: Sequence[JsonObject] | None
) -> tuple[dict[str, dict[str, int]] | None, dict[str, dict[str, int]] | None]:
    """(the compiled turn's sections, lionagi's payload's sections); None for a side the
    compiler rejects or whose content no section can measure."""
    try:
        sections = compiled_turn(loaded, spec)[0]["sections"]
    except (ValueError, TypeError):  # the compiler rejects it: compiled_error says why
        sections = None
    try:
        legacy_sections = None if legacy is None else measure(legacy, None, ()).sections
    except TypeError:  # lionagi's own payload holds content no section can measure (shown as is)
        legacy_sections = None
    return sections, legacy_sections


def _intended(report: JsonObject, label: str, prefix: str) -> Text:
    entry = report["entries"].get(label)
    if entry is None:
        return Text.assemble((prefix, "yellow"), inert_text(label))
    return Text.assemble(
        (prefix, "green"),
        (label, "bold green"),
        f" (ADR-0007 {entry['adr_clause']}, {entry['design_ref']}): {entry['summary']}",
    )


def render_diff(console: Console, report: JsonObject, last: int | None = None) -> None:
    """The text view of ``report``: each differing message framed, its labels under it, then
    the verdict (with ``last``, only the last ``last`` message indexes, a line saying how many
    are left out). Every shown line is inert and bounded (``_views``)."""
    console.print(Rule(Text.assemble(("lionagi-turns diff ", "bold"), inert_text(report["path"]))))
    console.print(
        f"--- lionagi {report['lionagi_version']} (_prepare_run_kwargs)   +++ lionagi-turns "
        "(compile_chat_request)"
    )
    if report["legacy_error"]:
        console.print(inert_text(f"lionagi raises: {report['legacy_error']}", "red"))
    if report["compiled_error"]:
        console.print(inert_text(f"lionagi-turns raises: {report['compiled_error']}", "red"))
    out = Lines(console)
    one_side = report["one_side"]
    if one_side is not None:
        sent = one_side["messages"]
        for i in range(shown_from(out, len(sent), last), len(sent)):
            out.rule(out.styled(f"{one_side['side']} sends messages[{i}]", "bold"), style="dim")
            for row in bounded_rows(message_lines(sent[i])):
                frame.line(out, row.text)
            out.end("dim")
    messages = report["messages"]
    for message in messages[shown_from(out, len(messages), last) :]:
        _diff_frame(out, report, message)
    out.flush()
    for label in report["outcome_entries"]:
        console.print(_intended(report, label, "intended: "))
    for problem in report["unexplained"]:
        console.print(Text.assemble(("NOT REGISTERED: ", "bold red"), inert_text(problem)))
    if report["ok"] and report["compiled_error"]:
        console.print(
            Text.assemble(
                ("✗ the compiler rejects this history", "bold red"),
                " (every difference from lionagi is an intended one); run `lionagi-turns "
                "check ",
                inert_text(report["path"]),
                "` to list every defect",
            )
        )
        return
    if report["ok"]:
        console.print(Text("✓ every difference is an intended one", style="bold green"))
        return
    console.print(
        Text(
            f"✗ {len(report['unexplained'])} difference(s) not in the intended-difference "
            "registry",
            style="bold red",
        )
    )


def _diff_frame(out: Lines, report: JsonObject, message: JsonObject) -> None:
    """One message's unified diff framed, then the registry entries that explain it."""
    i = message["index"]
    if not message["diff"]:
        out.write(out.styled(f"messages[{i}]: identical", "dim"))
        return
    out.rule(out.styled(f"messages[{i}]", "bold"), style="blue")
    for row in bounded_rows(message["diff"]):
        line = row.text
        if row.index is None:
            frame.line(out, line, "italic dim")
            continue
        header = line.startswith(("+++", "---", "@@"))
        frame.line(out, line, "bold" if header else {"+": "green", "-": "red"}.get(line[:1], ""))
    out.end("blue")
    for label in message["labels"]:
        entry = report["entries"].get(label)
        if entry is None:
            frame.note(out, "  ↳ intended: ", label, "yellow")
        else:
            frame.note(out, "  ↳ intended: ", f"{label} (ADR-0007 {entry['adr_clause']}, "
                       f"{entry['design_ref']}): {entry['summary']}", "green")
