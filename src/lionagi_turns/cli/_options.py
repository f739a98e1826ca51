"""The ``lionagi-turns`` commands' typer option and argument declarations, and their choices
(``Format``, ``PageFormat``, ``Profile``). Each ``*Opt`` / ``*Arg`` is an ``Annotated`` type a
command parameter takes; its help text is the one ``--help`` shows."""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Annotated

import typer

from lionagi_turns.cli._plugins import load_stage_modules
from lionagi_turns.integration._registry import compositions

__all__ = (
    "AroundOpt",
    "AtOpt",
    "BudgetOpt",
    "CeilingOpt",
    "ContextOpt",
    "Format",
    "FormatOpt",
    "InstructionOpt",
    "LastOpt",
    "LowWaterOpt",
    "MaxBytesOpt",
    "OtherArg",
    "PageFormat",
    "PageFormatOpt",
    "PathArg",
    "Profile",
    "ProfileOpt",
)

MAX_BYTES_ENV = "LIONAGI_TURNS_MAX_BYTES"


def at_least(low: int) -> Callable[[int | None], int | None]:
    """An option callback refusing a whole number under ``low`` (bad input, exit 2). A
    callback rather than an ``IntRange``, so ``--help`` shows the plain metavar."""

    def check(value: int | None) -> int | None:
        if value is not None and value < low:
            raise typer.BadParameter(f"{value} is less than {low}")
        return value

    return check


class Format(StrEnum):
    text = "text"
    json = "json"


class PageFormat(StrEnum):
    """``compile``'s formats: ``check`` and ``diff`` have no page."""

    text = "text"
    json = "json"
    html = "html"


InstructionOpt = Annotated[
    str | None,
    typer.Option(
        "--instruction",
        "-i",
        metavar="TEXT",
        help="The current instruction (default: a placeholder).",
    ),
]
ContextOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--context",
        "-c",
        metavar="NAME=TEXT",
        help="A context block from provider NAME (repeatable, kept in order).",
    ),
]
FormatOpt = Annotated[
    Format, typer.Option("--format", "-f", metavar="FORMAT", help="text or json.")
]
PageFormatOpt = Annotated[
    PageFormat,
    typer.Option(
        "--format",
        "-f",
        metavar="FORMAT",
        help="text, json, or html (one self-contained page).",
    ),
]
LastOpt = Annotated[
    int | None,
    typer.Option(
        "--last",
        metavar="N",
        callback=at_least(0),
        help="Only the last N messages (JSON stays complete).",
    ),
]
AroundOpt = Annotated[
    int | None,
    typer.Option(
        "--around",
        metavar="K",
        help="Only message K and 25 on each side (JSON: all).",
    ),
]
MaxBytesOpt = Annotated[
    int,
    typer.Option(
        "--max-bytes",
        envvar=MAX_BYTES_ENV,
        show_envvar=False,
        callback=at_least(1),
        metavar="N",
        show_default=False,
        help=f"Refuse a file over N bytes (default 64 MiB; env {MAX_BYTES_ENV}).",
    ),
]
PathArg = Annotated[
    str,
    typer.Argument(
        metavar="PATH",
        show_default=False,
        help="A saved branch (the JSON of Branch.to_dict()); - reads standard input.",
    ),
]
OtherArg = Annotated[
    str | None,
    typer.Argument(
        metavar="OTHER", help="A second saved branch: compare the two next requests."
    ),
]


def _member(name: str) -> str:
    return name.replace("+", "_with_").replace("-", "_")


# The compositions install() can send, read from its one registry of profiles (members:
# default, amendment1, prompt_cache, amendment1_with_prompt_cache).
load_stage_modules()  # LIONAGI_TURNS_STAGES: modules that register stage profiles
Profile = StrEnum(  # type: ignore[misc]  # members come from the registry
    "Profile", {_member(name): name for name in compositions()}
)


ProfileOpt = Annotated[
    Profile,
    typer.Option(
        "--profile",
        metavar="NAME",
        help="default (what install() sends), amendment1 (token budgets, saying what is left "
        "out), prompt-cache (stable parts first, with cache marks), amendment1+prompt-cache "
        "(both; chosen where recorded) or a registered stage profile.",
    ),
]
BudgetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--budget",
        metavar="SECTION=N",
        help="amendment1: at most N tokens for SECTION (system, instruction, history, context "
        "or tool_results; repeatable).",
    ),
]

CeilingOpt = Annotated[
    int | None,
    typer.Option(
        "--ceiling",
        metavar="N",
        help="amendment1: an input ceiling in tokens.",
    ),
]
LowWaterOpt = Annotated[
    int | None,
    typer.Option(
        "--low-water",
        metavar="N",
        help="With --ceiling: a step cuts to N (default: half).",
    ),
]
ClearResultsOpt = Annotated[
    int | None,
    typer.Option(
        "--clear-results",
        metavar="KEEP",
        help="With --ceiling: clear older tool results before dropping turns, keeping the "
        "newest KEEP.",
    ),
]


AtOpt = Annotated[
    int | None,
    typer.Option(
        "--at",
        metavar="K",
        help="The K-th recorded instruction's request (1 = the first).",
    ),
]
