"""``lionagi-turns check``: every defect the compiler would reject in the stored view, and the
warnings a reviewer should see although the compiler accepts them.

``check_report`` is pure; ``render_check`` is its text view. Exit 0 when there is no defect
(warnings alone do not fail), 1 otherwise.

Defects: the history defects of the compiler's own projection (``project_history``, the walk
``compile_chat_request`` runs), plus a stored instruction whose ``image_detail`` is not one the
current instruction may carry (``low``, ``high``, ``auto`` or none: the same rule for history
and the current turn); when there is none, the error a compile of the next turn would still
raise (kind ``compile_error``).

Warnings (the ADR's render rules kept, shown so nothing is sent unseen):

- ``empty_instruction``: a retained instruction that renders whitespace-only, so it is sent as
  the user message ``{}``;
- ``empty_assistant``: a retained assistant response (or run of them) whose text is empty, so it
  is left out and the user messages around it are sent adjacent;
- ``prompt_cache_record``: a prompt-cache record (``metadata["lionagi_turns.prompt_cache"]``)
  the prompt-cache profile does not use: not a well-formed record, a recorded sent text that
  does not verify (its durable view is sent instead), or a recorded stable segment without a
  tool section the profile renders (``prompt_cache._compile.compile_cached``'s ``audit``).
  Looked for only when the view holds a record.
- ``ceiling_record``: an input-ceiling record (``metadata["lionagi_turns.ceiling"]``) no compile
  could have written (its first kept turn is not at or before its own instruction); a compile
  under any ceiling ignores it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from lionagi_turns.cli._amendment1 import exclusions_rows, render_exclusions
from lionagi_turns.cli._inputs import next_request
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._load import LoadedBranch, one_line
from lionagi_turns.cli._shape import header
from lionagi_turns.cli._views import inert_text
from lionagi_turns.core.errors import DEFECT_RULES, with_notes
from lionagi_turns.core.history import (
    AssistantTurn,
    InstructionTurn,
    Projection,
    project_history,
    select_ids,
)
from lionagi_turns.core.parts import check_image_detail
from lionagi_turns.core.pipeline import Trace, compile_traced
from lionagi_turns.profiles.amendment1._ceiling import read_first_kept
from lionagi_turns.profiles.prompt_cache._compile import compile_cached
from lionagi_turns.profiles.prompt_cache._record import record_data

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("check_report", "next_step", "render_check", "short_ids")


def _entry(kind: str, message: str, positions: list[int], ids: list[str]) -> JsonObject:
    return {"kind": kind, "message": message, "positions": positions, "ids": ids}


def _image_detail_defects(projection: Projection) -> list[JsonObject]:
    """Retained instructions whose ``image_detail`` the current instruction could not carry
    (``core.parts.check_image_detail``, the one rule for both)."""
    out = []
    for turn in projection.turns:
        if not isinstance(turn, InstructionTurn):
            continue
        try:
            check_image_detail(turn.message.content.image_detail)
        except ValueError as exc:
            uid = str(turn.message.id)
            out.append(
                _entry(
                    "image_detail",
                    f"instruction at position {turn.position} (id {uid}): {exc}, as for the "
                    "current instruction",
                    [turn.position],
                    [uid],
                )
            )
    return out


def _empty_assistant(turn: AssistantTurn) -> JsonObject:
    ids = [str(m.id) for m in turn.messages]
    at = ", ".join(str(p) for p in turn.positions)
    return _entry(
        "empty_assistant",
        f"assistant response at position {at} (id {', '.join(ids)}) is empty and is left out: "
        "the user messages before and after it are sent adjacent",
        list(turn.positions),
        ids,
    )


def _empty_instruction(turn: InstructionTurn, sent: str) -> JsonObject:
    uid = str(turn.message.id)
    return _entry(
        "empty_instruction",
        f"instruction at position {turn.position} (id {uid}) renders whitespace-only and is "
        f"sent as the user message {_quoted(sent)}",
        [turn.position],
        [uid],
    )


def _quoted(text: str) -> str:
    if len(text) <= 40:
        return repr(text)
    return f"{text[:20]!r}… ({len(text):,} characters)"


def _projected_warnings(projection: Projection) -> list[JsonObject]:
    """Warnings the projection alone shows (used when the next turn does not compile)."""
    return [
        _empty_assistant(turn)
        for turn in projection.turns
        if isinstance(turn, AssistantTurn)
        and not any(m.content.assistant_response for m in turn.messages)
    ]


def _rendered_warnings(trace: Trace) -> list[JsonObject]:
    """Warnings read from what the compile rendered: an omitted assistant turn, a history
    instruction rendered whitespace-only or as ``{}``."""
    out = []
    for part in trace.rendered:
        if part.source != "history":
            continue
        if isinstance(part.turn, AssistantTurn) and part.message_index is None:
            out.append(_empty_assistant(part.turn))
        elif (
            isinstance(part.turn, InstructionTurn)
            and isinstance(part.content, str)
            and part.content.strip() in ("", "{}")
        ):
            out.append(_empty_instruction(part.turn, part.content))
    return out


def _ceiling_warnings(branch: Branch) -> list[JsonObject]:
    """The ceiling records of the view that no compile could have written (module
    docstring): a compile under any ceiling ignores them."""
    _, ignored = read_first_kept(branch, select_ids(branch, None))
    return [_entry("ceiling_record", i.reason, [i.position], [i.id]) for i in ignored]


def _record_warnings(branch: Branch) -> list[JsonObject]:
    """The prompt-cache records of the view the profile does not use (module docstring)."""
    pile: dict[UUID, object] = branch.msgs.messages.collections  # type: ignore[has-type]
    view = select_ids(branch, None)
    if not any(record_data(pile.get(uid)) is not None for uid in view):
        return []
    try:
        result = compile_cached(branch, next_request(branch, None), None, audit=True)
    except (ValueError, TypeError):  # the default compile accepted it; reported there if not
        return []
    return [
        _entry(
            "prompt_cache_record",
            ("recorded stable segment: " if i.position is None else "") + i.reason,
            [] if i.position is None else [i.position],
            [] if i.id is None else [i.id],
        )
        for i in result.ignored
    ]


def check_report(loaded: LoadedBranch) -> JsonObject:
    """The ``check --format json`` object, shape ``lionagi-turns/check@1`` (``_shape``): ``ok``
    (no defect), ``defects``, ``warnings``, ``view_records`` (each record of the view: position,
    id, kind), the loader's ``notes`` and ``view_exclusions``."""
    branch = loaded.branch
    projection = project_history(branch, select_ids(branch, None))
    defects = [d.to_dict() for d in projection.defects]
    named = {i for d in defects for i in d["ids"]}
    defects += [d for d in _image_detail_defects(projection) if not named & set(d["ids"])]
    warnings = _projected_warnings(projection)
    if not defects:
        try:
            trace = compile_traced(branch, next_request(branch, None))
        except (ValueError, TypeError) as exc:
            defects.append(
                _entry(
                    "compile_error", f"{type(exc).__name__}: {one_line(with_notes(exc))}", [], []
                )
            )
        else:
            warnings = (_rendered_warnings(trace) + _record_warnings(branch)
                        + _ceiling_warnings(branch))
    records = []
    pile: dict[UUID, object] = branch.msgs.messages.collections  # type: ignore[has-type]
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
        **header("check", loaded),
        "ok": not defects,
        "defects": defects,
        "warnings": warnings,
        "view_records": records,
        "notes": list(loaded.notes),
        "view_exclusions": exclusions_rows(branch),
    }


# The next step of check's own kinds; the compiler's kinds take theirs from DEFECT_RULES.
_NEXT_STEPS = {
    "image_detail": "Set the instruction's image_detail to low, high or auto, or remove it.",
    "compile_error": "Run `lionagi-turns compile` on this file to see the whole error.",
    "empty_instruction": "Give the instruction visible text, or leave it out of the "
    "progression, unless the model should see that message.",
    "empty_assistant": "Record the response's text, or leave it out of the progression, "
    "unless the user messages should reach the model adjacent.",
}
SHORT_ID = 8


def next_step(kind: str) -> str:
    """What to do about an entry of ``kind`` (a defect or a warning)."""
    rule = DEFECT_RULES.get(kind)  # type: ignore[call-overload]
    return rule.hint if rule is not None else _NEXT_STEPS[kind]


def short_ids(ids: list[str]) -> dict[str, str]:
    """Each id's shortest prefix of at least ``SHORT_ID`` characters that no other id in
    ``ids`` starts with (a whole id when none is shorter)."""
    unique = sorted(set(ids))
    size = SHORT_ID
    while size < max((len(i) for i in unique), default=0) and len({i[:size] for i in unique}) < len(
        unique
    ):
        size += 1
    return {i: i[:size] for i in unique}


def _entries(console: Console, entries: list[JsonObject], style: str) -> None:
    """One block per entry: its kind and positions, what is wrong (whole ids, wrapped only
    between words), the ids on their own lines and the next step."""
    for n, d in enumerate(entries, 1):
        at = ", ".join(str(p) for p in d["positions"])
        where = f" at position {at}" if len(d["positions"]) == 1 else f" at positions {at}"
        console.print(Text.assemble(f"{n}. ", (d["kind"], style), where if d["positions"] else ""))
        console.print(Padding(inert_text(d["message"]), (0, 0, 0, 3)))
        for uid in d["ids"]:
            console.print(Padding(Text.assemble(("id ", "dim"), inert_text(uid)), (0, 0, 0, 3)))
        console.print(Padding(Text(f"next step: {next_step(d['kind'])}", "cyan"), (0, 0, 0, 3)))


def render_check(console: Console, report: JsonObject) -> None:
    """The text view of ``report``: the verdict, defects, warnings, then the view with each
    record's defects and warnings."""
    defects, warnings = report["defects"], report["warnings"]
    path = report["path"]
    records = report["records"]
    warned = f"; {len(warnings)} warning(s)" if warnings else ""
    if not defects:
        console.print(
            Text.assemble(
                ("✓ ", "bold green"),
                inert_text(path),
                f": no defects in {report['view']} ({records} records); the compiler accepts "
                f"it{warned}",
            )
        )
    else:
        console.print(
            Text.assemble(
                ("✗ ", "bold red"),
                inert_text(path),
                f": {len(defects)} defect(s) in {report['view']} ({records} records){warned}",
            )
        )
    for note in report["notes"]:
        console.print(inert_text(f"note: {note}", "yellow"))
    if defects:
        _entries(console, defects, "bold red")
    if warnings:
        console.print(Text("warnings (sent as shown; not defects):", style="yellow"))
        _entries(console, warnings, "bold yellow")
    render_exclusions(console, report["view_exclusions"])
    if not defects and not warnings:
        return
    flagged: dict[int, list[str]] = {}
    for d in [*defects, *warnings]:
        for p in d["positions"]:
            flagged.setdefault(p, []).append(d["kind"])
    short = short_ids([r["id"] for r in report["view_records"]])
    view = Table(
        title="View (short ids; --format json has them whole)",
        title_justify="left",
        show_edge=False,
        pad_edge=False,
    )
    view.add_column("pos", justify="right", no_wrap=True)
    view.add_column("id", no_wrap=True)
    view.add_column("record", no_wrap=True)
    view.add_column("defects / warnings", style="red")
    for record in report["view_records"]:
        view.add_row(
            str(record["position"]),
            inert_text(short[record["id"]]),
            record["kind"] or Text("— missing —", style="red"),
            ", ".join(flagged.get(record["position"], [])),
        )
    console.print(view)
