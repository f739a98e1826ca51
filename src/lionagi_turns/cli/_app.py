"""``lionagi-turns``: see, diff and check what a saved lionagi branch sends next.

A saved branch is the JSON of lionagi's ``Branch.to_dict()`` (see ``_load``).

Commands and exit codes (one module each: ``_compile``, ``_diff``, ``_check``):

- ``compile PATH [--instruction TEXT] [--context NAME=TEXT]... [--format text|json]``: the
  provider messages of the next turn. Without ``--instruction`` the current turn is the
  placeholder ``DEFAULT_INSTRUCTION`` (it is marked as such), so the output shows exactly what
  the stored history contributes. 0 compiled, 1 the compiler rejects the history.
- ``compile ... --profile amendment1 [--budget SECTION=N]... [--ceiling N [--low-water N]]``:
  the next turn under ADR-0007 Amendment 1 with each section's authority, posture, budget, kept
  and left-out (``_amendment1``), and under a ceiling how full it is; 1 also when a section
  refuses over its budget.
- ``compile ... --profile prompt-cache``: the next turn under the prompt-cache profile (ADR-0127)
  with the segments (stable, conversation, turn), where the marks go and what changed against
  the previous recorded request (``_prompt_cache``).
- ``compile ... --at K``: the request of the K-th recorded instruction (1-based, in view
  order), rebuilt from the records before it (``_turn``); 2 for a K out of range.
- ``diff PATH [--instruction TEXT] [--context NAME=TEXT]... [--format text|json]``: lionagi
  0.36's own payload next to the compiled one, a unified diff per message, each labelled with
  its intended-difference registry entry. 0 every difference is registered, 1 any is not or the
  compiler rejects the history.
- ``diff A B ...``: how the next request differs between two saved branches, per message and
  section (``_branch_diff``). 0 the same request, 1 they differ or either is rejected.
- ``check PATH [--format text|json]``: every defect the compiler would reject, with positions and
  ids, and warnings for what it accepts but a reviewer should see. 0 no defect, 1 defects.

``--format json`` writes one versioned shape per command (``_shape``; the JSON Schema ships in
``cli/schema/``).

``compile --format html`` (every profile) prints one self-contained page of the request
(``_html``: summary first, then a bounded window of messages); ``--last N`` (``compile``,
``diff``) and ``--around K`` (``compile``) choose the messages the text view and the page show
(``_window``), saying how many are left out (JSON stays complete). On a terminal, a load or compile
over a second shows a status line on stderr (``_progress``); nothing else is written there.

Every command takes ``--max-bytes N`` (env ``LIONAGI_TURNS_MAX_BYTES``; default 64 MiB), the
largest file it reads. Every command exits 2 for unusable input (missing or non-regular file,
over the size limit, not strict JSON, not a lionagi 0.36 branch, bad option) with one line on
stderr naming the file and the problem, and 3 for an internal error (one line;
``LIONAGI_TURNS_DEBUG=1`` shows the traceback). No command loads a model, starts a process or
opens a network connection. Human output shows input text inert and bounded (``_views``).
"""

from __future__ import annotations

import gc
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

from lionagi_turns.cli._json import JsonObject

# Effective for lionagi settings read after this point; the loader also pins the branch's log
# manager to never save (_load), since the package may have imported lionagi already.
os.environ.setdefault("LOG_AUTO_SAVE_ON_EXIT", "false")

import typer
from typer.core import TyperCommand

from lionagi_turns.cli._amended_command import amended_command
from lionagi_turns.cli._check import check_report, render_check
from lionagi_turns.cli._compile import measured_turn
from lionagi_turns.cli._compile_view import render_compile
from lionagi_turns.cli._diff import diff_report, render_diff
from lionagi_turns.cli._exits import (
    bad_choice,
    closed_pipe,
    compiled_or_exit,
    fail_line,
    shown_then_exit,
    too_deep,
)
from lionagi_turns.cli._html import print_html
from lionagi_turns.cli._inputs import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_REJECTED,
    Fail,
    load,
    turn_inputs,
)
from lionagi_turns.cli._load import DEFAULT_MAX_BYTES, LIONAGI_VERSION, LoadedBranch
from lionagi_turns.cli._options import (
    AroundOpt,
    AtOpt,
    BudgetOpt,
    CeilingOpt,
    ClearResultsOpt,
    ContextOpt,
    Format,
    FormatOpt,
    InstructionOpt,
    LastOpt,
    LowWaterOpt,
    MaxBytesOpt,
    OtherArg,
    PageFormat,
    PageFormatOpt,
    PathArg,
    Profile,
    ProfileOpt,
)
from lionagi_turns.cli._plugins import registered_stages
from lionagi_turns.cli._progress import progress
from lionagi_turns.cli._prompt_cache import prompt_cache_turn, render_prompt_cache
from lionagi_turns.cli._turn import turn_spec
from lionagi_turns.cli._views import ClosedPipe, console, print_json
from lionagi_turns.cli._window import Paging, check_paging
from lionagi_turns.core.contracts import ContextBlock
from lionagi_turns.core.version import __version__

DEFAULT_PROFILE = Profile("default")

if TYPE_CHECKING:
    from typer._click.core import Context  # the type typer's Command.parse_args declares

__all__ = ("app", "main")


_TERMS = (
    "Words the output uses (docs/glossary.md explains each, with an example): the view is "
    "the stored messages lionagi sends, in order; the fold is the system text, context "
    "blocks and guidance, placed at the top of the first message sent; a context block is "
    "extra text given with --context NAME=TEXT, sent as one JSON object; guidance is an "
    "instruction's own extra directions.\n\n"
    "Exit codes: 0 ok; 1 the compiler rejects the history (diff: also a difference that is "
    "not an intended one); 2 unusable input or option; 3 internal error.\n\n"
    "PATH - reads the saved branch from standard input. NO_COLOR=1 turns colour off."
)
# A command's own help ends with its exit codes and where the words are explained.
_POINTER = (
    "Exit codes: 0 ok; 1 the compiler rejects the history (diff: also a difference that is "
    "not an intended one); 2 unusable input or option; 3 internal error. The words the "
    "output uses: lionagi-turns --help, docs/glossary.md; more in docs/usage.md. "
    "NO_COLOR=1 turns colour off."
)

app = typer.Typer(
    name="lionagi-turns",
    help="See, diff and check exactly what a saved lionagi branch sends to the model next.",
    epilog=_TERMS,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class _Once(TyperCommand):
    """A command whose single-valued options may each be given once: a repeat is bad input
    (exit 2), never the last one silently kept."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        if not ctx.resilient_parsing:
            _, _, order = self.make_parser(ctx).parse_args(args=list(args))
            seen: set[str | None] = set()
            for param in order:
                if getattr(param, "multiple", True) or not getattr(param, "opts", None):
                    continue
                if param.name in seen:
                    raise Fail(
                        EXIT_BAD_INPUT,
                        f"bad option: {'/'.join(param.opts)} is given more than once; give it once",
                    )
                seen.add(param.name)
        return super().parse_args(ctx, args)


def _print_version(value: bool) -> None:
    if value:
        print(f"lionagi-turns {__version__} (lionagi {LIONAGI_VERSION})")
        raise typer.Exit(EXIT_OK)


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the versions of lionagi-turns and lionagi, then exit.",
        ),
    ] = False,
) -> None:
    """Without a command: the help, exit 0."""
    if ctx.invoked_subcommand is None:
        print(ctx.get_help())
        raise typer.Exit(EXIT_OK)


@app.command(
    "compile", cls=_Once, epilog=_POINTER,
    short_help="The messages the next call sends.",
)
def compile_command(
    path: PathArg,
    instruction: InstructionOpt = None,
    context: ContextOpt = None,
    format: PageFormatOpt = PageFormat.text,
    max_bytes: MaxBytesOpt = DEFAULT_MAX_BYTES,
    profile: ProfileOpt = DEFAULT_PROFILE,
    budget: BudgetOpt = None,
    at: AtOpt = None,
    last: LastOpt = None,
    around: AroundOpt = None,
    ceiling: CeilingOpt = None,
    low_water: LowWaterOpt = None,
    clear_results: ClearResultsOpt = None,
) -> None:
    """Print the messages the next call sends to the model (with --at K: what the K-th
    recorded instruction's request sent)."""
    amended = ("amendment1", "amendment1+prompt-cache")
    paging = Paging(last, around)
    check_paging(paging, 1 if around is None else around + 1)  # both given: refused before loading
    ceiling_options = (ceiling, low_water, clear_results)
    if profile.value in amended or budget or any(o is not None for o in ceiling_options):
        amended_command(path, instruction, context, format, max_bytes, profile, budget or [],
                        at, paging, ceiling_options)
        return
    stages, laid_out = registered_stages(profile.value)
    with progress() as step:
        loaded, blocks = turn_inputs(path, instruction, context, max_bytes)
        spec = turn_spec(loaded, instruction, blocks, at,
                         "prompt-cache" if laid_out else "default")
        step("compiling the request")
        if laid_out:
            cached, measured = compiled_or_exit(
                loaded, lambda: prompt_cache_turn(loaded, spec, stages))
        else:
            report, _, measured = compiled_or_exit(
                loaded, lambda: measured_turn(loaded, spec, stages))
    if laid_out:
        check_paging(paging, len(cached["messages"]))
        if format is PageFormat.json:
            print_json(cached)
        elif format is PageFormat.html:
            print_html(cached, measured, paging)
        else:
            render_prompt_cache(console(), loaded, cached, measured, paging)
        return
    check_paging(paging, len(report["messages"]))
    if format is PageFormat.json:
        print_json(report)
    elif format is PageFormat.html:
        print_html(report, measured, paging)
    else:
        render_compile(console(), loaded, report, measured, paging)


@app.command(
    "check", cls=_Once, epilog=_POINTER,
    short_help="Every defect the compiler rejects, and warnings.",
)
def check_command(
    path: PathArg, format: FormatOpt = Format.text, max_bytes: MaxBytesOpt = DEFAULT_MAX_BYTES
) -> None:
    """List every problem that makes the compiler reject the stored messages (position, id and
    what to do), and warnings for what it sends that a reviewer should see."""
    with progress() as step:
        loaded = load(path, max_bytes)
        step("checking the history")
        try:
            report = check_report(loaded)
        except RecursionError:
            raise too_deep(path) from None
    shown_then_exit(
        EXIT_OK if report["ok"] else EXIT_REJECTED,
        (lambda: print_json(report)) if format is Format.json
        else (lambda: render_check(console(), report)),
    )


@app.command(
    "diff", cls=_Once, epilog=_POINTER,
    short_help="lionagi 0.36's request against the compiled one.",
)
def diff_command(
    path: PathArg,
    other: OtherArg = None,
    instruction: InstructionOpt = None,
    context: ContextOpt = None,
    format: FormatOpt = Format.text,
    max_bytes: MaxBytesOpt = DEFAULT_MAX_BYTES,
    last: LastOpt = None,
) -> None:
    """Show what lionagi 0.36 itself would send next against what lionagi-turns sends, each
    difference labelled with the intended difference that explains it; with a second branch,
    how the next request differs between the two."""
    other_loaded: LoadedBranch | None = None
    with progress() as step:
        loaded, blocks = turn_inputs(path, instruction, context, max_bytes)
        if other is not None:
            other_loaded = load(other, max_bytes, first=path)
        step("comparing the requests")
        if other_loaded is not None:
            pair = _branch_diff(loaded, other_loaded, instruction, blocks)
        else:
            # A compile error here also covers lionagi failing to render a record of the branch.
            report = compiled_or_exit(loaded, lambda: diff_report(loaded, instruction, blocks))
    if other_loaded is not None:
        from lionagi_turns.cli._branch_diff import render_branch_diff

        shown_then_exit(
            EXIT_OK if pair["identical"] else EXIT_REJECTED,
            (lambda: print_json(pair)) if format is Format.json
            else (lambda: render_branch_diff(console(), pair, last)),
        )
        return
    shown_then_exit(
        EXIT_OK if report["ok"] and not report["compiled_error"] else EXIT_REJECTED,
        (lambda: print_json(report)) if format is Format.json
        else (lambda: render_diff(console(), report, last)),
    )


def _branch_diff(
    a: LoadedBranch,
    b: LoadedBranch,
    instruction: str | None,
    blocks: tuple[ContextBlock, ...],
) -> JsonObject:
    from lionagi_turns.cli._branch_diff import branch_diff_report, side

    spec_a = turn_spec(a, instruction, blocks, None, "default")
    spec_b = turn_spec(b, instruction, blocks, None, "default")
    # A rejected history exits 1 naming its own file.
    return branch_diff_report(
        compiled_or_exit(a, lambda: side(a, spec_a)),
        compiled_or_exit(b, lambda: side(b, spec_b)),
        spec_a,
    )


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point; exits (``SystemExit``) with the documented code. A reader
    that closes standard output early (``| head``) ends it quietly with 0.

    The cyclic garbage collector is paused while the command runs and restored (as it was)
    when it ends: loading a long branch builds millions of objects, and each automatic
    collection would walk the loaded branch again (about a quarter of the time of a
    10,000-message ``compile``); reference counting still frees everything not in a cycle."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        _run(argv)
    finally:
        if collecting:
            gc.enable()


def _run(argv: Sequence[str] | None) -> None:
    try:
        code = app(args=list(argv) if argv is not None else None, standalone_mode=False)
    except ClosedPipe as exc:
        raise closed_pipe(exc.verdict) from None
    except BrokenPipeError:
        raise closed_pipe() from None
    except Fail as exc:
        raise fail_line(exc.code, str(exc)) from None
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
            raise fail_line(EXIT_BAD_INPUT, bad_choice(exc) or format_message()) from None
        if os.environ.get("LIONAGI_TURNS_DEBUG"):
            raise
        raise fail_line(
            EXIT_INTERNAL,
            f"internal error: {type(exc).__name__}: {exc} "
            "(set LIONAGI_TURNS_DEBUG=1 for the traceback)",
        ) from None
    raise SystemExit(code if isinstance(code, int) else EXIT_OK)
