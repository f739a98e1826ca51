"""How a ``lionagi-turns`` command ends when it cannot print its report: the stderr line and
exit code of a failure (``fail_line``), a compile error or a branch too deep to compile
(``compiled_or_exit``), a value outside an option's choices (``bad_choice``), a reader that
closed standard output (``closed_pipe``)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from enum import StrEnum
from typing import TypeVar

from lionagi_turns.cli._compile import compile_error
from lionagi_turns.cli._inputs import EXIT_BAD_INPUT, EXIT_OK, Fail
from lionagi_turns.cli._load import LoadedBranch, one_line
from lionagi_turns.cli._options import Format, PageFormat, Profile
from lionagi_turns.cli._views import ClosedPipe, bounded_line, inert

__all__ = (
    "bad_choice",
    "closed_pipe",
    "compiled_or_exit",
    "fail_line",
    "report_with_verdict",
    "too_deep",
)

R = TypeVar("R")


def too_deep(path: str) -> Fail:
    return Fail(EXIT_BAD_INPUT, f"{path}: the branch is nested too deeply to compile")


def compiled_or_exit(loaded: LoadedBranch, build: Callable[[], R]) -> R:
    """``build()``'s report. A compile error (ValueError/TypeError) exits 1 naming it; a branch
    nested too deeply for lionagi's renderer (RecursionError) exits 2 as unusable input."""
    try:
        return build()
    except (ValueError, TypeError) as exc:
        compile_error(loaded, exc)
    except RecursionError:
        raise too_deep(loaded.path) from None


def fail_line(code: int, message: str) -> SystemExit:
    print(f"lionagi-turns: {inert(bounded_line(one_line(message)))}", file=sys.stderr)
    return SystemExit(code)


# Options whose value is one of a fixed set: the set named in words when a value is not in it.
CHOICES: dict[str, type[StrEnum]] = {"profile": Profile, "format": Format}


def bad_choice(exc: Exception) -> str | None:
    """The plain-words message for a value outside an option's fixed set, else None."""
    param = getattr(exc, "param", None)
    choices = CHOICES.get(getattr(param, "name", None) or "")
    if choices is None or type(exc).__name__ != "BadParameter":
        return None
    if choices is Format and getattr(getattr(exc, "ctx", None), "info_name", None) == "compile":
        choices = PageFormat  # compile's --format also has html
    names = "/".join(getattr(param, "opts", ()))
    return f"bad option: {names} takes one of: {', '.join(c.value for c in choices)}"


def closed_pipe(code: int = EXIT_OK) -> SystemExit:
    """Standard output was closed by the reader (``| head``): stop quietly with ``code``, the
    command's verdict (0 unless the command had already reached one)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the flush at exit must not fail again
    except (OSError, ValueError, AttributeError):  # not a real file (captured in process)
        pass
    return SystemExit(code)


def report_with_verdict(render: Callable[[], None], code: int) -> None:
    """Run ``render`` (which prints a report), then exit with ``code`` when it is not 0. A reader
    that closes standard output while ``render`` prints ends the command quietly with the same
    ``code``: the verdict does not depend on whether anyone read the whole report."""
    try:
        render()
    except (ClosedPipe, BrokenPipeError):
        raise closed_pipe(code) from None
    if code != EXIT_OK:
        raise SystemExit(code)
