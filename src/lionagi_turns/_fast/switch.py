"""The one switch for the compiler's render cache and fast YAML path.

The fast path is on unless the environment variable ``LIONAGI_TURNS_NO_FAST_PATH`` is set to
anything but ``""`` or ``"0"`` (read at every call), or code runs inside ``no_fast_path()``.
Off, every instruction is rendered by lionagi's own renderer on every compile and nothing is
cached; the compiled output is byte-identical either way.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ("ENV_VAR", "fast_path_enabled", "no_fast_path")

ENV_VAR = "LIONAGI_TURNS_NO_FAST_PATH"

# None: follow the environment; True/False: forced for this context (thread / asyncio task).
_forced: ContextVar[bool | None] = ContextVar("lionagi_turns_fast_path", default=None)


def fast_path_enabled() -> bool:
    """Whether caches and the C emitter may be used in the current context."""
    forced = _forced.get()
    if forced is not None:
        return forced
    return os.environ.get(ENV_VAR, "") in ("", "0")


@contextmanager
def no_fast_path() -> Iterator[None]:
    """Disable every cache and fast path for code run inside this block (this context only)."""
    token = _forced.set(False)
    try:
        yield
    finally:
        _forced.reset(token)
