"""The capture file: one JSON line per installed call, appended to a file per process.

Contract:

- ``configure(directory)`` (from ``install(capture_dir=...)``) sets the directory; with none
  set, ``LIONAGI_TURNS_CAPTURE`` names it; with neither, nothing is written.
- ``append(record)`` writes ``capture_line(record)`` as one line to
  ``DIR/capture-<pid>.jsonl``. When that file would pass ``MAX_BYTES`` it is first rotated:
  ``.1`` becomes ``.2`` … up to ``KEEP`` old files, the oldest dropped. One line is written
  with one ``write`` on a file opened for appending.
- ``append`` never raises: a failure (an unwritable directory, a full disk, a value that is
  not JSON) warns once per directory with ``CaptureWriteWarning`` and the call goes on.
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from pathlib import Path
from typing import TYPE_CHECKING

from lionagi_turns.integration._capture_line import capture_line
from lionagi_turns.integration._state import STATE

if TYPE_CHECKING:
    from lionagi_turns.integration._capture_record import CallRecord

__all__ = (
    "CAPTURE_ENV",
    "KEEP",
    "MAX_BYTES",
    "CaptureWriteWarning",
    "append",
    "capture_dir",
    "configure",
)

CAPTURE_ENV = "LIONAGI_TURNS_CAPTURE"
MAX_BYTES = 64 * 1024 * 1024
KEEP = 3

_lock = threading.Lock()


class CaptureWriteWarning(UserWarning):
    """A capture line could not be written; the model call was not affected."""


def configure(directory: str | os.PathLike[str] | None) -> None:
    """Write capture lines under ``directory`` (None: only where ``LIONAGI_TURNS_CAPTURE``
    says)."""
    STATE.capture_dir = None if directory is None else Path(directory)


def capture_dir() -> Path | None:
    """The directory capture lines go to now (None: none)."""
    if STATE.capture_dir is not None:
        return STATE.capture_dir
    named = os.environ.get(CAPTURE_ENV)
    return Path(named) if named else None


def _path(directory: Path, n: int = 0) -> Path:
    suffix = "" if n == 0 else f".{n}"
    return directory / f"capture-{os.getpid()}{suffix}.jsonl"


def _rotate(directory: Path, incoming: int) -> None:
    current = _path(directory)
    if not current.exists() or current.stat().st_size + incoming <= MAX_BYTES:
        return
    _path(directory, KEEP).unlink(missing_ok=True)
    for n in range(KEEP - 1, -1, -1):
        if _path(directory, n).exists():
            _path(directory, n).replace(_path(directory, n + 1))


def append(record: CallRecord) -> None:
    """Append ``record``'s line to this process's capture file (see the contract)."""
    directory = capture_dir()
    if directory is None:
        return
    try:
        line = (json.dumps(capture_line(record), ensure_ascii=False) + "\n").encode()
        with _lock:
            directory.mkdir(parents=True, exist_ok=True)
            _rotate(directory, len(line))
            with _path(directory).open("ab") as out:
                out.write(line)
    except (OSError, TypeError, ValueError) as exc:
        key = str(directory)
        if key not in STATE.capture_warned:
            STATE.capture_warned.add(key)
            warnings.warn(
                f"lionagi-turns could not write capture lines to {directory} "
                f"({type(exc).__name__}: {exc}); calls go on without them (warned once)",
                CaptureWriteWarning,
                stacklevel=2,
            )
