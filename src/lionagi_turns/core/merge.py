"""ADR-0007 D2 §2: folding action results into a prompt context, in linear time.

``merge_results(context, results)`` appends each result not equal to an item already present,
earlier results of the same batch included: exactly the outcome of ``result not in merged`` for
each result in turn. Values with a structural *canonical key* (``canonical_key``) are compared
by key (a set lookup); an item or result without one is compared with ``==`` as before, and a
comparison that raises becomes a ``TypeError`` naming the item.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Hashable, Sequence
from typing import Any

from lionagi_turns.core.values import MAX_DEPTH, type_name

__all__ = ("canonical_key", "merge_results")

_SCALARS = frozenset({str, int, bool, type(None), bytes, datetime.date, datetime.datetime})
_TAGS: tuple[tuple[type, str], ...] = ((dict, "d"), (list, "l"), (tuple, "t"))


def canonical_key(value: Any, _depth: int = 0) -> Hashable | None:
    """A hashable key with ``canonical_key(a) == canonical_key(b)`` exactly when ``a == b``,
    for values built from ``str``, ``int``, ``bool``, ``None``, ``bytes``, dates, non-NaN
    ``float`` and ``dict``/``list``/``tuple`` (subclasses that keep the base ``__eq__``, such as
    lionagi's tracked containers, included); None for any other value, to be compared with
    ``==``. Scalars stand for themselves (Python's own equality across ``bool``/``int``/
    ``float`` carries over); every container is a tagged tuple, so no scalar equals one.
    Values nested deeper than ``MAX_DEPTH`` have no key."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is float:
        return None if math.isnan(value) else value
    if _depth >= MAX_DEPTH:
        return None
    tag = _container_tag(value, kind)
    if tag is None:
        return None
    if isinstance(value, dict):
        pairs = []
        for key, child in value.items():
            if type(key) not in _SCALARS and not (type(key) is float and not math.isnan(key)):
                return None
            child_key = canonical_key(child, _depth + 1)
            if child_key is None:
                return None
            pairs.append((key, child_key))
        return (tag, frozenset(pairs))
    keys = []
    for child in value:
        child_key = canonical_key(child, _depth + 1)
        if child_key is None:
            return None
        keys.append(child_key)
    return (tag, tuple(keys))


def _container_tag(value: object, kind: type) -> str | None:
    """"d"/"l"/"t" for a dict/list/tuple whose equality is its base class's, else None."""
    for base, tag in _TAGS:
        if isinstance(value, base):
            return tag if kind is base or kind.__eq__ is base.__eq__ else None
    return None


def merge_results(
    context: Sequence[object], results: Sequence[object], *, path: str = "prompt_context"
) -> list[object]:
    """``context`` followed by each result not equal to an item already present (ADR D2 step
    2), earlier results of the same batch included: the outcome of ``result not in merged``
    for each result in turn, in time linear in the number of keyed values. A comparison that
    raises is a TypeError naming ``path[index]`` of the item."""
    merged = list(context)
    keys: set[Hashable] = set()
    unkeyed: list[int] = []  # indexes in ``merged`` of items without a canonical key
    for index, item in enumerate(merged):
        key = canonical_key(item)
        if key is None:
            unkeyed.append(index)
        else:
            keys.add(key)
    for result in results:
        key = canonical_key(result)
        if key is None:
            present = any(_equal(merged, i, result, path) for i in range(len(merged)))
        else:
            present = key in keys or any(_equal(merged, i, result, path) for i in unkeyed)
        if present:
            continue
        if key is None:
            unkeyed.append(len(merged))
        else:
            keys.add(key)
        merged.append(result)
    return merged


def _equal(merged: list[object], index: int, result: object, path: str) -> bool:
    item = merged[index]
    if item is result:
        return True
    try:
        return bool(item == result)
    except Exception as exc:
        raise TypeError(
            f"{path}[{index}] (of type {type_name(type(item))}) raised {type(exc).__name__} when "
            "compared with a folded action result, so duplicates cannot be skipped. Give it "
            "an __eq__ that returns a bool, or pass plain data."
        ) from exc
