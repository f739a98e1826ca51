"""YAML text written directly, for the documents whose every scalar's style is decided here.

Contract: ``direct_yaml(value)`` is None or exactly the text ``yaml.fast_yaml(value)`` returns
(the text of lionagi's ``minimal_yaml``): the same pruning, the same domain, the same bytes.
None means "not decided here": the caller goes on to the event path, which decides everything
(and hands what is outside the proven domain to lionagi).

Rules (what is written here; anything else is None):

- The root is a dict or a list (exact, or lionagi's tracked ones) that keeps at least one
  child after pruning; pruning is ``yaml._walk``'s: a whitespace-only string, None and a
  container that keeps nothing are dropped; every dict key is checked, also a dropped one's.
- Layout is PyYAML's block style with indent 2: a mapping's keys at its indent; a nested
  mapping two deeper; a sequence that is a mapping's value at the mapping's indent ("- "
  flush with the key); a sequence's items at its indent; a mapping or sequence that is a
  sequence item starts on the item's line, two deeper; every line ends with a line feed.
- A one-line string (keys too) holding only in-domain characters other than TAB: plain when
  PyYAML's ``analyze_scalar`` allows a block plain scalar (``_BLOCKED`` is exactly its block
  indicators plus a leading or trailing space, for such a string) and it reads back as a str
  (``yaml._plain_implicit``); otherwise single-quoted, ``'`` doubled (PyYAML allows single
  quotes for every such string; the line is never folded: the width is 2**31 - 1).
- A multi-line string value (its representer asks for ``|``): a literal block when PyYAML
  allows one (no trailing space, no space before a line feed) and it needs no indentation
  hint (it does not start with a space or line feed); the chomping hint is ``-`` without a
  final line feed and none with exactly one; its lines are indented two deeper than the
  enclosing collection, empty lines left empty.
- An int (at most ``yaml._INT_BITS`` bits), float or bool: the registered representer's text,
  when it asks for no style, reads back with its own tag and is a plain scalar as above.
- Keys must also be short enough for a simple key (``yaml._key_short``).
- Nesting beyond ``yaml.MAX_DEPTH`` or more than ``DIRECT_ITEMS`` items in all: None.
"""

from __future__ import annotations

import re
from itertools import repeat
from typing import Any

from lionagi_turns.memo import yaml_tables as _yaml

__all__ = ("DIRECT_ITEMS", "direct_yaml")

DIRECT_ITEMS = 100_000

_DICTS, _LISTS, _STR_TAG = _yaml.DICTS, _yaml.LISTS, _yaml.STR_TAG
# For a one-line string without TAB (every other in-domain character is printable and no
# whitespace but the space), PyYAML's block indicators and the leading/trailing-space rule.
_BLOCKED = re.compile(r"^[#,\[\]{}&*!|>'\"%@`]|^[?-](?: |$)|:(?: |$)| #|^---|^\.\.\.|^ | $")


class _Undecided(Exception):
    """Not written here: the event path decides."""


def direct_yaml(value: object) -> str | None:
    """The document's text (module rules), or None."""
    kind = type(value)
    out: list[str] = []
    budget = [DIRECT_ITEMS]
    try:
        if kind not in _DICTS and kind not in _LISTS:
            return None
        kept = _collection(value, kind in _DICTS, 0, False, out, 1, budget)
    except _Undecided:
        return None
    return "".join(out) if kept else None


def _collection(
    value: Any,
    mapping: bool,
    indent: int,
    inline: bool,
    out: list[str],
    depth: int,
    budget: list[int],
) -> bool:
    """Write a mapping's (``mapping``) or a sequence's kept entries, each ``key:`` or ``-`` at
    ``indent``; ``inline``: the first kept one continues the current line. Whether any was
    kept."""
    budget[0] -= len(value) + 1
    if budget[0] < 0:
        raise _Undecided
    pad = " " * indent
    kept = False
    for key, item in value.items() if mapping else zip(repeat(None), value):
        head = _key(key) if mapping else "-"  # every key is checked, a dropped one's too
        mark = len(out)
        out.append(head if inline and not kept else pad + head)
        if _value(item, indent, out, depth, budget, mapping):
            kept = True
        else:
            del out[mark:]
    return kept


def _value(
    item: Any, indent: int, out: list[str], depth: int, budget: list[int], in_mapping: bool
) -> bool:
    """Write ``item`` after a ``key:`` or ``-`` already written (``indent``: the enclosing
    collection's); False (nothing written) when pruning drops it."""
    kind = type(item)
    if kind is str:
        if not item.strip():
            return False
        if "\n" in item:
            out.append(_literal(item, indent + 2))
        else:
            out.append(" " + _line(item) + "\n")
        return True
    if kind in _DICTS or kind in _LISTS:
        if depth > _yaml.MAX_DEPTH:
            raise _Undecided
        mark = len(out)
        mapping = kind in _DICTS
        # Under a key: on the next line, a mapping two deeper, a sequence flush with the key.
        # As a sequence item: on the item's line, two deeper.
        out.append("\n" if in_mapping else " ")
        deeper = indent if in_mapping and not mapping else indent + 2
        kept = _collection(item, mapping, deeper, not in_mapping, out, depth + 1, budget)
        if not kept:
            del out[mark:]
        return kept
    if item is None:
        return False
    if kind is bool or kind is float or (kind is int and item.bit_length() <= _yaml.INT_BITS):
        out.append(" " + _number(item) + "\n")
        return True
    raise _Undecided


def _key(key: Any) -> str:
    head = _HEADS.get(key) if type(key) is str else None
    if head is not None:
        return head
    if type(key) is not str or not key or "\n" in key:
        raise _Undecided
    text = _line(key)  # first: _key_short encodes, which needs in-domain text
    if not _yaml.key_short(key):
        raise _Undecided
    head = text + ":"
    _remember(_HEADS, key, head)
    return head


def _line(text: str) -> str:
    """A one-line string's scalar (module rules)."""
    scalar = _SCALARS.get(text)
    if scalar is not None:
        return scalar
    if "\t" in text or _yaml.OUTSIDE.search(text) is not None:
        raise _Undecided
    if _BLOCKED.search(text) is None and _yaml.plain_implicit(text, _STR_TAG):
        scalar = text
    else:
        scalar = "'" + text.replace("'", "''") + "'"
    _remember(_SCALARS, text, scalar)
    return scalar


# Decided scalars and key heads of short texts, by text (a pure function of it); bounded as the
# event path's shared events are: a full table is emptied and refilled.
_SCALARS: dict[str, str] = {}
_HEADS: dict[str, str] = {}


def _remember(table: dict[str, str], text: str, decided: str) -> None:
    if len(text) <= _yaml.SHARED_TEXT:
        if len(table) >= _yaml.SHARED_EVENTS:
            table.clear()
        table[text] = decided


def _literal(text: str, indent: int) -> str:
    """A multi-line string's literal block, from its ``|`` indicator on (module rules)."""
    if (
        "\t" in text
        or _yaml.OUTSIDE.search(text) is not None
        or text[0] in " \n"
        or text.endswith((" ", "\n\n"))
        or " \n" in text
    ):
        raise _Undecided
    if text[-1] == "\n":
        hint, body = "", text[:-1]
    else:
        hint, body = "-", text
    pad = " " * indent
    lines = [pad + line + "\n" if line else "\n" for line in body.split("\n")]
    return " |" + hint + "\n" + "".join(lines)


def _number(value: int | float) -> str:
    tag, text, style = _yaml.REPRESENTERS[type(value)](_yaml.PROBE, value)
    if style is not None or not text or _BLOCKED.search(text) is not None:
        raise _Undecided
    if not _yaml.plain_implicit(text, tag):
        raise _Undecided
    return str(text)
