"""Whether lionagi's revision counter sees every in-place change of a content: a faster,
exact-type form of ``lionagi...message._content_has_untracked_mutable``.

Contract: ``trackable(content)`` is ``not _content_has_untracked_mutable(content)``, always.

The walk accepts only what it can decide on its own — an exact ``InstructionContent`` /
``ActionResponseContent`` whose render inputs hold exact ``str``/``int``/``float``/``bool``/
``bytes``/``None`` leaves, classes, and lionagi's ``_TrackedList``/``_TrackedDict`` (never a
tuple, so nothing under it is untracked) up to ``MAX_DEPTH`` deep, each container seen once.
On anything else (another type, a container seen twice — a cycle or a shared value, deeper
nesting) it asks lionagi's own check for the whole content, which decides those cases.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable
from types import MethodType
from typing import Any, cast

from lionagi.protocols.messages.action_response import ActionResponseContent
from lionagi.protocols.messages.instruction import InstructionContent
from lionagi.protocols.messages.message import (
    _content_has_untracked_mutable,
    _TrackedDict,
    _TrackedList,
)

__all__ = ("MAX_DEPTH", "anchor", "trackable", "tracked")

MAX_DEPTH = 64
_LEAVES = frozenset({str, int, float, bool, bytes, type(None)})
_FIELDS = {
    InstructionContent: InstructionContent.field_names(),
    ActionResponseContent: ActionResponseContent.field_names(),
}


class _Unsure(Exception):
    """The exact walk cannot decide: lionagi's check does."""


def trackable(content: object) -> bool:
    """``not _content_has_untracked_mutable(content)``."""
    names = _FIELDS.get(type(content))
    if names is not None:
        seen: set[int] = set()
        try:
            for name in names:
                _walk(getattr(content, name), seen, 0)
            return True
        except _Unsure:
            pass
    return not _content_has_untracked_mutable(content)


# id(content) -> (weak reference to a revision callback bound to the content, its _revision):
# the contents known to be trackable at that revision. An entry dies with its content (the
# callback lives in the content's tracked containers), and identity is re-checked through the
# callback's ``__self__``, so a recycled id() never matches. Only True verdicts are kept.
_verdicts: dict[int, tuple[weakref.ReferenceType[MethodType], int]] = {}
_lock = threading.Lock()
_TRACKED = (_TrackedList, _TrackedDict)
_ANCHORS = ("prompt_context", "tool_schemas", "images", "arguments", "output")


def tracked(content: object) -> bool:
    """``trackable(content)``, remembered per content object and ``_revision`` (a content
    with no tracked container is checked every time)."""
    entry = _verdicts.get(id(content))
    revision = getattr(content, "_revision", None)
    if entry is not None and entry[1] == revision and type(revision) is int:
        touch = entry[0]()
        if touch is not None and touch.__self__ is content:
            return True
    if not trackable(content):
        return False
    if type(revision) is int:
        slot = id(content)
        ref = anchor(content, functools.partial(_forget, slot))
        if ref is not None:
            with _lock:
                _verdicts[slot] = (ref, revision)
    return True


def anchor(
    content: object, callback: Callable[[weakref.ReferenceType[MethodType]], object] | None = None
) -> weakref.ReferenceType[MethodType] | None:
    """A weak reference (with ``callback``) to a revision callback bound to ``content`` and
    held by one of its tracked containers, or None when it has none: while the reference
    lives, its ``__self__`` is ``content``, so it proves a content's identity without holding
    the content."""
    for name in _ANCHORS:
        value: object = getattr(content, name, None)
        if type(value) in _TRACKED:
            touch = getattr(value, "_touch", None)
            if getattr(touch, "__self__", None) is content:  # a method bound to ``content``
                return weakref.ref(cast(MethodType, touch), callback)
    return None


def _forget(slot: int, dead: weakref.ReferenceType[MethodType]) -> None:
    with _lock:
        entry = _verdicts.get(slot)
        if entry is not None and entry[0] is dead:
            del _verdicts[slot]



def _walk(value: Any, seen: set[int], depth: int) -> None:
    kind = type(value)
    if kind in _LEAVES:
        return
    if kind is _TrackedList or kind is _TrackedDict:
        if depth >= MAX_DEPTH or id(value) in seen:
            raise _Unsure
        seen.add(id(value))
        if kind is _TrackedDict:
            for key, item in value.items():
                if type(key) not in _LEAVES:
                    raise _Unsure
                _walk(item, seen, depth + 1)
        else:
            for item in value:
                _walk(item, seen, depth + 1)
        return
    if isinstance(value, type):
        return
    raise _Unsure
