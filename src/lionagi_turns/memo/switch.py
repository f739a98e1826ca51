"""The one switch for the compiler's render cache and fast YAML path.

The fast path is on unless the environment variable ``LIONAGI_TURNS_NO_FAST_PATH`` is set to
anything but ``""`` or ``"0"``, code runs inside ``no_fast_path()``, or a registered guard
says the fast path's proof no longer holds (``yaml.tables_unchanged``: a YAML representer or
resolver registered on lionagi's ``MinimalDumper`` after import). Off, every instruction is
rendered by lionagi's own renderer on every compile and nothing is cached; the compiled output
is byte-identical either way.

When it is read: on every call of ``fast_path_enabled()``, except inside ``resolved()`` — the
compiler enters it once per compile, so the environment and the guards are read once per
compile, not once per instruction.

Limitation (the cache): a write that bypasses lionagi's change tracking —
``dict.__setitem__(tracked_dict, k, v)``, ``list.append(tracked_list, v)``,
``object.__setattr__(content, name, v)`` on a stored record — does not advance the record's
``_revision``, so the render cache keeps the old rendering (lionagi's own render cache does the
same). Code that writes records that way must run with ``LIONAGI_TURNS_NO_FAST_PATH=1``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from lionagi_turns.core.profile import NO_MEMO, Memo

__all__ = (
    "ENV_VAR",
    "add_guard",
    "choose",
    "fast_path_enabled",
    "no_fast_path",
    "offer",
    "resolved",
)

ENV_VAR = "LIONAGI_TURNS_NO_FAST_PATH"

# None: follow the environment and guards; True/False: forced for this context.
_forced: ContextVar[bool | None] = ContextVar("lionagi_turns_fast_path", default=None)
_guards: list[Callable[[], bool]] = []
_fast: list[Memo] = []  # ``fast.FAST`` once it is imported (it offers itself)


def choose() -> Memo:
    """The one reading of the switch that picks a compile's memo: the fast path's when the
    switch is on, else ``NO_MEMO`` (lionagi's renderer every time, nothing kept)."""
    if _fast and fast_path_enabled():
        return _fast[-1]
    return NO_MEMO


def offer(memo: Memo) -> None:
    """Make ``memo`` the one ``choose`` picks with the switch on (``fast`` offers ``FAST``)."""
    _fast.append(memo)


def add_guard(guard: Callable[[], bool]) -> None:
    """Register a check that must hold for the fast path to be used (read with the switch)."""
    _guards.append(guard)


def fast_path_enabled() -> bool:
    """Whether caches and the C emitter may be used in the current context."""
    forced = _forced.get()
    if forced is not None:
        return forced
    if os.environ.get(ENV_VAR, "") not in ("", "0"):
        return False
    return all(guard() for guard in _guards)


@contextmanager
def no_fast_path() -> Iterator[None]:
    """Disable every cache and fast path for code run inside this block (this context only)."""
    token = _forced.set(False)
    try:
        yield
    finally:
        _forced.reset(token)


@contextmanager
def resolved() -> Iterator[bool]:
    """Read the switch once and keep that answer for code run inside this block (this context
    only); yields it."""
    enabled = fast_path_enabled()
    token = _forced.set(enabled)
    try:
        yield enabled
    finally:
        _forced.reset(token)
