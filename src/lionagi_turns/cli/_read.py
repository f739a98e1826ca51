"""Reading a saved branch's file: bounded, then strict JSON. Refusals before anything else.

Contract:

- ``read_branch_file(path, max_bytes)``: the path must name a regular file (after following
  symlinks; a FIFO, a device such as ``/dev/zero`` or a socket is refused without being opened
  for reading, so nothing blocks) of at most ``max_bytes`` bytes (``DEFAULT_MAX_BYTES``,
  64 MiB; the CLI's ``--max-bytes`` or ``LIONAGI_TURNS_MAX_BYTES`` sets it). The size is checked
  on the path, again on the opened file, and while reading. The path ``-`` is standard input
  (``STDIN``): read to its end, bounded by ``max_bytes`` while reading; errors name it ``-``.
- ``parse_json(raw, path)``: strict UTF-8 JSON: no repeated key in an object, no
  ``NaN``/``Infinity`` or number that overflows a float, no integer of more digits than Python
  converts (4,300 by default), no lone surrogate in a string or key, at most ``MAX_DEPTH``
  levels of nesting. Each refusal names the JSON path of the value.
- Every refusal is a ``BranchLoadError``: one line naming the file and the problem.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from pathlib import Path

from lionagi_turns.cli._json import JsonObject

__all__ = (
    "DEFAULT_MAX_BYTES",
    "MAX_DEPTH",
    "STDIN",
    "BranchLoadError",
    "one_line",
    "parse_json",
    "read_branch_file",
)

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 128
STDIN = "-"


class BranchLoadError(ValueError):
    """The file is not a lionagi 0.36 branch; ``str(error)`` is one line naming the file."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        self.problem = one_line(problem)
        super().__init__(f"{self.path}: {self.problem}")


def read_branch_file(path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``max_bytes`` bytes; checked
    before reading (see the module contract). BranchLoadError otherwise."""
    if str(path) == STDIN:
        return _read_stdin(max_bytes)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise BranchLoadError(path, "no such file") from None
    except OSError as exc:
        raise BranchLoadError(path, f"cannot be read ({exc.strerror or exc})") from None
    _check_file(path, info.st_mode, info.st_size, max_bytes)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise BranchLoadError(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)  # the file opened, which may have been swapped since the stat
        _check_file(path, info.st_mode, info.st_size, max_bytes)
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except BlockingIOError:
        raise BranchLoadError(path, "cannot be read without blocking") from None
    except OSError as exc:
        raise BranchLoadError(path, f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if size > max_bytes:
        _too_big(path, size, max_bytes, grew=True)
    return b"".join(chunks)


def _read_stdin(max_bytes: int) -> bytes:
    """Standard input to its end, refused once it holds more than ``max_bytes`` bytes."""
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise BranchLoadError(STDIN, "standard input is closed; pipe a saved branch into it")
    try:
        data = stream.read(max_bytes + 1)
    except OSError as exc:
        raise BranchLoadError(STDIN, f"cannot be read ({exc.strerror or exc})") from None
    if len(data) > max_bytes:
        _too_big(STDIN, len(data), max_bytes, grew=True)
    return bytes(data)


_FILE_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _check_file(path: str | Path, mode: int, size: int, max_bytes: int) -> None:
    if stat.S_ISDIR(mode):
        raise BranchLoadError(path, "is a directory, expected a branch JSON file")
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")
        raise BranchLoadError(
            path,
            f"is {kind}, not a regular file; save the branch to a file and pass that file",
        )
    if size > max_bytes:
        _too_big(path, size, max_bytes, grew=False)


def _too_big(path: str | Path, size: int, max_bytes: int, *, grew: bool) -> None:
    measured = f"grew past {max_bytes:,} bytes while being read" if grew else f"is {size:,} bytes"
    raise BranchLoadError(
        path,
        f"{measured}, over the limit of {max_bytes:,} bytes; raise it with --max-bytes N or "
        "LIONAGI_TURNS_MAX_BYTES=N if the file is a branch you trust",
    )


class _Refused:
    """A JSON value the strict parser refuses; reported with its path after parsing."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


class _Duplicated(JsonObject):
    """A JSON object that repeated a key (the last value kept, as ``json`` does)."""

    __slots__ = ("duplicates",)

    def __init__(self, pairs: JsonObject, duplicates: list[str]) -> None:
        super().__init__(pairs)
        self.duplicates = duplicates


def _object(pairs: list[tuple[str, object]]) -> JsonObject:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    duplicates: list[str] = []
    for key, _ in pairs:
        if key in seen:
            duplicates.append(key)
        seen.add(key)
    return _Duplicated(obj, duplicates)


def _float(text: str) -> float | _Refused:
    value = float(text)
    return value if math.isfinite(value) else _Refused(f"the number {text[:40]} overflows a float")


def _int(text: str) -> int | _Refused:
    try:
        return int(text)
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        return _Refused(f"an integer of {len(text.lstrip('-')):,} digits is too long")


def _constant(name: str) -> _Refused:
    return _Refused(f"{name} is not a JSON number (non-finite numbers are refused)")


LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def parse_json(raw: bytes, path: str | Path = "<data>") -> object:
    """Strict UTF-8 JSON (see the module contract); BranchLoadError names the path inside the
    document of the first value it refuses."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BranchLoadError(path, f"is not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(
            text,
            object_pairs_hook=_object,
            parse_float=_float,
            parse_int=_int,
            parse_constant=_constant,
        )
    except json.JSONDecodeError as exc:
        raise BranchLoadError(
            path, f"is not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise BranchLoadError(path, _too_deep()) from None
    if not _clean(data, _ESCAPED_SURROGATE.search(text) is not None):
        _check_values(data, path)  # names the first refused value
    return data


def _too_deep() -> str:
    return f"is nested more than {MAX_DEPTH} levels deep; a saved lionagi branch is not"


# A lone surrogate can only come from a \\u escape (strict UTF-8 decoding refuses encoded ones).
_ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _clean(data: object, surrogates: bool) -> bool:
    """True when ``_check_values`` would refuse nothing in ``data``: one walk with no paths
    kept; ``surrogates`` False skips the lone-surrogate search (the text has no such escape)."""
    stack: list[tuple[object, int]] = [(data, 1)]
    search = LONE_SURROGATE.search
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return False
        if isinstance(value, str):
            if surrogates and search(value):
                return False
        elif isinstance(value, dict):
            if isinstance(value, _Duplicated):
                return False
            if surrogates and any(search(key) for key in value):
                return False
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)
        elif isinstance(value, _Refused):
            return False
    return True


def _check_values(data: object, path: str | Path) -> None:
    """Walk the parsed document once, iteratively, for the values ``parse_json`` refuses."""
    stack: list[tuple[object, int, tuple[str | int, ...]]] = [(data, 1, ())]
    while stack:
        value, depth, trail = stack.pop()
        if depth > MAX_DEPTH:
            raise BranchLoadError(path, _too_deep())
        if isinstance(value, str):
            if LONE_SURROGATE.search(value):
                _refuse_at(path, trail, "holds a lone surrogate (not valid Unicode text)")
        elif isinstance(value, dict):
            if isinstance(value, _Duplicated):
                key = value.duplicates[0]
                _refuse_at(
                    path,
                    trail,
                    f"repeats the key {key[:60]!r} (JSON readers disagree on which value wins); "
                    "keep one",
                )
            for key, item in value.items():
                if LONE_SURROGATE.search(key):
                    _refuse_at(path, (*trail, key), "has a key with a lone surrogate")
                stack.append((item, depth + 1, (*trail, key)))
        elif isinstance(value, list):
            stack.extend((item, depth + 1, (*trail, i)) for i, item in enumerate(value))
        elif isinstance(value, _Refused):
            _refuse_at(path, trail, value.problem)


def _refuse_at(path: str | Path, trail: tuple[str | int, ...], problem: str) -> None:
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in trail).lstrip(".")
    raise BranchLoadError(path, f"{_escape(where) or 'the document'}: {problem}")


def _escape(text: str) -> str:
    return text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (line breaks included) as one space."""
    return " ".join(str(text).split())
