"""Rendering of a historical instruction's durable view (the compiler's hot path), cached.

Contract: ``render_durable(message, results, sources)`` equals
``render_instruction(message.content, results=results)`` byte for byte, always; ``results``
must be ``[action_result(s) for s in sources]`` (what ``history.project_history`` builds).

Cache rules (what makes a hit correct):

- Entries live in this module, keyed by the message object (a weak reference, so an entry dies
  with its message; identity is re-checked, so a recycled ``id()`` never matches). Nothing is
  written to any lionagi object: no ``_render_cache``, no ``_untracked_mutable_safe``.
- A hit requires the same content *objects* (the instruction's and each action response's) at
  the same ``_revision``. lionagi bumps ``_revision`` on every field assignment and on every
  in-place change made through the tracked lists/dicts it wraps content values in, so an
  in-place edit of a stored record (a dict in ``prompt_context``, ``guidance = ...``, an action
  output) is a miss.
- A rendering is stored only when none of those contents holds a value whose in-place change
  lionagi cannot track (``lionagi...message._content_has_untracked_mutable``: e.g. a list inside
  a tuple, an arbitrary object). Such records are rendered afresh on every compile.
- List (multimodal) renderings are deep-copied on the way in and out, so no caller can change
  a cached value.
- Entries are immutable tuples, replaced whole; lookups need no lock and writes take one, so
  concurrent compiles (threads or asyncio tasks) see either a valid entry or a miss.
- With the fast path off (``LIONAGI_TURNS_NO_FAST_PATH=1`` or ``no_fast_path()``) the cache is
  neither read nor written.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from lionagi.protocols.messages import ActionResponse, Instruction
from lionagi.protocols.messages.message import _content_has_untracked_mutable

from .._render import own_copy, render_instruction
from .switch import ENV_VAR, fast_path_enabled, no_fast_path

__all__ = ("ENV_VAR", "cache_size", "clear", "fast_path_enabled", "no_fast_path", "render_durable")

# id(message) -> (weakref to message, validation key, strong refs to keyed contents, rendering)
_Entry = tuple["weakref.ReferenceType[Instruction]", tuple[int, ...], tuple[Any, ...], Any]
_entries: dict[int, _Entry] = {}
_lock = threading.RLock()  # re-entrant: an eviction callback may fire inside _store


def render_durable(
    message: Instruction,
    results: Sequence[dict[str, Any]] = (),
    sources: Sequence[ActionResponse] = (),
) -> Any:
    """The provider-visible rendering of a historical instruction with ``results`` folded in and
    no system/context/guidance fold: exactly ``render_instruction(message.content,
    results=results)``."""
    if not fast_path_enabled():
        return render_instruction(message.content, results=results)
    content = message.content
    key = _key(content, results, sources)
    if key is not None:
        entry = _entries.get(id(message))
        if entry is not None and entry[1] == key and entry[0]() is message:
            return own_copy(entry[3])
    rendered = render_instruction(content, results=results)
    if key is not None and _trackable(content, sources):
        _store(message, key, (content, *(s.content for s in sources)), own_copy(rendered))
    return rendered


def cache_size() -> int:
    """Number of live entries (for tests and the benchmark)."""
    return len(_entries)


def clear() -> None:
    """Drop every entry."""
    with _lock:
        _entries.clear()


def _key(
    content: Any, results: Sequence[dict[str, Any]], sources: Sequence[ActionResponse]
) -> tuple[int, ...] | None:
    """``(id, revision)`` of each content the rendering reads, or None when uncacheable."""
    if len(results) != len(sources):
        return None
    revision = getattr(content, "_revision", None)
    if type(revision) is not int:
        return None
    key = [id(content), revision]
    for source in sources:
        source_content = source.content
        source_revision = getattr(source_content, "_revision", None)
        if type(source_revision) is not int:
            return None
        key.append(id(source_content))
        key.append(source_revision)
    return tuple(key)


def _trackable(content: Any, sources: Sequence[ActionResponse]) -> bool:
    if _content_has_untracked_mutable(content):
        return False
    return not any(_content_has_untracked_mutable(s.content) for s in sources)


def _store(
    message: Instruction, key: tuple[int, ...], keep: tuple[Any, ...], rendered: Any
) -> None:
    slot = id(message)
    ref = weakref.ref(message, functools.partial(_evict, slot))
    with _lock:
        _entries[slot] = (ref, key, keep, rendered)


def _evict(slot: int, dead: weakref.ReferenceType[Instruction]) -> None:
    with _lock:
        entry = _entries.get(slot)
        if entry is not None and entry[0] is dead:
            del _entries[slot]
