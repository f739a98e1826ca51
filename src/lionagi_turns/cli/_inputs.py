"""What every command shares before it reports: exit codes, the one-line failure, option
parsing and the request a command compiles.

Exit codes: 0 ok, 1 the history is rejected (or, for ``diff``, a difference is not registered),
2 the input is unusable (file, JSON, branch, option), 3 an internal error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

from lionagi_turns.cli._load import DEFAULT_MAX_BYTES, BranchLoadError, LoadedBranch, load_branch
from lionagi_turns.cli._read import LONE_SURROGATE, STDIN
from lionagi_turns.core.contracts import ContextBlock, TurnRequest

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = (
    "DEFAULT_INSTRUCTION",
    "EXIT_BAD_INPUT",
    "EXIT_INTERNAL",
    "EXIT_OK",
    "EXIT_REJECTED",
    "Fail",
    "die",
    "load",
    "next_request",
    "parse_context",
    "turn_inputs",
)

DEFAULT_INSTRUCTION = "(next instruction)"


EXIT_OK, EXIT_REJECTED, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


class Fail(Exception):
    """A one-line failure with its exit code; ``main`` prints it on stderr."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def die(code: int, message: str) -> NoReturn:
    raise Fail(code, message)


def load(
    path: str, max_bytes: int = DEFAULT_MAX_BYTES, first: str | None = None
) -> LoadedBranch:
    """``load_branch``, an unusable file exiting 2. ``first`` is the path a command has already
    read (the first of two branches): standard input (``-``) for both exits 2, as the second
    read would find it exhausted."""
    if path == first == STDIN:
        die(EXIT_BAD_INPUT, "-: standard input can be read once; give at most one branch as -")
    try:
        return load_branch(path, max_bytes=max_bytes)
    except BranchLoadError as exc:
        die(EXIT_BAD_INPUT, str(exc))


def parse_context(values: Sequence[str]) -> tuple[ContextBlock, ...]:
    """``NAME=TEXT`` options as context blocks, in the order given; ValueError names the bad
    one."""
    blocks = []
    for i, value in enumerate(values):
        name, sep, text = value.partition("=")
        if not sep or not name.strip() or not text:
            raise ValueError(
                f"--context #{i + 1} {value[:60]!r} is not NAME=TEXT with a non-empty name and text"
            )
        blocks.append(ContextBlock(provider_name=name.strip(), content=text))
    return tuple(blocks)


def turn_inputs(
    path: str, instruction: str | None, context: Sequence[str] | None, max_bytes: int
) -> tuple[LoadedBranch, tuple[ContextBlock, ...]]:
    """The options of a command that compiles a turn, checked, then the branch loaded; exits 2
    on a blank ``--instruction``, a malformed ``--context`` or an unreadable branch."""
    if instruction is not None and not instruction.strip():
        die(EXIT_BAD_INPUT, "bad option: --instruction must have visible text")
    for name, value in (("--instruction", instruction), *(("--context", c) for c in context or ())):
        if value is not None and LONE_SURROGATE.search(value):
            die(
                EXIT_BAD_INPUT,
                f"bad option: {name} holds bytes that are not UTF-8 text; pass UTF-8",
            )
    try:
        blocks = parse_context(context or ())
    except ValueError as exc:
        die(EXIT_BAD_INPUT, f"bad option: {exc}")
    return load(path, max_bytes), blocks


def next_request(
    branch: Branch, instruction: str | None, blocks: tuple[ContextBlock, ...] = ()
) -> TurnRequest:
    """The request for the next turn: ``instruction`` (default ``DEFAULT_INSTRUCTION``) as a
    new instruction of ``branch`` (not added to it) and ``blocks``."""
    text = DEFAULT_INSTRUCTION if instruction is None else instruction
    current = branch.msgs.create_instruction(instruction=text)
    return TurnRequest(instruction=current, context_blocks=blocks)
