"""``lionagi-turns compile --profile prompt-cache``: a turn under the prompt-cache profile.

``prompt_cache_report`` is pure: the ``lionagi-turns/compile@1`` fields every profile shares
(``_compile.turn_fields``; ``sections`` counts the payload's ``system`` blocks too: the stable
segment's system text as ``system`` and its tool section as ``tools``, the conversation
segment as ``context_blocks``) plus ``integration._cache.prompt_cache_view`` of the turn:
``segments`` (each with ``characters`` and ``tokens``), ``marks``, ``changes``,
``ignored_records``, ``system``, ``messages``. A saved branch holds no tool functions, so the
stable segment is the branch's system text and the tool section last recorded on the branch.
``render_prompt_cache`` is its text view: one row per system block and message with its size
and mark, what changed against the previous recorded request (why the next call does or does
not read the cache), one line per ignored record, then the sections table.
"""

from __future__ import annotations

from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from lionagi_turns.cli._compile import (
    fold_parts,
    fold_report,
    render_at,
    render_reload_note,
    render_sections,
    shown_range,
    turn_fields,
)
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._lines import Lines
from lionagi_turns.cli._load import LoadedBranch, one_line
from lionagi_turns.cli._sections import Measured, count_tokens, measure
from lionagi_turns.cli._turn import TurnSpec, turn_spec
from lionagi_turns.cli._views import bounded_line, inert, inert_text
from lionagi_turns.cli._window import Paging
from lionagi_turns.core.contracts import ContextBlock, TurnRequest
from lionagi_turns.core.stage import Stage
from lionagi_turns.integration._cache import prompt_cache_traced
from lionagi_turns.profiles.prompt_cache._compile import CachedCompile

__all__ = ("cache_report", "prompt_cache_report", "prompt_cache_turn", "render_prompt_cache")


def _system_sections(loaded: LoadedBranch, stable: int, blocks: list[str]) -> list[str]:
    """The section of each system block: the stable segment is the system text then the tool
    section (each only when non-empty), the rest is the conversation's context section."""
    system = loaded.branch.msgs.system
    has_system = system is not None and bool(system.rendered)
    names = []
    for i, _ in enumerate(blocks):
        if i >= stable:
            names.append("context_blocks")
        elif i == 0 and (has_system or stable == 2):
            names.append("system")
        else:
            names.append("tools")
    return names


def prompt_cache_report(
    loaded: LoadedBranch,
    instruction: str | None = None,
    blocks: tuple[ContextBlock, ...] = (),
    at: int | None = None,
) -> JsonObject:
    """The ``compile --profile prompt-cache --format json`` object (module docstring). Raises
    what the compiler raises for a history it rejects."""
    spec = turn_spec(loaded, instruction, blocks, at, "prompt-cache")
    return prompt_cache_turn(loaded, spec)[0]


def prompt_cache_turn(
    loaded: LoadedBranch, spec: TurnSpec, stages: tuple[Stage, ...] = ()
) -> tuple[JsonObject, Measured]:
    """``prompt_cache_report`` and its sections message by message (for the text view);
    ``stages``: a registered stage profile the layout lays out."""

    request = TurnRequest(
        instruction=spec.instruction, progression=spec.progression, context_blocks=spec.blocks
    )
    view, result = prompt_cache_traced(loaded.branch, request, before=stages)
    report, measured = cache_report(loaded, spec, view, result, "prompt-cache")
    if stages:
        report = {**report, "stages": [stage.name for stage in stages]}
    return report, measured


def cache_report(
    loaded: LoadedBranch, spec: TurnSpec, view: JsonObject, result: CachedCompile, profile: str
) -> tuple[JsonObject, Measured]:
    """The report of a prompt-cache compile ``result`` shown as ``view`` (``cache_view``)
    under the profile name ``profile``, and its sections message by message."""
    trace = result.trace
    texts = [str(b["text"]) for b in view["system"]]
    stable = view["segments"]["stable"]["blocks"]
    named = list(zip(_system_sections(loaded, stable, texts), texts, strict=True))
    measured = measure(view["messages"], trace.fold_message_index, fold_parts(trace), named)
    at = spec.at
    if at is not None and at["sent_text"] is not None:
        at = {**at, "sent_text_matches": at["sent_text"] == trace.rendered[-1].content}
    segments = view["segments"]
    report = {
        **turn_fields(loaded, spec, profile, measured),
        "at": at,
        "fold": fold_report(trace),
        "segments": {
            "stable": _segment(segments["stable"]["blocks"], texts[:stable]),
            "conversation": _segment(segments["conversation"]["blocks"], texts[stable:]),
            "turn": segments["turn"],
        },
        "marks": view["marks"],
        "changes": view["changes"],
        "ignored_records": view["ignored_records"],
        "system": view["system"],
        "messages": view["messages"],
    }
    return report, measured


def _segment(blocks: int, texts: list[str]) -> dict[str, int]:
    return {
        "blocks": blocks,
        "characters": sum(len(t) for t in texts),
        "tokens": sum(count_tokens(t) for t in texts),
    }


def render_prompt_cache(
    console: Console, report: JsonObject, measured: Measured, last: int | Paging | None = None
) -> None:
    """Text view of ``report`` (``measured``: its sections, from ``prompt_cache_turn``): one
    row per system block and message (with ``last``, only the last ``last`` messages, a line
    saying how many are left out), its size and mark."""
    header = Text()
    header.append(f"lionagi-turns compile --profile {report['profile']} ", style="bold")
    header.append_text(inert_text(report["path"]))
    console.print(Rule(header))
    render_reload_note(console, report)
    render_at(console, report)
    segments = report["segments"]
    marks = {m["at"]: f'{m["ttl"]} ({m["segment"]})' for m in report["marks"]}
    rows: list[tuple[str, str, str]] = []
    for i, block in enumerate(report["system"]):
        kind = "stable" if i < segments["stable"]["blocks"] else "conversation"
        text = str(block.get("text", ""))
        rows.append((
            f"system[{i}] {kind}: {one_line(text)[:60]}",
            _size(len(text), count_tokens(text)),
            marks.get(f"system[{i}]", ""),
        ))
    out = Lines(console)
    messages = report["messages"]
    for i in shown_range(out, len(messages), last):
        message = messages[i]
        content = message["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        text = "".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict))
        at = next((k for k in marks if k.startswith(f"messages[{i}].")), None)
        size = measured.messages[i]
        rows.append((
            f"messages[{i}] {message['role']}: {one_line(text)[:60]}",
            _size(size.characters, size.tokens),
            marks.get(at, "") if at else "",
        ))
    _columns(out, ("segment", "size", "mark"), rows)
    out.flush()
    changes = report["changes"]
    changed = [name for name, value in changes.items() if value]
    previous = segments["turn"]["previous_request_end"]
    console.print(
        "changes against the previous recorded request: "
        + (", ".join(changed) if changed else "none")
        + (f" · previous request ended at messages[{previous}]" if previous is not None else "")
    )
    for ignored in report["ignored_records"]:
        where = (
            "recorded stable segment"
            if ignored["position"] is None
            else f"record at position {ignored['position']} (id {ignored['id']})"
        )
        console.print(inert_text(f"ignored {where}: {ignored['reason']}", "yellow"))
    render_sections(console, report, measured, _notes(report, measured))


def _columns(out: Lines, head: tuple[str, str, str], rows: list[tuple[str, str, str]]) -> None:
    """``rows`` under ``head`` in aligned columns, the first inert, the size right-aligned."""
    shown = [(inert(bounded_line(a)), b, c) for a, b, c in rows]
    wide = [max(len(r[k]) for r in [head, *shown]) for k in range(2)]
    out.write(out.styled(f"{head[0]:{wide[0]}} │ {head[1]:>{wide[1]}} │ {head[2]}", "bold"))
    out.write(f"{'─' * wide[0]}─┼─{'─' * wide[1]}─┼─{'─' * max(len(head[2]), 4)}")
    for a, b, c in shown:
        out.write(f"{a:{wide[0]}} │ {b:>{wide[1]}} │ {c}".rstrip())


def _size(characters: int, tokens: int) -> str:
    return f"{characters:,} chars · {tokens:,} tokens"


def _notes(report: JsonObject, measured: Measured) -> dict[str, str]:
    blocks = len(report["context_blocks"])
    history = sum(1 for m in measured.messages if m.section == "history")
    return {
        "system": "stable segment",
        "tools": "stable segment, as recorded",
        "context_blocks": f"{blocks} block(s): conversation or turn",
        "guidance": "folded with later blocks only",
        "history": f"{history} message(s) as sent, the rest",
        "current_turn": "1 message, the rest",
        "total": "the sum of the rows",
    }
