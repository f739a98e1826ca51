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
- ``ValueError`` for an ``int`` too long for ``str()`` (Python's digit limit);
- ``ValueError`` for text (a value or a dict key) holding a lone surrogate (U+D800..U+DFFF):
  UTF-8 cannot encode it, so a request holding it fails when it is sent (``check_text`` is
  the same rule for one text field).

Folded action results pass the same rules as every other value, on every profile: a NaN or
infinite float, a dict key that is not text and ``bytes`` render as lionagi renders them (YAML;
Amendment 1's ``tool_results`` JSON encodes them as its ``canonical_json`` documents), so a
history sent with ``install()`` off is sent with it on.

What is renderable is read from lionagi's own ``MinimalDumper`` representer tables at each call,
so a representer registered on it later is honoured. Containers are the types lionagi's pruning
turns into plain ones (``dict``, ``list``, ``tuple`` and their subclasses, lionagi's tracked
containers included); their keys are checked like values. Empty values lionagi prunes (``None``,
blank text, empty containers, an empty set) pass. The walk never calls ``repr``, ``__eq__``,
``__hash__`` or ``__deepcopy__`` of a value.

``naming_record(record)`` re-raises a failure while one record renders with the record named
(see its docstring).
"""

from __future__ import annotations

import re
import reprlib
import sys
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, Literal, TypeAlias

from lionagi._errors import EmptyOutgoingContentError
from lionagi.libs.schema.minimal_yaml import MinimalDumper

__all__ = (
    "MAX_DEPTH",
    "MAX_SHARED_ITEMS",
    "JsonObject",
    "JsonValue",
    "check_text",
    "check_value",
    "naming_record",
    "shown",
    "type_name",
)

#: Containers a single value may nest (the value itself counts as the first when it is one).
MAX_DEPTH = 100
#: Items a value may reach again through containers it holds more than once (YAML writes every
#: reference out in full, so a few shared levels expand exponentially).
MAX_SHARED_ITEMS = 1_000_000

_CONTAINERS = (dict, list, tuple)
_PLAIN = frozenset({str, bool, float, type(None)})
_EXIT = object()  # stack marker: leave the container below it
_SURROGATE = re.compile("[\ud800-\udfff]")

#: A JSON value as ``json.loads`` returns it (the shapes of tool schemas, provider content
#: parts and request bodies); ``JsonObject`` is one JSON object.
JsonValue: TypeAlias = str | int | float | bool | list["JsonValue"] | dict[str, "JsonValue"] | None
JsonObject: TypeAlias = dict[str, JsonValue]

#: Where a checked item sits inside the value: None for the value itself, else the linked pair
#: (where its container sits, the step into it: an index, a key or a ``_KeyOf``).
_Where: TypeAlias = tuple["_Where", object] | None


def check_text(text: str, path: str) -> None:
    """Raise ValueError naming ``path`` when ``text`` holds a lone surrogate; cheap for ASCII
    text (one ``isascii`` scan)."""
    if not text.isascii() and (found := _SURROGATE.search(text)) is not None:
        _surrogate(path, None, found)


def _surrogate(path: str, where: _Where, found: re.Match[str], key: bool = False) -> None:
    what = "a key that holds" if key else "text holding"
    raise ValueError(
        f"{_where(path, where)} is {what} a lone surrogate (U+{ord(found.group()):04X} at "
        f"character {found.start()}), which UTF-8 cannot encode, so the request could not be "
        "sent. Repair the text before storing it (a split surrogate pair, or bytes decoded "
        "with 'surrogateescape'), or remove the record from the progression."
    )


def check_value(value: object, path: str) -> None:
    """Raise ValueError/TypeError (see the module rules) naming ``path`` and the place inside
    ``value``; return None when lionagi can render ``value`` deterministically."""
    # stack entries: (value, where, depth) or (_EXIT, id, 0); ``where`` is a linked tuple
    # (parent, step) turned into text only for an error message.
    stack: list[tuple[Any, Any, int]] = [(value, None, 0)]
    open_ids: dict[int, _Where] = {}  # id of each container being walked -> where it is
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
            if (
                kind is str
                and not item.isascii()
                and (found := _SURROGATE.search(item)) is not None
            ):
                _surrogate(path, where, found)
            continue
        if kind is int:
            _check_int(item, path, where)
            continue
        if isinstance(item, _CONTAINERS):
            shared_items = _enter(item, where, depth, path, stack, open_ids, seen, shared_items)
            continue
        _check_leaf(item, kind, path, where, representers)


def _enter(
    item: dict[Any, Any] | list[Any] | tuple[Any, ...],
    where: _Where,
    depth: int,
    path: str,
    stack: list[tuple[Any, Any, int]],
    open_ids: dict[int, _Where],
    seen: set[int],
    shared_items: int,
) -> int:
    """Check container ``item`` (cycle, depth, shared expansion), push its exit marker and the
    children that need a visit; return the shared-items count so far."""
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
    # ASCII text, bools, floats and None need no visit: push only what needs a check
    if isinstance(item, dict):
        for key, child in item.items():
            kind = type(child)
            if kind not in _PLAIN or (kind is str and not child.isascii()):
                stack.append((child, (where, key), depth + 1))
            if type(key) is not str:
                stack.append((key, (where, _KeyOf(key)), depth + 1))
            elif not key.isascii() and (found := _SURROGATE.search(key)) is not None:
                _surrogate(path, (where, _KeyOf(key)), found, key=True)
    else:
        for index, child in enumerate(item):
            kind = type(child)
            if kind not in _PLAIN or (kind is str and not child.isascii()):
                stack.append((child, (where, index), depth + 1))
    return shared_items


def _check_leaf(
    item: object, kind: type, path: str, where: _Where, representers: Mapping[object, object]
) -> None:
    """A value that is neither plain, an int nor a dict/list/tuple: an empty set, or a type
    lionagi's YAML renderer represents; anything else is the error naming it."""
    if isinstance(item, set):
        if item:
            raise TypeError(
                f"{_where(path, where)} is a set; lionagi renders a set's items in hash "
                "order, which changes from process to process. Pass a list (for example "
                "sorted(...)) in the order the model should see."
            )
        return
    if kind in representers or _multi_represented(kind):
        return
    if isinstance(item, type):
        raise TypeError(
            f"{_where(path, where)} is the class {type_name(item)}, not a value; lionagi's "
            "YAML renderer cannot represent a class. Pass its name or its schema instead."
        )
    raise TypeError(
        f"{_where(path, where)} is of type {type_name(kind)}, which lionagi's YAML "
        "renderer cannot represent. Convert it to text, a number, a bool, None, or a "
        "dict/list of those."
    )


def _check_int(value: int, path: str, where: _Where) -> None:
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

    def __init__(self, key: object) -> None:
        self.key = key


def _where(path: str, where: _Where) -> str:
    steps: list[object] = []
    while where is not None:
        where, step = where
        steps.append(step)
    text = path
    for step in reversed(steps):
        if isinstance(step, _KeyOf):
            text += f" (a key of type {type_name(type(step.key))})"
        elif isinstance(step, int) and not isinstance(step, bool):
            text += f"[{step}]"
        elif isinstance(step, str):
            text += f"[{str.__repr__(_short(step))}]"
        else:
            text += f"[<{type_name(type(step))} key>]"
    return text


def _short(text: str) -> str:
    text = str.__str__(text)
    return text if len(text) <= 40 else text[:37] + "..."


def type_name(kind: type) -> str:
    """``kind``'s qualified name, without the module for builtins (for error texts)."""
    module = getattr(kind, "__module__", "")
    name = getattr(kind, "__qualname__", getattr(kind, "__name__", "object"))
    return name if module in ("builtins", "") else f"{module}.{name}"


_REPR = reprlib.Repr()
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = 78
_REPR.maxlevel = 3


def shown(value: object) -> str:
    """``value`` for an error text: its ``repr`` bounded to 80 characters (containers and long
    texts are elided, so the work is bounded too), or ``a <type>`` when its ``repr`` raises."""
    try:
        text = _REPR.repr(value)
    except Exception:  # the error being reported is raised anyway; only its wording falls back
        return f"a {type_name(type(value))}"
    return text if len(text) <= 80 else text[:77] + "..."


class naming_record:  # a context manager used like a function: ``with naming_record(...)``
    """Re-raise a failure while rendering one record with ``record`` (e.g. "history position
    3, instruction id ...", or a function returning that text, called only on a failure)
    appended: a ValueError stays a ValueError, a TypeError a TypeError, and any other
    exception a value raised (a broken ``__iter__``, ``__deepcopy__``, ...) becomes a
    TypeError; the original is chained as ``__cause__``. lionagi's
    ``EmptyOutgoingContentError``, ``MemoryError`` and what is not an ``Exception`` pass
    through unchanged."""

    __slots__ = ("_record",)

    def __init__(self, record: str | Callable[[], str]) -> None:
        self._record = record

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> Literal[False]:
        if exc is None or not isinstance(exc, Exception):
            return False
        if isinstance(exc, EmptyOutgoingContentError | MemoryError):
            return False
        record = self._record if isinstance(self._record, str) else self._record()
        if isinstance(exc, ValueError):
            raise ValueError(f"{_text(exc)} ({record})") from exc
        if isinstance(exc, TypeError):
            raise TypeError(f"{_text(exc)} ({record})") from exc
        raise TypeError(
            f"a value raised {type(exc).__name__}: {_text(exc)} ({record}). Pass plain data "
            "(text, numbers, bools, None, dicts and lists of those)."
        ) from exc


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} whose text cannot be shown>"
