"""``lionagi-turns``: see, diff and check what a saved lionagi branch sends next.

A saved branch is the JSON of lionagi's ``Branch.to_dict()`` (see ``_load``).

Commands and exit codes (one module each: ``_compile``, ``_diff``, ``_check``):

- ``compile PATH [--instruction TEXT] [--context NAME=TEXT]... [--format text|json]``: the
  provider messages of the next turn. Without ``--instruction`` the current turn is the
  placeholder ``DEFAULT_INSTRUCTION`` (it is marked as such), so the output shows exactly what
  the stored history contributes. 0 compiled, 1 the compiler rejects the history.
- ``compile ... --profile amendment1 [--budget SECTION=N]...``: the next turn under ADR-0007
  Amendment 1 with each section's authority, posture, budget, kept and left-out (``_amendment1``);
  1 also when a system or instruction section refuses over its budget.
- ``compile ... --profile prompt-cache``: the next turn under the prompt-cache profile (ADR-0127)
  with the segments (stable, conversation, turn), where the marks go and what changed against
  the previous recorded request (``_prompt_cache``).
- ``compile ... --at K``: the request of the K-th recorded instruction (1-based, in view
  order), rebuilt from the records before it (``_turn``); 2 for a K out of range.
- ``diff PATH [--instruction TEXT] [--context NAME=TEXT]... [--format text|json]``: lionagi
  0.36's own payload next to the compiled one, a unified diff per message, each labelled with
  its intended-difference registry entry. 0 every difference is registered, 1 any is not.
- ``diff A B ...``: how the next request differs between two saved branches, per message and
  section (``_branch_diff``). 0 the same request, 1 they differ or either is rejected.
- ``check PATH [--format text|json]``: every defect the compiler would reject, with positions and
  ids, and warnings for what it accepts but a reviewer should see. 0 no defect, 1 defects.

``--format json`` writes one versioned shape per command (``_shape``; the JSON Schema ships in
``cli/schema/``).

Every command takes ``--max-bytes N`` (env ``LIONAGI_TURNS_MAX_BYTES``; default 64 MiB), the
largest file it reads. Every command exits 2 for unusable input (missing or non-regular file,
over the size limit, not strict JSON, not a lionagi 0.36 branch, bad option) with one line on
stderr naming the file and the problem, and 3 for an internal error (one line;
``LIONAGI_TURNS_DEBUG=1`` shows the traceback). No command loads a model, starts a process or
opens a network connection. Human output shows input text inert and bounded (``_views``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from enum import StrEnum
from typing import Annotated, Any, TypeVar

# Effective for lionagi settings read after this point; the loader also pins the branch's log
# manager to never save (_load), since the package may have imported lionagi already.
os.environ.setdefault("LOG_AUTO_SAVE_ON_EXIT", "false")

import typer

from .._contracts import ContextBlock
from ._check import check_report, render_check
from ._compile import compile_error, compiled_turn, render_compile
from ._diff import diff_report, render_diff
from ._inputs import (
    DEFAULT_INSTRUCTION,
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_REJECTED,
    Fail,
    load,
    turn_inputs,
)
from ._load import DEFAULT_MAX_BYTES, LoadedBranch, one_line
from ._prompt_cache import prompt_cache_turn, render_prompt_cache
from ._sections import Measured
from ._turn import turn_spec
from ._views import bounded_line, console, inert, print_json

__all__ = ("app", "main")

MAX_BYTES_ENV = "LIONAGI_TURNS_MAX_BYTES"

app = typer.Typer(
    name="lionagi-turns",
    help="See, diff and check exactly what a saved lionagi branch sends to the model next.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


class Format(StrEnum):
    text = "text"
    json = "json"


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
        help="Add a context block from provider NAME (repeatable, kept in order).",
    ),
]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]
MaxBytesOpt = Annotated[
    int,
    typer.Option(
        "--max-bytes",
        envvar=MAX_BYTES_ENV,
        min=1,
        help="Refuse a branch file larger than this many bytes (checked before reading).",
    ),
]
PathArg = Annotated[str, typer.Argument(help="A saved branch: the JSON of Branch.to_dict().")]
OtherArg = Annotated[
    str | None,
    typer.Argument(help="diff: a second saved branch, to compare the two next requests."),
]


class Profile(StrEnum):
    default = "default"
    amendment1 = "amendment1"
    prompt_cache = "prompt-cache"


ProfileOpt = Annotated[
    Profile,
    typer.Option(
        "--profile",
        help="Compile profile: the seed ADR (default), Amendment 1, or the prompt-cache "
        "layout of an endpoint that places the prompt cache (ADR-0127).",
    ),
]
BudgetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--budget",
        metavar="SECTION=N",
        help="amendment1: a section's budget in o200k tokens (repeatable; default unbounded).",
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


_R = TypeVar("_R")


def _too_deep(path: str) -> Fail:
    return Fail(EXIT_BAD_INPUT, f"{path}: the branch is nested too deeply to compile")


def _compiled(loaded: LoadedBranch, build: Callable[[], _R]) -> _R:
    """``build()``'s report. A compile error (ValueError/TypeError) exits 1 naming it; a branch
    nested too deeply for lionagi's renderer (RecursionError) exits 2 as unusable input."""
    try:
        return build()
    except (ValueError, TypeError) as exc:
        compile_error(loaded, exc)
    except RecursionError:
        raise _too_deep(loaded.path) from None


@app.command("compile")
def compile_command(
    path: PathArg,
    instruction: InstructionOpt = None,
    context: ContextOpt = None,
    format: FormatOpt = Format.text,
    max_bytes: MaxBytesOpt = DEFAULT_MAX_BYTES,
    profile: ProfileOpt = Profile.default,
    budget: BudgetOpt = None,
    at: AtOpt = None,
) -> None:
    """Print the provider messages the next turn sends (ADR-0007 compile_chat_request), or
    with --at K those the K-th recorded instruction's request sent."""
    if profile is Profile.amendment1 or budget:
        _amended(path, instruction, context, format, max_bytes, profile, budget or [], at)
        return
    loaded, blocks = turn_inputs(path, instruction, context, max_bytes)
    spec = turn_spec(loaded, instruction, blocks, at, profile.value)
    if profile is Profile.prompt_cache:
        cached, measured = _compiled(loaded, lambda: prompt_cache_turn(loaded, spec))
        if format is Format.json:
            print_json(cached)
        else:
            render_prompt_cache(console(), cached, measured)
        return
    report, trace = _compiled(loaded, lambda: compiled_turn(loaded, spec))
    if format is Format.json:
        print_json(report)
        return
    render_compile(console(), loaded, report, trace)


def _amended(
    path: str,
    instruction: str | None,
    context: list[str] | None,
    format: Format,
    max_bytes: int,
    profile: Profile,
    budget: list[str],
    at: int | None,
) -> None:
    from ._amendment1 import amended_turn, parse_budgets, refused_summary, render_amended

    if profile is not Profile.amendment1:
        raise Fail(EXIT_BAD_INPUT, "bad option: --budget needs --profile amendment1")
    try:
        budgets = parse_budgets(budget)
    except ValueError as exc:
        raise Fail(EXIT_BAD_INPUT, f"bad option: {exc}") from None
    loaded, blocks = turn_inputs(path, instruction, context, max_bytes)
    spec = turn_spec(loaded, instruction, blocks, at, profile.value)
    from ..amendment1 import SectionBudgetRefused

    def build() -> tuple[dict[str, Any], Measured]:
        try:
            return amended_turn(loaded, spec, budgets)
        except SectionBudgetRefused as exc:
            raise Fail(
                EXIT_REJECTED, f"{path}: refused: {one_line(str(exc))} [{refused_summary(exc)}]"
            ) from None

    report, measured = _compiled(loaded, build)
    if format is Format.json:
        print_json(report)
        return
    render_amended(console(), report, measured)


@app.command("check")
def check_command(
    path: PathArg, format: FormatOpt = Format.text, max_bytes: MaxBytesOpt = DEFAULT_MAX_BYTES
) -> None:
    """List every defect the compiler would reject in the stored view, with positions and ids,
    and warnings for what it sends that a reviewer should see."""
    loaded = load(path, max_bytes)
    try:
        report = check_report(loaded)
    except RecursionError:
        raise _too_deep(path) from None
    if format is Format.json:
        print_json(report)
    else:
        render_check(console(), report)
    if not report["ok"]:
        raise typer.Exit(EXIT_REJECTED)


@app.command("diff")
def diff_command(
    path: PathArg,
    other: OtherArg = None,
    instruction: InstructionOpt = None,
    context: ContextOpt = None,
    format: FormatOpt = Format.text,
    max_bytes: MaxBytesOpt = DEFAULT_MAX_BYTES,
) -> None:
    """Show lionagi 0.36's payload against the compiled one, labelled by intended difference;
    with a second branch, how the next request differs between the two."""
    loaded, blocks = turn_inputs(path, instruction, context, max_bytes)
    if other is not None:
        _branch_diff(loaded, load(other, max_bytes), instruction, blocks, format)
        return
    # A compile error here also covers lionagi failing to render a record of the branch.
    report = _compiled(loaded, lambda: diff_report(loaded, instruction, blocks))
    if format is Format.json:
        print_json(report)
    else:
        render_diff(console(), report)
    if not report["ok"]:
        raise typer.Exit(EXIT_REJECTED)


def _branch_diff(
    a: LoadedBranch,
    b: LoadedBranch,
    instruction: str | None,
    blocks: tuple[ContextBlock, ...],
    format: Format,
) -> None:
    from ._branch_diff import branch_diff_report, render_branch_diff, side

    spec_a = turn_spec(a, instruction, blocks, None, "default")
    spec_b = turn_spec(b, instruction, blocks, None, "default")
    # A rejected history exits 1 naming its own file.
    report = branch_diff_report(
        _compiled(a, lambda: side(a, spec_a)), _compiled(b, lambda: side(b, spec_b)), spec_a
    )
    if format is Format.json:
        print_json(report)
    else:
        render_branch_diff(console(), report)
    if not report["identical"]:
        raise typer.Exit(EXIT_REJECTED)


def _fail(code: int, message: str) -> SystemExit:
    print(f"lionagi-turns: {inert(bounded_line(one_line(message)))}", file=sys.stderr)
    return SystemExit(code)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point; exits (``SystemExit``) with the documented code."""
    try:
        code = app(args=list(argv) if argv is not None else None, standalone_mode=False)
    except Fail as exc:
        raise _fail(exc.code, str(exc)) from None
    except typer.Exit as exc:
        raise SystemExit(exc.exit_code) from None
    except SystemExit:
        raise
    except typer.Abort:
        raise SystemExit(130) from None
    except Exception as exc:
        # click's usage errors (typer vendors click): they carry their message and exit code.
        format_message = getattr(exc, "format_message", None)
        exit_code = getattr(exc, "exit_code", None)
        if callable(format_message) and isinstance(exit_code, int):
            raise _fail(EXIT_BAD_INPUT, format_message()) from None
        if os.environ.get("LIONAGI_TURNS_DEBUG"):
            raise
        raise _fail(
            EXIT_INTERNAL,
            f"internal error: {type(exc).__name__}: {exc} "
            "(set LIONAGI_TURNS_DEBUG=1 for the traceback)",
        ) from None
    raise SystemExit(code if isinstance(code, int) else EXIT_OK)

