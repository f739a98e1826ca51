"""``compile --profile amendment1``: the next turn under ADR-0007 Amendment 1, with each
section's authority, posture, budget, kept and left-out; and ``check``'s view exclusions.

- ``parse_budgets(values)``: ``SECTION=N`` options (N tokens, o200k) as ``SectionBudgets``;
  ValueError names the bad option.
- ``amended_turn(loaded, spec, budgets)``: the ``lionagi-turns/compile@1`` fields every
  profile shares (``_compile.turn_fields``: ``sections`` partitions the request as in the
  default profile), ``fold``, ``messages`` and ``bounds`` (one row per Amendment 1 section),
  and the sections message by message; a refused section (exit 1) reports its bound records
  in the error line.
- ``render_amended(console, loaded, report, measured)``: ``_request_view``'s one view of the
  report: the facts, the bounds table (``render_bounds``: with the ceiling and each record
  left out), each message framed as every profile frames it, then the sections table.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from lionagi_turns.amendment1 import (
    CEILING_KEY,
    InputCeiling,
    SectionBudgets,
    ToolResultClearing,
    bounds_rows,
    exclusions_rows,
)
from lionagi_turns.cli._compile import fold_parts, fold_report, turn_fields
from lionagi_turns.cli._compile_view import render_opening, section_notes, view_title
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._load import LoadedBranch
from lionagi_turns.cli._numbers import budget, count, number
from lionagi_turns.cli._request_view import RequestView, message_frame, render_request
from lionagi_turns.cli._sections import Measured, measure
from lionagi_turns.cli._tables import add_column, view_table
from lionagi_turns.cli._turn import TurnSpec
from lionagi_turns.cli._views import inert_text
from lionagi_turns.cli._window import Paging
from lionagi_turns.cli._wrap import fit
from lionagi_turns.core.history import select_ids
from lionagi_turns.core.providers import to_provider_messages
from lionagi_turns.profiles.amendment1._ceiling import read_first_kept
from lionagi_turns.profiles.amendment1._compile import compile_amended_traced
from lionagi_turns.profiles.amendment1._contracts import SECTIONS, ContextBlock, TurnRequest
from lionagi_turns.profiles.amendment1._summary import summary_for

__all__ = (
    "amended_turn",
    "exclusions_rows",
    "parse_budgets",
    "parse_ceiling",
    "refused_summary",
    "render_amended",
    "render_bounds",
    "render_ceiling",
    "render_exclusions",
    "summary_field",
)


def parse_budgets(values: Sequence[str]) -> SectionBudgets:
    budgets: dict[str, int] = {}
    for i, value in enumerate(values):
        name, sep, number = value.partition("=")
        name = name.strip()
        if not sep or name not in SECTIONS or not number.strip().isdigit():
            raise ValueError(
                f"--budget #{i + 1} {value[:60]!r} is not SECTION=N with SECTION one of "
                f"{', '.join(SECTIONS)} and N a whole number of tokens"
            )
        if name in budgets:
            raise ValueError(
                f"--budget #{i + 1} sets {name} again; give each section's budget once"
            )
        budgets[name] = int(number)
    return SectionBudgets(**budgets)


def parse_ceiling(
    tokens: int | None,
    low_water: int | None,
    clear_results: int | None = None,
    budgets: SectionBudgets | None = None,
) -> InputCeiling | None:
    """``--ceiling N [--low-water N] [--clear-results KEEP]`` as an ``InputCeiling`` (None
    without ``--ceiling``); ValueError names the bad value, or the ``--budget`` section (in
    ``budgets``) that a ceiling sets itself."""
    if tokens is None:
        for name, value in (("--low-water", low_water), ("--clear-results", clear_results)):
            if value is not None:
                raise ValueError(f"{name} needs --ceiling")
        return None
    for name in ("history", "tool_results"):
        if budgets is not None and getattr(budgets, name) is not None:
            raise ValueError(
                f"--budget {name}=N cannot be given with --ceiling: the ceiling sets the "
                f"{name} bound itself; drop one of them"
            )
    clearing = None if clear_results is None else ToolResultClearing(keep=clear_results)
    return InputCeiling(tokens, low_water=low_water, clear_tool_results=clearing)


def amended_turn(
    loaded: LoadedBranch, spec: TurnSpec, budgets: SectionBudgets,
    ceiling: InputCeiling | None = None,
) -> tuple[JsonObject, Measured]:
    """The ``compile --profile amendment1`` report and its sections (module docstring); under
    a ceiling the report's ``ceiling`` is the record the compiled instruction carries."""
    request = TurnRequest(
        instruction=spec.instruction,
        progression=spec.progression,
        context_blocks=tuple(ContextBlock(b.provider_name, b.content) for b in spec.blocks),
    )
    compiled, trace = compile_amended_traced(loaded.branch, request, budgets=budgets,
                                             ceiling=ceiling)
    messages = to_provider_messages(compiled)  # type: ignore[arg-type]  # reads .messages only
    measured = measure(messages, trace.fold_message_index, fold_parts(trace))
    report = {
        **turn_fields(loaded, spec, "amendment1", measured),
        "fold": fold_report(trace),
        "messages": messages,
        "bounds": bounds_rows(compiled),
    }
    if ceiling is not None:
        report["ceiling"] = dict(compiled.instruction.metadata[CEILING_KEY])
        report.update(summary_field(loaded, report["ceiling"]))
        ids = select_ids(loaded.branch, spec.progression)
        report["ignored_records"] = [
            {"position": i.position, "id": i.id, "reason": i.reason}
            for i in read_first_kept(loaded.branch, ids, ceiling)[1]
        ]
    return report, measured


def summary_field(loaded: LoadedBranch, record: JsonObject) -> JsonObject:
    """``{"summary": ...}``: the recorded summary (tier 3) this request sends, with the ids it
    stands for, the drop step, the summarizer's model and its tokens; ``{}`` when it sends none."""
    summary = summary_for(loaded.branch, record.get("first")) if record.get("summarized") else None
    return {} if summary is None else {"summary": summary.to_json()}


def refused_summary(exc: object) -> str:
    """The refused sections of a ``SectionBudgetRefused`` and every record, one line."""
    parts = [
        f"{r['section']}({r['authority']}, {r['posture']}, budget {budget(r['budget'])}, "
        f"kept {len(r['kept'])}, left out {len(r['left_out'])})"
        for r in bounds_rows(exc)
    ]
    return "; ".join(parts)


def _left(row: JsonObject) -> str:
    if not row["left_out"]:
        return "—"
    counts: dict[str, int] = {}
    for entry in row["left_out"]:
        counts[entry["reason"]] = counts.get(entry["reason"], 0) + 1
    return ", ".join(f"{n} {reason}" for reason, n in counts.items())


def render_bounds(console: Console, report: JsonObject) -> None:
    """The Amendment 1 table (each section's authority, posture, budget, kept, left out),
    the ceiling when the report has one, and one line per record left out."""
    table = view_table("Sections (ADR-0007 Amendment 1)")
    for column in ("section", "authority", "posture", "budget", "kept", "left out"):
        add_column(table, column)
    for row in report["bounds"]:
        table.add_row(
            row["section"], row["authority"], row["posture"],
            budget(row["budget"]),
            str(len(row["kept"])), _left(row),
        )
    console.print(table)
    if "ceiling" in report:
        render_ceiling(console, report["ceiling"], report.get("summary"))
    for row in report["bounds"]:
        for line in left_out_lines(row):
            note(console, line, "dim")


def left_out_lines(row: JsonObject) -> list[str]:
    """One line per record left out, naming it, why and its size; records left out for one
    reason in a row other than ``cleared`` (whose each size matters to tier 1) share a line."""
    lines: list[str] = []
    entries = row["left_out"]
    i = 0
    while i < len(entries):
        reason = entries[i]["reason"]
        j = i + 1
        while reason != "cleared" and j < len(entries) and entries[j]["reason"] == reason:
            j += 1
        group = entries[i:j]
        sizes = [e["tokens"] for e in group if e["tokens"] is not None]
        tokens = f" ({sum(sizes):,} tokens)" if sizes else ""
        names = ", ".join(e["name"] for e in group)
        what = names if len(group) == 1 else f"{len(group):,} records: {names}"
        lines.append(f"{row['section']}: left out [{reason}]{tokens} {what}")
        i = j
    return lines


def note(console: Console, text: str, style: str = "", indent: int = 2) -> None:
    """``text`` as lines within the console's width, the first indented by ``indent``, the
    ones it continues on by two more."""
    room = max(console.width - indent - 2, 20)
    for n, piece in enumerate(fit(text, room)):
        console.print(inert_text(" " * (indent + (2 if n else 0)) + piece.strip(), style))


def render_amended(
    console: Console,
    loaded: LoadedBranch,
    report: JsonObject,
    measured: Measured,
    last: int | Paging | None = None,
) -> None:
    """The ``compile --profile amendment1`` text view, ``_request_view``'s one view: the
    facts, the bounds (``render_bounds``), each message framed, then the sections table."""

    def preamble(console: Console) -> None:
        render_opening(console, loaded, report)
        render_bounds(console, report)
        console.print()

    view = RequestView(
        view_title(report), report, measured, section_notes(report, measured),
        lambda i: message_frame(i, report, measured), preamble=preamble,
    )
    render_request(console, view, last)


def render_ceiling(
    console: Console, record: JsonObject, summary: JsonObject | None = None
) -> None:
    """The ceiling, how full each section is, the truncation point, the turns left, the
    calibration in force and the recorded summary the request sends."""
    used, tokens = record["used"], record["ceiling"]
    note(console, f"Input ceiling {number(tokens)} tokens (low-water "
                  f"{number(record['low_water'])}): {number(used)} used, "
                  f"{used * 100 // tokens}% full", indent=0)
    table = view_table()
    add_column(table, "section")
    add_column(table, "tokens", "right")
    add_column(table, "share", "right")
    for name, size in record["sections"].items():
        table.add_row(name, number(size), f"{size * 100 // tokens}%")
    console.print(table)
    step = "this request is a drop step" if record["stepped"] else "no drop step this request"
    kept, left = record["kept_turns"], record["turns_before_next_step"]
    start = ("no turn of history is kept" if not kept else
             f"history starts at {record['first'] or 'the first turn (nothing dropped yet)'}")
    note(console, f"truncation point: {start}; {step}")
    if "cleared" in record:
        note(console,
             f"tool results cleared: {count(len(record['cleared']), 'result')}, "
             f"{count(record['cleared_tokens'], 'token')} (each listed as [cleared]; a step "
             "clears older results before it drops turns)")
    if summary is not None:
        by = f"model {summary['model']}" if summary["model"] else "a callable"
        reported = {k: v for k, v in (summary["tokens"] or {}).items() if k != "summary"}
        asked = ", ".join(f"{k} {v:,}" for k, v in reported.items())
        note(console,
             f"summary (tier 3): drop step {summary['step']}, stands for "
             f"{count(len(summary['covers']), 'record')} (listed as summarized), adds "
             f"{count((summary['tokens'] or {}).get('summary', 0), 'token')}; written by {by}"
             + (f" ({asked} tokens)" if asked else ""))
    typical = record["typical_turn"]
    note(console,
         f"{count(kept, 'turn')} kept, typical {count(typical, 'token')}; "
         f"{count(left, 'more turn')} of that size fit before the next drop step"
         if kept and typical is not None and left is not None
         else "no turn kept, so no typical turn to size the next drop step by")
    note(console, calibration_line(record.get("calibration")))


def calibration_line(calibration: object) -> str:
    """The calibration in force, in words (a record without one: the offline measure)."""
    if not isinstance(calibration, dict):
        return "calibration: none recorded (the offline measure)"
    bounded = (f"bounded at {number(calibration['limit'])} offline tokens (low-water "
               f"{number(calibration['low_limit'])})")
    if calibration["source"] == "reported":
        ratios = calibration["ratios"]
        model = calibration["model"] or "the model"
        return (f"calibration: {model}'s own count, factor {calibration['factor']:.4f} (the "
                f"largest of {count(len(ratios), 'reported ratio')}, "
                f"{max(ratios):.4f}, plus a {calibration['margin']:.0%} margin); {bounded}")
    margin = calibration["margin"]
    kept = f", {margin:.0%} kept free" if margin else ""
    return f"calibration: the offline measure (no usage reported yet{kept}); {bounded}"


def render_exclusions(console: Console, rows: list[JsonObject]) -> None:
    if not rows:
        return
    console.print(Text(
        f"view exclusions ({len(rows)}): records the active view leaves out "
        "(history left_out under the amendment1 profile)", style="yellow",
    ))
    table = view_table()
    for column in ("id", "record", "reason", "source"):
        add_column(table, column)
    for row in rows:
        table.add_row(row["id"], row["kind"], row["reason"],
                      "recorded" if row["recorded"] else "unrecorded (read as evicted)")
    console.print(table)
