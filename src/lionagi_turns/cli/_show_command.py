"""The ``show`` command on the ``lionagi-turns`` app (``_show`` holds its reports and views).

Registered on ``_app.app`` when ``lionagi_turns.cli`` is imported, as every other command.
"""

from __future__ import annotations

from typing import Annotated

import typer

from lionagi_turns.cli._app import _POINTER, _Once, app
from lionagi_turns.cli._branch_diff import render_branch_diff
from lionagi_turns.cli._html import print_html
from lionagi_turns.cli._inputs import EXIT_BAD_INPUT, EXIT_REJECTED, die
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._load import DEFAULT_MAX_BYTES
from lionagi_turns.cli._options import MaxBytesOpt, PageFormat, PageFormatOpt
from lionagi_turns.cli._show import (
    call_report,
    chosen,
    list_report,
    read_captures,
    render_call,
    render_list,
)
from lionagi_turns.cli._show_diff import calls_diff, other_call
from lionagi_turns.cli._views import console, print_json

__all__ = ("show_command",)

CaptureArg = Annotated[
    str,
    typer.Argument(
        metavar="PATH", help="A capture file (LIONAGI_TURNS_CAPTURE=DIR writes them)."
    ),
]
DiffOpt = Annotated[
    str | None,
    typer.Option("--diff", metavar="M|FILE#M",
                 help="With --call N: how call M (of this file, or FILE's) differs from N."),
]
CallOpt = Annotated[
    int | None,
    typer.Option("--call", metavar="N", help="Show call N (1-based) as compile shows a request."),
]


@app.command(
    "show", cls=_Once, epilog=_POINTER,
    short_help="The model calls a capture file recorded, one or two at a time.",
)
def show_command(
    path: CaptureArg,
    call: CallOpt = None,
    format: PageFormatOpt = PageFormat.text,
    max_bytes: MaxBytesOpt = DEFAULT_MAX_BYTES,
    diff: DiffOpt = None,
) -> None:
    """List the model calls a capture file recorded; with --call N, show that call's request
    as it was sent; with --call N --diff M, how call M's request differs from call N's."""
    calls = read_captures(path, max_bytes)
    if diff is not None:
        _diff(path, calls, call, diff, format, max_bytes)
        return
    if call is None:
        report = list_report(calls)
        if format is PageFormat.json:
            print_json(report)
        elif format is PageFormat.html:
            die(EXIT_BAD_INPUT, "bad option: show --format html shows one call; add --call N")
        else:
            render_list(console(), report)
        return
    line = chosen(calls, call, path)
    shown, measured = call_report(line, call, path)
    if format is PageFormat.json:
        print_json(line)
    elif format is PageFormat.html:
        print_html(shown, measured)
    else:
        render_call(console(), line, shown, measured)


def _diff(
    path: str,
    calls: list[JsonObject],
    call: int | None,
    spec: str,
    format: PageFormat,
    max_bytes: int,
) -> None:
    if call is None:
        die(EXIT_BAD_INPUT, "bad option: --diff M needs --call N (the call to compare with)")
    if format is PageFormat.html:
        die(EXIT_BAD_INPUT, "bad option: show --diff has no html page; use text or json")
    report = calls_diff((f"{path}#{call}", chosen(calls, call, path)),
                        other_call(spec, path, max_bytes))
    if format is PageFormat.json:
        print_json(report)
    else:
        render_branch_diff(console(), report)
    if not report["identical"]:
        raise typer.Exit(EXIT_REJECTED)
