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
- Content identity is proven without holding the content: an entry keeps a weak reference to
  the revision callback (a bound method of the content) stored in one of the content's tracked
  containers; while that callback lives its ``__self__`` is the content, so ``__self__ is
  message.content`` is an identity test against a live object. A content with no tracked
  container is never cached (rendered afresh every time).
- The table holds no strong reference to any lionagi object, so a dropped branch's messages,
  contents and cache entries all go in the same garbage collection (the contents' own
  ``_TrackedList`` self-cycles no longer outlive it by a pass). The table's size is at most one
  entry per live instruction message that has been compiled.
- A rendering is stored only when none of those contents holds a value whose in-place change
  lionagi cannot track (``track.trackable``, exactly ``not _content_has_untracked_mutable``:
  e.g. a list inside a tuple, an arbitrary object). Such records are rendered afresh on every
  compile.
- List (multimodal) renderings are deep-copied on the way in and out, so no caller can change
  a cached value.
- Entries are immutable tuples, replaced whole; lookups need no lock and writes take one, so
  concurrent compiles (threads or asyncio tasks) see either a valid entry or a miss.
- With the fast path off (``LIONAGI_TURNS_NO_FAST_PATH=1`` or ``no_fast_path()``) the cache is
  neither read nor written, and every instruction is rendered by ``render_instruction``.

Limitation: a write that bypasses lionagi's tracking — ``dict.__setitem__(tracked, k, v)``,
``list.append(tracked, v)``, ``object.__setattr__(content, ...)`` — does not bump
``_revision``, so the cache (like lionagi's own render cache) keeps serving the old rendering;
switch the fast path off if code writes records that way (see ``switch``).
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Sequence
from types import MethodType
from typing import Any

from lionagi.protocols.messages import ActionResponse, Instruction

from lionagi_turns.core.render import Content, Result, own_copy, render_instruction
from lionagi_turns.memo.history import render_history
from lionagi_turns.memo.switch import ENV_VAR, fast_path_enabled, no_fast_path
from lionagi_turns.memo.track import anchor, tracked

__all__ = (
    "ENV_VAR",
    "MISS",
    "cache_size",
    "cached",
    "clear",
    "fast_path_enabled",
    "no_fast_path",
    "render_durable",
    "restore",
    "snapshot",
)

_Ref = weakref.ReferenceType
# id(message) -> (weakref to message, revisions, weakrefs to the contents' anchors, rendering)
# (anchors: weakrefs to the revision callbacks, methods bound to the contents; ``track.anchor``)
_Entry = tuple["_Ref[Instruction]", tuple[int, ...], tuple["_Ref[MethodType]", ...], Content]
_entries: dict[int, _Entry] = {}
_lock = threading.RLock()  # re-entrant: an eviction callback may fire inside _store


MISS: Any = object()  # ``cached``'s answer when no valid entry exists


def cached(
    message: Instruction,
    results: Sequence[Result] = (),
    sources: Sequence[ActionResponse] = (),
) -> Any:
    """The cached rendering ``render_durable`` would return (a fresh copy), or ``MISS``. Never
    renders, so it cannot fail; the fast path must be on (the caller checks)."""
    if not sources and not results:  # the usual record: the same checks, inlined
        entry = _entries.get(id(message))
        if entry is None:
            return MISS
        content = message.content
        revision = getattr(content, "_revision", None)
        anchors = entry[2]
        if (
            type(revision) is int
            and entry[1] == (revision,)
            and entry[0]() is message
            and len(anchors) == 1
        ):
            touch = anchors[0]()
            if touch is not None and touch.__self__ is content:
                rendered = entry[3]
                return rendered if type(rendered) is str else own_copy(rendered)
        return MISS
    key = _revisions(message.content, results, sources)
    if key is None:
        return MISS
    entry = _entries.get(id(message))
    if (
        entry is not None
        and entry[1] == key
        and entry[0]() is message
        and _same_contents(entry[2], message.content, sources)
    ):
        return own_copy(entry[3])
    return MISS


def render_durable(
    message: Instruction,
    results: Sequence[Result] = (),
    sources: Sequence[ActionResponse] = (),
    *,
    probed: bool = False,
) -> Content:
    """The provider-visible rendering of a historical instruction with ``results`` folded in and
    no system/context/guidance fold: exactly ``render_instruction(message.content,
    results=results)``. ``probed``: ``cached`` has just answered MISS for these arguments (the
    cache is not asked again)."""
    if not fast_path_enabled():
        return render_instruction(message.content, results=results)
    if not probed:
        hit = cached(message, results, sources)
        if hit is not MISS:
            return hit
    content = message.content
    key = _revisions(content, results, sources)
    rendered = render_history(content, results)
    if key is not None and tracked(content) and all(tracked(s.content) for s in sources):
        anchors = _anchors(content, sources)
        if anchors is not None:
            _store(message, key, anchors, own_copy(rendered))
    return rendered


def cache_size() -> int:
    """Number of live entries (for tests and the benchmark)."""
    return len(_entries)


def clear() -> None:
    """Drop every entry."""
    with _lock:
        _entries.clear()


def snapshot() -> dict[int, _Entry]:
    """The current entries (for the benchmark: one cache state per compile profile)."""
    with _lock:
        return dict(_entries)


def restore(entries: dict[int, _Entry]) -> None:
    """Replace every entry by a ``snapshot()``'s (entries whose message died since are
    dropped: their eviction may already have run)."""
    with _lock:
        _entries.clear()
        _entries.update((k, e) for k, e in entries.items() if e[0]() is not None)


def _revisions(
    content: object, results: Sequence[Result], sources: Sequence[ActionResponse]
) -> tuple[int, ...] | None:
    """The ``_revision`` of each content the rendering reads, or None when uncacheable."""
    if len(results) != len(sources):
        return None
    revision = getattr(content, "_revision", None)
    if type(revision) is not int:
        return None
    if not sources:
        return (revision,)
    key = [revision]
    for source in sources:
        source_revision = getattr(source.content, "_revision", None)
        if type(source_revision) is not int:
            return None
        key.append(source_revision)
    return tuple(key)


def _anchors(
    content: object, sources: Sequence[ActionResponse]
) -> tuple[_Ref[MethodType], ...] | None:
    refs = []
    for item in (content, *(s.content for s in sources)):
        ref = anchor(item)
        if ref is None:
            return None
        refs.append(ref)
    return tuple(refs)


def _same_contents(
    anchors: tuple[_Ref[MethodType], ...], content: object, sources: Sequence[ActionResponse]
) -> bool:
    if len(anchors) != len(sources) + 1:
        return False
    touch = anchors[0]()
    if touch is None or touch.__self__ is not content:
        return False
    for ref, source in zip(anchors[1:], sources, strict=True):
        touch = ref()
        if touch is None or touch.__self__ is not source.content:
            return False
    return True


def _store(
    message: Instruction,
    key: tuple[int, ...],
    anchors: tuple[_Ref[MethodType], ...],
    rendered: Content,
) -> None:
    slot = id(message)
    ref = weakref.ref(message, functools.partial(_evict, slot))
    with _lock:
        _entries[slot] = (ref, key, anchors, rendered)


def _evict(slot: int, dead: _Ref[Instruction]) -> None:
    with _lock:
        entry = _entries.get(slot)
        if entry is not None and entry[0] is dead:
            del _entries[slot]
