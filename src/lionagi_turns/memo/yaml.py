"""A faster, byte-identical stand-in for lionagi's ``minimal_yaml`` and instruction text.

Contract:

- ``minimal_yaml(value)`` returns exactly what ``lionagi.libs.schema.minimal_yaml.minimal_yaml``
  returns (or raises what it raises) for every value.
- ``instruction_text(content)`` returns exactly ``content._format_text_content()`` for every
  lionagi ``InstructionContent``.

How: one walk over the value does lionagi's empty-pruning (``_prune``'s rule: a value that is
``_is_empty`` before or after pruning is dropped), checks the *proven domain* and produces the
YAML event stream PyYAML's representer + serializer would produce for the pruned value; the
events go straight to PyYAML's C emitter (libyaml). Scalars are represented by the very
representer functions registered on lionagi's ``MinimalDumper`` (through a probe that records
what they ask for; ``str`` is done inline, proven equal to lionagi's ``_represent_str``) and
their implicit flags come from ``MinimalDumper``'s implicit-resolver table. Anything outside
the domain goes to lionagi's ``minimal_yaml`` unchanged (so its errors are lionagi's too).
Before the events, ``direct.direct_yaml`` writes the text itself when every scalar's style is
one it decides (see ``direct``); otherwise the events are built as described.

The proven domain — values for which libyaml and PyYAML's pure-Python emitter were shown to
agree (tests/equivalence: the characterization scenarios, fixed edge cases and a differential
fuzz of 8,000 examples in each CI run):

- the root is a ``dict`` or ``list`` (root scalars get an emitter-specific ``...`` marker);
- containers are exactly ``dict`` / ``list`` or lionagi's tracked ``_TrackedDict`` /
  ``_TrackedList`` (``_prune`` turns those into plain ones); leaves are exactly ``str``,
  ``int`` (at most 1,000 bits), ``float``, ``bool`` or ``None`` — every value is checked,
  also those pruning drops; dict keys are non-empty ``str``; nesting is at most ``MAX_DEPTH``
  deep and holds at most ``MAX_ITEMS`` items in all, shared containers counted each time they
  are reached (so every in-domain value also passes ``core.values.check_value``, whose limits are
  wider, and no value expands the walk without bound);
- every string holds only TAB, LF, printable ASCII and BMP characters from U+00A0 up, except
  U+2028, U+2029, U+FEFF, surrogates and U+FFFE/U+FFFF (libyaml escapes or breaks on those
  differently); no string is ``"\\n"`` or ends with two LFs (libyaml then appends ``...``);
- every key is shorter than 123 characters and 128 UTF-8 bytes (the emitters measure key
  length differently: PyYAML counts characters plus the 5-character "!!str" tag).

Changed YAML tables fall back too: when, after import, lionagi's ``MinimalDumper`` (or a
class it inherits from) has a different representer for a domain type, a different
implicit-resolver or path-resolver table, a different alias policy, or lionagi's
``minimal_yaml`` / ``_prune`` / ``_is_empty`` were replaced, ``tables_unchanged()`` is False.
It is registered as a guard of the switch, so the whole fast path — this emitter and the
render cache, whose entries would be stale — is off while it is False.

Without libyaml, or with the fast path switched off (``LIONAGI_TURNS_NO_FAST_PATH=1`` or
``switch.no_fast_path()``), every call goes to lionagi's renderer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from lionagi.libs.schema import minimal_yaml as _lionagi_yaml
from lionagi.protocols.messages.instruction import InstructionContent
from yaml.events import (
    DocumentEndEvent,
    DocumentStartEvent,
    Event,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

from lionagi_turns.core.memo import section_doc
from lionagi_turns.memo import yaml_tables as _tables
from lionagi_turns.memo.direct import direct_yaml
from lionagi_turns.memo.switch import add_guard, fast_path_enabled
from lionagi_turns.memo.yaml_tables import (
    MAX_DEPTH,
    MAX_ITEMS,
)

# The proven tables (``yaml_tables``) under this module's names, read as globals in the walk.
_DICTS = _tables.DICTS
_DOMAIN_TYPES = _tables.DOMAIN_TYPES
_Dumper = _tables.DUMPER
_IGNORE_ALIASES = _tables.IGNORE_ALIASES
_INT_BITS = _tables.INT_BITS
_LISTS = _tables.LISTS
_MAP_TAG = _tables.MAP_TAG
_OUTSIDE = _tables.OUTSIDE
_PROBE = _tables.PROBE
_REPRESENTERS = _tables.REPRESENTERS
_RESOLVER_COUNT = _tables.RESOLVER_COUNT
_RESOLVERS = _tables.RESOLVERS
_SEQ_TAG = _tables.SEQ_TAG
_SHARED_EVENTS = _tables.SHARED_EVENTS
_SHARED_TEXT = _tables.SHARED_TEXT
_STR_TAG = _tables.STR_TAG
_key_short = _tables.key_short
_plain_implicit = _tables.plain_implicit
_proven_at_import = _tables.proven_at_import

__all__ = (
    "C_EMITTER_AVAILABLE",
    "MAX_DEPTH",
    "MAX_ITEMS",
    "fast_yaml",
    "in_domain",
    "instruction_text",
    "minimal_yaml",
    "section_doc",
    "tables_unchanged",
)

C_EMITTER_AVAILABLE: bool = bool(getattr(yaml, "__with_libyaml__", False))
_LIONAGI_FUNCS = (_lionagi_yaml.minimal_yaml, _lionagi_yaml._prune, _lionagi_yaml._is_empty)


def tables_unchanged() -> bool:
    """Whether lionagi's YAML tables and functions are still the ones the fast path was
    proven against (see the module docstring)."""
    reps = _Dumper.yaml_representers
    for kind, representer in _REPRESENTERS.items():
        if reps.get(kind) is not representer:
            return False
    resolvers = _Dumper.yaml_implicit_resolvers
    return (
        resolvers is _RESOLVERS
        and sum(map(len, resolvers.values())) == _RESOLVER_COUNT
        and not _Dumper.yaml_path_resolvers
        and _Dumper.ignore_aliases is _IGNORE_ALIASES
        and (_lionagi_yaml.minimal_yaml, _lionagi_yaml._prune, _lionagi_yaml._is_empty)
        == _LIONAGI_FUNCS
    )


class _Outside(Exception):
    """The value left the proven domain: lionagi renders it."""


def _scalar_event(value: int | float) -> ScalarEvent:
    """The event the registered representer + serializer produce for a non-str leaf."""
    tag, text, style = _REPRESENTERS[type(value)](_PROBE, value)
    return ScalarEvent(
        None, tag, (_plain_implicit(text, tag), tag == _STR_TAG), text, style=style
    )


_MAP_START = MappingStartEvent(None, _MAP_TAG, True, flow_style=False)
_MAP_END = MappingEndEvent()
_SEQ_START = SequenceStartEvent(None, _SEQ_TAG, True, flow_style=False)
_SEQ_END = SequenceEndEvent()
_DOC_START = DocumentStartEvent(explicit=False)
_DOC_END = DocumentEndEvent(explicit=False)
_CONSTANTS: dict[bool, ScalarEvent] = {}


def _str_event(text: str) -> ScalarEvent:
    """The event of an in-domain str (raises ``_Outside`` otherwise); shared per text."""
    event = _STR_EVENTS.get(text)
    if event is not None:
        return event
    if _OUTSIDE.search(text) is not None or text == "\n" or text.endswith("\n\n"):
        raise _Outside
    event = ScalarEvent(
        None,
        _STR_TAG,
        (_plain_implicit(text, _STR_TAG), True),
        text,
        style="|" if "\n" in text else None,
    )
    if len(text) <= _SHARED_TEXT:
        if len(_STR_EVENTS) >= _SHARED_EVENTS:
            _STR_EVENTS.clear()
        _STR_EVENTS[text] = event
    return event


def _key_event(key: Any) -> ScalarEvent:
    """The event of an in-domain mapping key (raises ``_Outside`` otherwise)."""
    event = _KEY_EVENTS.get(key) if type(key) is str else None
    if event is not None:
        return event
    if type(key) is not str or not key:
        raise _Outside
    event = _str_event(key)  # first: _key_short encodes, which needs in-domain text
    if not _key_short(key):
        raise _Outside
    if len(_KEY_EVENTS) >= _SHARED_EVENTS:
        _KEY_EVENTS.clear()
    _KEY_EVENTS[key] = event
    return event


_STR_EVENTS: dict[str, ScalarEvent] = {}
_KEY_EVENTS: dict[str, ScalarEvent] = {}


def _walk(value: Any, out: list[Event], depth: int, budget: list[int]) -> bool:
    """Append the events of ``_prune(value)`` to ``out``; False (nothing appended) when the
    pruned value is empty. ``value`` is a non-root value. Raises ``_Outside``."""
    kind = type(value)
    if kind is str:
        if not value.strip():
            return False
        out.append(_str_event(value))
        return True
    if kind in _DICTS or kind in _LISTS:
        if depth > MAX_DEPTH:
            raise _Outside
        mark = len(out)
        out.append(_MAP_START if kind in _DICTS else _SEQ_START)
        if not _children(value, kind in _DICTS, out, depth + 1, budget):
            del out[mark:]
            return False
        return True
    if value is None:
        return False
    if kind is bool:
        out.append(_CONSTANTS[value])
        return True
    if kind is int:
        if value.bit_length() > _INT_BITS:
            raise _Outside
        out.append(_scalar_event(value))
        return True
    if kind is float:
        out.append(_scalar_event(value))
        return True
    raise _Outside


def _children(
    value: Any, is_dict: bool, out: list[Event], depth: int, budget: list[int]
) -> bool:
    """Events of a container's kept children, then its end event; whether any was kept."""
    budget[0] -= len(value) + 1
    if budget[0] < 0:
        raise _Outside
    kept = False
    if is_dict:
        for key, item in value.items():
            mark = len(out)
            out.append(_key_event(key))
            if _walk(item, out, depth, budget):
                kept = True
            else:
                del out[mark:]
        out.append(_MAP_END)
    else:
        for item in value:
            if _walk(item, out, depth, budget):
                kept = True
        out.append(_SEQ_END)
    return kept


def _events(value: object) -> list[Event] | None:
    """The document's events for ``minimal_yaml(value)``, or None outside the domain."""
    kind = type(value)
    if kind not in _DICTS and kind not in _LISTS:
        return None
    out: list[Event] = [_DOC_START, _MAP_START if kind in _DICTS else _SEQ_START]
    try:
        _children(value, kind in _DICTS, out, 1, [MAX_ITEMS])
    except _Outside:
        return None
    out.append(_DOC_END)
    return out


class _Sink(list[str]):
    """The emitter's output stream: collects the chunks libyaml flushes."""

    write = list.append


def _emit(events: list[Event]) -> str:
    sink = _Sink()
    emitter = _CEmitter(sink, indent=2, width=2**31 - 1, allow_unicode=True)
    emitter.open()
    emit: Callable[[Event], None] = emitter.emit
    for event in events:
        emit(event)
    emitter.close()
    return "".join(sink)


_CEmitter: Any = None
_READY = False
if C_EMITTER_AVAILABLE:
    from yaml import _yaml

    _CEmitter = _yaml.CEmitter

    _READY = _proven_at_import() and all(
        _REPRESENTERS[t] is not None for t in _DOMAIN_TYPES
    )
    if _READY:
        for _constant in (True, False):
            _CONSTANTS[_constant] = _scalar_event(_constant)
        add_guard(tables_unchanged)


def in_domain(data: object) -> bool:
    """Whether ``data`` is inside the proven domain (pruning included); the root must be a
    dict or list."""
    return _READY and _events(data) is not None


def fast_yaml(value: object) -> str | None:
    """``lionagi...minimal_yaml(value)`` when the fast path is on and ``value`` is inside the
    proven domain, else None."""
    if _READY and type(value) is not str and fast_path_enabled():
        return _fast_text(value)
    return None


def _fast_text(value: object) -> str | None:
    text = direct_yaml(value)  # the text of the same events, when every style is plain to see
    if text is not None:
        return text
    events = _events(value)
    if events is not None:
        return _emit(events)
    return None


def minimal_yaml(value: object) -> str:
    """Exactly ``lionagi...minimal_yaml(value)`` (default options)."""
    text = fast_yaml(value)
    return _lionagi_yaml.minimal_yaml(value) if text is None else text


def chosen_yaml(value: object) -> str:
    """``minimal_yaml`` for a caller that has read the switch (``fast.FAST``): exactly
    ``lionagi...minimal_yaml(value)``, the switch not read again."""
    text = _fast_text(value) if _READY and type(value) is not str else None
    return _lionagi_yaml.minimal_yaml(value) if text is None else text


def instruction_text(content: InstructionContent) -> str:
    """Exactly ``content._format_text_content()``.

    Contents with a structure instance (a response format) are handed to lionagi as they are;
    only the section document of the others is built here, in lionagi's section order and with
    its rule for leaving out empty sections.
    """
    if not fast_path_enabled():
        return content._format_text_content()
    return chosen_instruction_text(content)


def chosen_instruction_text(content: InstructionContent) -> str:
    """``instruction_text`` for a caller that has read the switch (``fast.FAST``)."""
    if content._structure_instance is not None:
        return content._format_text_content()
    if content.plain_content:
        return content.plain_content
    doc = section_doc(
        content.guidance, content.instruction, content.prompt_context, content.tool_schemas
    )
    return chosen_yaml(doc).strip()

