"""Value guards: refuse, by path, every value the instruction renderer cannot render safely.

``check_value(value, path)`` walks ``value`` iteratively (no recursion, so no value can exhaust
the stack here) before lionagi's ``minimal_yaml`` sees it, and raises:

- ``ValueError`` for a value that contains itself (a cycle, through any mix of lists, dicts and
  tuples), or that nests more than ``MAX_DEPTH`` containers (lionagi's renderer recurses about
  three frames per level and fails with ``RecursionError`` somewhere past 300 levels, depending
  on how deep the caller's stack already is; a fixed limit makes the outcome deterministic);
- ``TypeError`` for a value lionagi's YAML dumper has no representer for (``object()``, a class,
  a ``frozenset``, an enum, a model instance, a ``str`` subclass, ...), and for a non-empty
  ``set`` (rendered in hash order: different text in every process, so never deterministic;
  pass a list in the order you mean);
- ``ValueError`` for a value holding the same containers so often that it expands to more
  than ``MAX_SHARED_ITEMS`` repeated items (lionagi's YAML writes every reference out in full,
  so ``level = [level, level]`` forty times over would never finish rendering);
- ``ValueError`` for an ``int`` too long for ``str()`` (Python's digit limit).

What is renderable is read from lionagi's own ``MinimalDumper`` representer tables at each call,
so a representer registered on it later is honoured. Containers are the types lionagi's pruning
turns into plain ones (``dict``, ``list``, ``tuple`` and their subclasses, lionagi's tracked
containers included); their keys are checked like values. Empty values lionagi prunes (``None``,
blank text, empty containers, an empty set) pass. The walk never calls ``repr``, ``__eq__``,
``__hash__`` or ``__deepcopy__`` of a value.

``merge_results(context, results)`` is the D2 step 2 fold (each result not equal to an item
already present is appended, earlier results of the batch included) in linear time: values with
a structural *canonical key* (see ``canonical_key``) are compared by key; an item or result
without one is compared with ``==`` as before, and a comparison that raises becomes a
``TypeError`` naming the item.
"""

from __future__ import annotations

import datetime
import math
import sys
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from lionagi._errors import EmptyOutgoingContentError
from lionagi.libs.schema.minimal_yaml import MinimalDumper

__all__ = (
    "MAX_DEPTH",
    "MAX_SHARED_ITEMS",
    "canonical_key", "check_value", "merge_results",
    "naming_record",
)

#: Containers a single value may nest (the value itself counts as the first when it is one).
MAX_DEPTH = 100
#: Items a value may reach again through containers it holds more than once (YAML writes every
#: reference out in full, so a few shared levels expand exponentially).
MAX_SHARED_ITEMS = 1_000_000

_CONTAINERS = (dict, list, tuple)
_PLAIN = frozenset({str, bool, float, type(None)})
_EXIT = object()  # stack marker: leave the container below it


def check_value(value: Any, path: str) -> None:
    """Raise ValueError/TypeError (see the module rules) naming ``path`` and the place inside
    ``value``; return None when lionagi can render ``value`` deterministically."""
    # stack entries: (value, where, depth) or (_EXIT, id, 0); ``where`` is a linked tuple
    # (parent, step) turned into text only for an error message.
    stack: list[tuple[Any, Any, int]] = [(value, None, 0)]
    open_ids: dict[int, Any] = {}  # id of each container being walked -> where it is
    seen: set[int] = set()  # id of every container walked (kept alive by ``value``)
    shared_items = 0
    representers = MinimalDumper.yaml_representers
    while stack:
        item, where, depth = stack.pop()
        if item is _EXIT:
            del open_ids[where]
            continue
        kind = type(item)
        if kind in _PLAIN:
            continue
        if kind is int:
            _check_int(item, path, where)
            continue
        if isinstance(item, _CONTAINERS):
            ident = id(item)
            if ident in open_ids:
                raise ValueError(
                    f"{_where(path, open_ids[ident])} contains itself (a cycle: "
                    f"{_where(path, where)} is the same object); lionagi cannot render a cyclic "
                    "value. Pass a copy without the back-reference."
                )
            if depth >= MAX_DEPTH:
                raise ValueError(
                    f"{_where(path, where)} nests more than {MAX_DEPTH} containers; values "
                    f"are limited to {MAX_DEPTH} levels. Flatten it or pass it as a string."
                )
            if ident in seen:
                shared_items += 1 + len(item)
                if shared_items > MAX_SHARED_ITEMS:
                    raise ValueError(
                        f"{path} holds the same containers so many times that it expands to "
                        f"more than {MAX_SHARED_ITEMS:,} repeated items (YAML writes every "
                        f"reference out in full; the last one at {_where(path, where)}). Pass "
                        "each shared value once."
                    )
            else:
                seen.add(ident)
            open_ids[ident] = where
            stack.append((_EXIT, ident, 0))
            # text, bools, floats and None need no visit: push only what needs a check
            if isinstance(item, dict):
                for key, child in item.items():
                    if type(child) not in _PLAIN:
                        stack.append((child, (where, key), depth + 1))
                    if type(key) is not str:
                        stack.append((key, (where, _KeyOf(key)), depth + 1))
            else:
                for index, child in enumerate(item):
                    if type(child) not in _PLAIN:
                        stack.append((child, (where, index), depth + 1))
            continue
        if isinstance(item, set):
            if item:
                raise TypeError(
                    f"{_where(path, where)} is a set; lionagi renders a set's items in hash "
                    "order, which changes from process to process. Pass a list (for example "
                    "sorted(...)) in the order the model should see."
                )
            continue
        if kind in representers or _multi_represented(kind):
            continue
        if isinstance(item, type):
            raise TypeError(
                f"{_where(path, where)} is the class {_type_name(item)}, not a value; lionagi's "
                "YAML renderer cannot represent a class. Pass its name or its schema instead."
            )
        raise TypeError(
            f"{_where(path, where)} is of type {_type_name(kind)}, which lionagi's YAML "
            "renderer cannot represent. Convert it to text, a number, a bool, None, or a "
            "dict/list of those."
        )


def _check_int(value: int, path: str, where: Any) -> None:
    limit = sys.get_int_max_str_digits()
    if limit and value.bit_length() > limit * 3:  # at least `limit` decimal digits
        try:
            str(value)
        except ValueError:
            raise ValueError(
                f"{_where(path, where)} is an integer of more than {limit} digits, which "
                "Python refuses to convert to text. Pass it as a string."
            ) from None


def _multi_represented(kind: type) -> bool:
    multi = MinimalDumper.yaml_multi_representers
    return any(base is not None and issubclass(kind, base) for base in multi)


class _KeyOf:
    """A path step that names a dict key itself rather than its value."""

    __slots__ = ("key",)

    def __init__(self, key: Any) -> None:
        self.key = key


def _where(path: str, where: Any) -> str:
    steps: list[Any] = []
    while where is not None:
        where, step = where
        steps.append(step)
    text = path
    for step in reversed(steps):
        if isinstance(step, _KeyOf):
            text += f" (a key of type {_type_name(type(step.key))})"
        elif isinstance(step, int) and not isinstance(step, bool):
            text += f"[{step}]"
        elif isinstance(step, str):
            text += f"[{str.__repr__(_short(step))}]"
        else:
            text += f"[<{_type_name(type(step))} key>]"
    return text


def _short(text: str) -> str:
    text = str.__str__(text)
    return text if len(text) <= 40 else text[:37] + "..."


def _type_name(kind: type) -> str:
    module = getattr(kind, "__module__", "")
    name = getattr(kind, "__qualname__", getattr(kind, "__name__", "object"))
    return name if module in ("builtins", "") else f"{module}.{name}"


@contextmanager
def naming_record(record: str) -> Iterator[None]:
    """Re-raise a failure while rendering one record with ``record`` (e.g. "history position
    3, instruction id ...") appended: a ValueError stays a ValueError, a TypeError a TypeError,
    and any other exception a value raised (a broken ``__iter__``, ``__deepcopy__``, ...)
    becomes a TypeError; the original is chained as ``__cause__``. lionagi's
    ``EmptyOutgoingContentError`` and ``MemoryError`` pass through unchanged."""
    try:
        yield
    except (EmptyOutgoingContentError, MemoryError):
        raise
    except ValueError as exc:
        raise ValueError(f"{_text(exc)} ({record})") from exc
    except TypeError as exc:
        raise TypeError(f"{_text(exc)} ({record})") from exc
    except Exception as exc:
        raise TypeError(
            f"a value raised {type(exc).__name__}: {_text(exc)} ({record}). Pass plain data "
            "(text, numbers, bools, None, dicts and lists of those)."
        ) from exc


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} whose text cannot be shown>"


# --------------------------------------------------------------------------- result folding

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


def _container_tag(value: Any, kind: type) -> str | None:
    """"d"/"l"/"t" for a dict/list/tuple whose equality is its base class's, else None."""
    for base, tag in _TAGS:
        if isinstance(value, base):
            return tag if kind is base or kind.__eq__ is base.__eq__ else None
    return None


def merge_results(
    context: Sequence[Any], results: Sequence[Any], *, path: str = "prompt_context"
) -> list[Any]:
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


def _equal(merged: list[Any], index: int, result: Any, path: str) -> bool:
    item = merged[index]
    if item is result:
        return True
    try:
        return bool(item == result)
    except Exception as exc:
        raise TypeError(
            f"{path}[{index}] (of type {_type_name(type(item))}) raised {type(exc).__name__} when "
            "compared with a folded action result, so duplicates cannot be skipped. Give it "
            "an __eq__ that returns a bool, or pass plain data."
        ) from exc
