"""``lionagi-turns compile --profile prompt-cache``: a turn under the prompt-cache profile.

``prompt_cache_report`` is pure: the ``lionagi-turns/compile@1`` fields every profile shares
(``_compile.turn_fields``; ``sections`` counts the payload's ``system`` blocks too: the stable
segment's system text as ``system`` and its tool section as ``tools``, the conversation
segment as ``context_blocks``) plus ``integration._cache.prompt_cache_view`` of the turn:
``segments`` (each with ``characters`` and ``tokens``), ``marks``, ``changes``,
``ignored_records``, ``system``, ``messages``. A saved branch holds no tool functions, so the
stable segment is the branch's system text and the tool section last recorded on the branch.
``render_prompt_cache`` is its text view, ``_request_view``'s one view: each system block and
message framed with its size and cache mark, what changed against the previous recorded request
(why the next call does or does not read the cache), one line per ignored record, then the
sections table.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from lionagi_turns.cli._compile import fold_parts, fold_report, turn_fields
from lionagi_turns.cli._compile_view import render_opening, view_title
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._load import LoadedBranch
from lionagi_turns.cli._request_view import Framed, RequestView, message_frame, render_request
from lionagi_turns.cli._sections import Measured, count_tokens, measure
from lionagi_turns.cli._turn import TurnSpec, recorded_tools, turn_spec
from lionagi_turns.cli._views import inert_text
from lionagi_turns.cli._window import Paging
from lionagi_turns.core.contracts import ContextBlock, TurnRequest
from lionagi_turns.core.sections import system_block_sections
from lionagi_turns.core.stage import Stage
from lionagi_turns.integration._cache import prompt_cache_traced
from lionagi_turns.profiles.prompt_cache._compile import CachedCompile

__all__ = ("cache_report", "prompt_cache_report", "prompt_cache_turn", "render_prompt_cache")


def _system_sections(loaded: LoadedBranch, stable: int, blocks: list[str]) -> list[str]:
    """The section of each system block (``core.sections.system_block_sections``)."""
    system = loaded.branch.msgs.system
    return system_block_sections(system is not None and bool(system.rendered), stable,
                                 len(blocks))


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
    # ``--at K``: the stable segment call K was sent with (its record's or an earlier one's),
    # not the one recorded before it (the first call records the first stable segment)
    tools = recorded_tools(loaded, spec.at["instruction"]) if spec.at is not None else None
    view, result = prompt_cache_traced(loaded.branch, request, tools, before=stages)
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


def _block_frames(loaded: LoadedBranch, report: JsonObject, marks: dict[str, str]) -> list[Framed]:
    """The payload's system blocks framed: the segment, what the block holds, its size, its
    lines labelled by their section, and its cache mark."""
    texts = [str(block.get("text", "")) for block in report["system"]]
    stable = report["segments"]["stable"]["blocks"]
    frames = []
    for i, (section, text) in enumerate(zip(_system_sections(loaded, stable, texts), texts,
                                            strict=True)):
        label = _LABELS[section]
        at = f"system[{i}]"
        frames.append(Framed(
            at, "stable segment" if i < stable else "conversation segment", _HOLDS[section],
            _size(len(text), count_tokens(text)), text,
            dict.fromkeys(range(text.count("\n") + 1), label),
            [("cache", marks[at])] if at in marks else [], "magenta",
        ))
    return frames


_LABELS = {"system": "system", "tools": "tools", "context_blocks": "context"}
_HOLDS = {"system": "system text", "tools": "tool section", "context_blocks": "context blocks"}


def render_prompt_cache(
    console: Console,
    loaded: LoadedBranch,
    report: JsonObject,
    measured: Measured,
    last: int | Paging | None = None,
    extra: Callable[[Console], None] | None = None,
) -> None:
    """Text view of ``report`` (``measured``: its sections, from ``prompt_cache_turn``), in
    ``_request_view``'s one view: the facts, ``extra`` (a composed profile's bounds), each
    system block and message framed with its size and cache mark (with ``last``, only the
    messages it selects), what changed against the previous recorded request, the ignored
    records, then the sections table."""
    marks = {m["at"]: f'{m["ttl"]} ({m["segment"]}) mark at {m["at"]}' for m in report["marks"]}

    def preamble(console: Console) -> None:
        render_opening(console, loaded, report)
        if extra is not None:
            extra(console)
        console.print()

    def message(i: int) -> Framed:
        at = next((k for k in marks if k.startswith(f"messages[{i}].")), None)
        return message_frame(i, report, measured, [("cache", marks[at])] if at else [])

    view = RequestView(
        view_title(report), report, measured, _notes(report, measured), message,
        _block_frames(loaded, report, marks), preamble, lambda c: _changes(c, report),
    )
    render_request(console, view, last)


def _changes(console: Console, report: JsonObject) -> None:
    """What changed against the previous recorded request, and each ignored record."""
    changed = [name for name, value in report["changes"].items() if value]
    previous = report["segments"]["turn"]["previous_request_end"]
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
