"""Progress on standard error while a command loads and compiles a long branch.

Contract of ``progress()``: a context manager yielding ``step(text)``, which names the stage
the command is in. When standard error is a terminal, a status line (Rich's spinner, naming
the stage and the seconds so far) appears once the block has run for ``DELAY`` seconds and is
erased when the block ends, before the command prints its output; a block that ends sooner
shows nothing. When standard error is not a terminal (a pipe, a file, a captured test) nothing
at all is written to it, and no thread is started.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.status import Status

__all__ = ("DELAY", "progress")

DELAY = 1.0


def _stderr_is_terminal() -> bool:
    isatty = getattr(sys.stderr, "isatty", None)
    try:
        return bool(callable(isatty) and isatty())
    except ValueError:  # a closed stream
        return False


class _Shown:
    """The status line, started by a timer after ``DELAY`` seconds unless stopped first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stage = "loading the branch"
        self._start = time.monotonic()
        self._status: Status | None = None
        self._done = False
        self._timer = threading.Timer(DELAY, self._show)
        self._timer.daemon = True
        self._timer.start()

    def _text(self) -> str:
        return f"lionagi-turns: {self._stage} ({time.monotonic() - self._start:.0f} s)"

    def __rich__(self) -> str:
        """The status text as of each refresh (the seconds keep counting)."""
        return self._text()

    def _show(self) -> None:
        with self._lock:
            if self._done:
                return
            console = Console(stderr=True, highlight=False, markup=False, emoji=False)
            self._status = Status(self, console=console)
            self._status.start()

    def step(self, stage: str) -> None:
        with self._lock:
            if stage:
                self._stage = stage

    def stop(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._done = True
            if self._status is not None:
                self._status.stop()


@contextmanager
def progress() -> Iterator[Callable[[str], None]]:
    """See the module contract."""
    if not _stderr_is_terminal():
        yield lambda stage: None
        return
    shown = _Shown()
    try:
        yield shown.step
    finally:
        shown.stop()
