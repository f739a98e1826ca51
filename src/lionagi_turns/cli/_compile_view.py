"""The default profile's ``compile`` text view, and the facts every profile's view opens with.

Contracts:

- ``render_compile(console, loaded, report, measured, last)`` is ``_request_view``'s one view
  of ``report``: the facts (``request_facts``), the fold's placement, the reload note, the
  branch's notes and the ``--at K`` lines, each message framed (the fold's lines labelled),
  then the sections table with ``section_notes``.
- ``request_facts(console, report, has_system)``: how many messages are sent and where they
  were read from, whether the branch has system text, how many context blocks, and the stage
  profile's stages when the report names them; every profile's view prints them first.
- ``render_opening(console, loaded, report)``: those facts, the reload note, the branch's
  notes and the ``--at K`` lines, in that order: the opening of every profile's view.
- ``render_reload_note`` prints ``RELOAD_NOTE`` once when the report's
  ``lionagi_reload_sends_no_system`` is true; ``render_at`` the ``--at K`` lines.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._load import LoadedBranch
from lionagi_turns.cli._request_view import (
    FOLD_WORDS,
    RequestView,
    message_frame,
    render_request,
)
from lionagi_turns.cli._sections import Measured
from lionagi_turns.cli._views import inert_text
from lionagi_turns.cli._window import Paging

__all__ = (
    "RELOAD_NOTE",
    "render_at",
    "render_compile",
    "render_opening",
    "render_reload_note",
    "request_facts",
    "section_notes",
    "view_title",
)

#: The one line the text views print when ``LoadedBranch.system_lost_by_from_dict``.
RELOAD_NOTE = (
    "plain lionagi sends no system text after Branch.from_dict; install() sends it"
)


def view_title(report: JsonObject) -> str:
    """``lionagi-turns compile [--profile P] PATH`` for ``report``."""
    profile = report.get("profile", "default")
    shown = "" if profile == "default" else f"--profile {profile} "
    return f"lionagi-turns compile {shown}{report['path']}"


def request_facts(console: Console, report: JsonObject, has_system: bool) -> None:
    """The facts every profile's view opens with (module contract)."""
    sent = len(report["messages"])
    console.print(inert_text(
        f"messages sent: {sent:,} ({sent - 1:,} from the history, read from the "
        f"{report['records']:,} record(s) listed in {report['view']}, then the current turn) · "
        f"system text: {'yes' if has_system else 'no'} · "
        f"context blocks: {len(report['context_blocks'])}"
    ))
    if report.get("stages"):
        console.print(inert_text(f"stages: {', '.join(report['stages'])}"))
    fold = report.get("fold") or {}
    if fold.get("sections"):
        parts = " + ".join(FOLD_WORDS.get(label, label) for label in fold["sections"])
        console.print(f"{parts} placed in message [{fold['message_index']}] (the fold)")


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


def render_opening(console: Console, loaded: LoadedBranch, report: JsonObject) -> None:
    """What every profile's view opens with: the facts, the reload note, the branch's notes
    and the ``--at K`` lines."""
    request_facts(console, report, loaded.branch.msgs.system is not None)
    render_reload_note(console, report)
    for note in loaded.notes:
        console.print(inert_text(f"note: {note}", "yellow"))
    render_at(console, report)


def render_compile(
    console: Console,
    loaded: LoadedBranch,
    report: JsonObject,
    measured: Measured,
    last: int | Paging | None = None,
) -> None:
    """The default profile's text view of ``report`` (module contract)."""

    def preamble(console: Console) -> None:
        render_opening(console, loaded, report)
        console.print()

    view = RequestView(
        view_title(report), report, measured, section_notes(report, measured),
        lambda i: message_frame(i, report, measured), preamble=preamble,
    )
    render_request(console, view, last)


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
