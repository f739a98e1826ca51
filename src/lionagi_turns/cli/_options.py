"""The ``lionagi-turns`` commands' typer option and argument declarations, and their choices
(``Format``, ``PageFormat``, ``Profile``). Each ``*Opt`` / ``*Arg`` is an ``Annotated`` type a
command parameter takes; its help text is the one ``--help`` shows."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

from lionagi_turns.cli._inputs import DEFAULT_INSTRUCTION
from lionagi_turns.integration._registry import compositions

__all__ = (
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
        help=f"Text of the current instruction. Default: the placeholder {DEFAULT_INSTRUCTION!r}.",
    ),
]
ContextOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--context",
        "-c",
        metavar="NAME=TEXT",
        help="Extra text for this call from a context provider NAME, sent in the first message "
        "as one JSON object per block (repeatable, kept in order).",
    ),
]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
PageFormatOpt = Annotated[
    PageFormat,
    typer.Option(
        "--format",
        "-f",
        help="Output format (html: one self-contained page showing the request).",
    ),
]
LastOpt = Annotated[
    int | None,
    typer.Option(
        "--last",
        metavar="N",
        min=0,
        help="Text view: show only the last N messages (and say how many are left out); "
        "JSON and HTML stay complete.",
    ),
]
MaxBytesOpt = Annotated[
    int,
    typer.Option(
        "--max-bytes",
        envvar=MAX_BYTES_ENV,
        min=1,
        help="Refuse a branch file larger than this many bytes (checked before reading).",
    ),
]
PathArg = Annotated[
    str,
    typer.Argument(
        help="A saved branch: the JSON of Branch.to_dict(), or - to read it from standard input."
    ),
]
OtherArg = Annotated[
    str | None,
    typer.Argument(help="diff: a second saved branch, to compare the two next requests."),
]


def _member(name: str) -> str:
    return name.replace("+", "_with_").replace("-", "_")


# The compositions install() can send, read from its one registry of profiles (members:
# default, amendment1, prompt_cache, amendment1_with_prompt_cache).
Profile = StrEnum(  # type: ignore[misc]  # members come from the registry
    "Profile", {_member(name): name for name in compositions()}
)


ProfileOpt = Annotated[
    Profile,
    typer.Option(
        "--profile",
        help="How the request is laid out: default (ADR-0007, what install() sends), "
        "amendment1 (each section within a token budget, saying what it left out), "
        "prompt-cache (for endpoints that cache the start of a request: the parts that do not "
        "change first, with cache marks), amendment1+prompt-cache (both, as install(profile="
        "'amendment1') sends to Anthropic with prompt_caching=True; chosen for amendment1 when "
        "the branch recorded that layout).",
    ),
]
BudgetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--budget",
        metavar="SECTION=N",
        help="With --profile amendment1: the most tokens (o200k) SECTION may take: system, "
        "instruction, history, context or tool_results (repeatable, once per section; default "
        "no limit).",
    ),
]

CeilingOpt = Annotated[
    int | None,
    typer.Option(
        "--ceiling",
        metavar="N",
        help="amendment1: an input ceiling for the whole request in o200k tokens; the history "
        "is cut in steps down to --low-water.",
    ),
]
LowWaterOpt = Annotated[
    int | None,
    typer.Option(
        "--low-water",
        metavar="N",
        help="amendment1 with --ceiling: the level a drop step cuts the request down to "
        "(default: half the ceiling).",
    ),
]


AtOpt = Annotated[
    int | None,
    typer.Option(
        "--at",
        metavar="K",
        help="Rebuild the request of the K-th recorded instruction (1 = the first) from the "
        "history before it.",
    ),
]
