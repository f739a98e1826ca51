"""ADR-0007 D1: the typed contracts between a call surface, the compiler and a provider adapter.

Guarantees:

- Every class is a ``frozen=True, slots=True`` dataclass with exactly the ADR's fields.
- ``TurnRequest`` keeps no container the caller owns: ``progression``, ``tool_schemas`` and
  ``context_blocks`` become tuples, schema dictionaries and ``provider_kwargs`` are deep-copied,
  and ``provider_kwargs`` is exposed read-only through ``MappingProxyType``.
- Invalid shapes raise ``TypeError`` (wrong kind of value) or ``ValueError`` (right kind, bad
  value) at construction, naming the field, the position and what to pass instead.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import repeat
from types import MappingProxyType
from typing import Any
from uuid import UUID

from lionagi.operations.schema.structure import Structure
from lionagi.protocols.messages import Instruction, MessageRole
from pydantic import BaseModel

from lionagi_turns.core.errors import RESERVED_KEY_ERROR
from lionagi_turns.core.values import JsonObject, naming_record, shown

__all__ = (
    "RESERVED_PROVIDER_KEY",
    "CompiledChatRequest",
    "CompiledMessage",
    "ContextBlock",
    "TurnRequest",
)

RESERVED_PROVIDER_KEY = "messages"


_HTML_VIEW: dict[str, Callable[[Any], str]] = {}


def register_html_view(view: Callable[[Any], str]) -> None:
    """Make ``view`` what ``CompiledChatRequest._repr_html_`` (either profile's) returns (the
    last one wins)."""
    _HTML_VIEW["view"] = view


def html_view(request: object) -> str | None:
    """The registered view of ``request`` (None when no view is registered)."""
    view = _HTML_VIEW.get("view")
    return None if view is None else view(request)


def request_summary(name: str, messages: tuple[CompiledMessage, ...],
                    provider_kwargs: Mapping[str, object], extra: str = "") -> str:
    """A compiled request in one line: its messages by role, their characters of text, the
    provider keyword names, then ``extra``; never the texts themselves."""
    roles: dict[str, int] = {}
    characters = 0
    for message in messages:
        role = str(getattr(message.role, "value", message.role))
        roles[role] = roles.get(role, 0) + 1
        content = message.content
        characters += len(content) if isinstance(content, str) else sum(
            len(str(p.get("text", ""))) for p in content if isinstance(p, dict))
    by_role = ", ".join(f"{n:,} {role}" for role, n in roles.items()) or "none"
    keys = ", ".join(map(str, provider_kwargs)) or "none"
    return (f"<{name}: {len(messages):,} message(s) ({by_role}), {characters:,} characters of "
            f"text, provider kwargs: {keys}{extra}>")


def _set(obj: object, name: str, value: object) -> None:
    object.__setattr__(obj, name, value)


def _check_instruction(value: object) -> None:
    if not isinstance(value, Instruction):
        raise TypeError(
            "TurnRequest.instruction must be a lionagi Instruction, got "
            f"{type(value).__name__}; build one with "
            "branch.msgs.create_instruction(instruction=...)"
        )


def _read_only(mapping: Mapping[str, object], owner: str) -> Mapping[str, object]:
    """A deep-copied, read-only view of ``mapping``; the caller's object is not retained."""
    if (type(mapping) is MappingProxyType or type(mapping) is dict) and not mapping:
        return MappingProxyType({})  # the default: nothing to check or copy
    if not isinstance(mapping, Mapping):
        raise TypeError(
            f"{owner}.provider_kwargs must be a mapping of keyword arguments, "
            f"got {type(mapping).__name__}"
        )
    if RESERVED_PROVIDER_KEY in mapping:  # first: a collision is always the ADR's error
        raise ValueError(RESERVED_KEY_ERROR)
    bad = [shown(k) for k in mapping if not isinstance(k, str)]
    if bad:
        raise TypeError(
            f"{owner}.provider_kwargs keys must be strings; got {', '.join(bad)}"
        )
    copied = {}
    for key, value in mapping.items():
        try:
            copied[key] = copy.deepcopy(value)
        except Exception as exc:
            raise TypeError(
                f"{owner}.provider_kwargs[{key!r}] ({type(value).__name__}) cannot be "
                f"deep-copied ({exc}); pass plain data the request can own"
            ) from exc
    return MappingProxyType(copied)


@dataclass(frozen=True, slots=True)
class ContextBlock:
    """One source-attributed piece of call-local context (D3).

    Both fields are non-empty strings that UTF-8 can encode (no lone surrogates); the registry
    should omit empty results before constructing a block.
    """

    provider_name: str
    content: str

    def __post_init__(self) -> None:
        for name in ("provider_name", "content"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(
                    f"ContextBlock.{name} must be str, got {type(value).__name__}; pass the "
                    "provider's name and the block's text as strings"
                )
        if not self.provider_name:
            raise ValueError(
                "ContextBlock.provider_name must be non-empty: name the provider that "
                "produced the block"
            )
        if not self.content:
            raise ValueError(
                f"ContextBlock from provider {self.provider_name!r} has empty content: "
                "omit empty provider results instead of building a block"
            )
        for name in ("provider_name", "content"):
            try:
                getattr(self, name).encode("utf-8")
            except UnicodeEncodeError as exc:
                # D3's json_dumps cannot encode a lone surrogate; refuse it here, by name.
                raise ValueError(
                    f"ContextBlock.{name} from provider {self.provider_name!r} holds a lone "
                    f"surrogate at index {exc.start}, which the D3 JSON section cannot "
                    "encode; decode provider text with errors='replace'"
                ) from None


@dataclass(frozen=True, slots=True)
class CompiledMessage:
    """One provider-neutral message: a role and its rendered content, nothing else."""

    role: MessageRole
    content: str | list[JsonObject]


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """Everything one model call needs besides the branch's stored history.

    ``progression``: ``None`` selects ``branch.progression`` (including a
    ``metadata["current_progression"]`` view); ``()`` selects no history; otherwise the exact
    ids, in order. ``tool_schemas``, ``response_format`` and ``structure`` shape only the
    current instruction's rendering. ``provider_kwargs`` never holds ``"messages"``.
    """

    instruction: Instruction
    progression: tuple[UUID, ...] | None = None
    tool_schemas: tuple[JsonObject, ...] = ()
    response_format: type[BaseModel] | JsonObject | BaseModel | None = None
    structure: type[Structure] | str | None = None
    context_blocks: tuple[ContextBlock, ...] = ()
    provider_kwargs: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        _check_instruction(self.instruction)
        _set(self, "progression", _progression(self.progression))
        _set(self, "tool_schemas", _tool_schemas(self.tool_schemas))
        _set(self, "response_format", _response_format(self.response_format))
        _check_structure(self.structure)
        _set(self, "context_blocks", _context_blocks(self.context_blocks))
        _set(self, "provider_kwargs", _read_only(self.provider_kwargs, "TurnRequest"))

    def __deepcopy__(self, memo: dict[int, object]) -> TurnRequest:
        """An equal request with its own instruction copy (a read-only mapping cannot be
        deep-copied by ``copy`` itself; construction copies everything else)."""
        return dataclasses.replace(self, instruction=copy.deepcopy(self.instruction, memo))


@dataclass(frozen=True, slots=True)
class CompiledChatRequest:
    """The compiler's output: the record-ready instruction, the messages, the call's kwargs.

    ``instruction`` carries only durable content (no context blocks, no call options) and is
    the only instruction a call surface may record. ``provider_kwargs`` is read-only and never
    holds ``"messages"``.
    """

    instruction: Instruction
    messages: tuple[CompiledMessage, ...]
    provider_kwargs: Mapping[str, object]

    def __post_init__(self) -> None:
        _set(self, "messages", tuple(self.messages))
        if not all(map(isinstance, self.messages, repeat(CompiledMessage))):
            bad = [i for i, m in enumerate(self.messages) if not isinstance(m, CompiledMessage)]
            raise TypeError(
                f"CompiledChatRequest.messages{bad} are not CompiledMessage values; build "
                "each with CompiledMessage(role=..., content=...)"
            )
        _set(self, "provider_kwargs", _read_only(self.provider_kwargs, "CompiledChatRequest"))

    def _repr_html_(self) -> str | None:
        """What a notebook shows: the body of ``lionagi-turns compile --format html``'s page
        for this request (sections, each message's share of the tokens and exact text,
        escaped; self-contained, no script). A compiled request records no fold plan, so the
        fold counts in the message that carries it. The page is built by the view the package
        registers (``register_html_view``; a view lives above the core); with none registered,
        None (a notebook then shows the plain ``repr``)."""
        return html_view(self)

    def __repr__(self) -> str:
        """A one-line summary (``request_summary``); equality and the fields are unchanged."""
        return request_summary("CompiledChatRequest", self.messages, self.provider_kwargs)

    def __rich__(self) -> object:
        """What a Rich console prints: the summary line over a table of the last messages
        (``_rich_view.request_table``; Rich is imported only here)."""
        from lionagi_turns.core._rich_view import request_table

        return request_table(repr(self), self.messages)

    def __deepcopy__(self, memo: dict[int, object]) -> CompiledChatRequest:
        """An equal compiled request sharing no mutable object with this one."""
        return CompiledChatRequest(
            instruction=copy.deepcopy(self.instruction, memo),
            messages=tuple(
                CompiledMessage(m.role, copy.deepcopy(m.content, memo)) for m in self.messages
            ),
            provider_kwargs=self.provider_kwargs,
        )


def _ordered(
    value: object, name: str, what: str, single: tuple[type, ...] = ()
) -> tuple[Any, ...]:
    """``value`` as a tuple, refusing what is not an ordered sequence of items: a str, bytes,
    mapping, set or non-iterable, or one item of the kind the sequence holds (``single``)."""
    if isinstance(value, set | frozenset):
        raise TypeError(
            f"TurnRequest.{name} must be an ordered sequence ({what}), got a "
            f"{type(value).__name__}, whose order changes between processes; pass a tuple"
        )
    if isinstance(value, (str, bytes, Mapping, *single)) or not hasattr(value, "__iter__"):
        raise TypeError(
            f"TurnRequest.{name} must be {what}, got a single {type(value).__name__}; "
            "pass a tuple or list"
        )
    return tuple(value)


def _progression(value: object) -> tuple[UUID, ...] | None:
    if value is None:
        return None
    ids = _ordered(value, "progression", "None or a sequence of UUIDs")
    bad = [f"[{i}]={shown(v)}" for i, v in enumerate(ids) if not isinstance(v, UUID)]
    if bad:
        raise TypeError(
            "TurnRequest.progression holds non-UUID items at "
            f"{', '.join(bad)}; convert ids with uuid.UUID(...) or use "
            "lionagi_turns.integration.progression_ids()"
        )
    return ids


def _tool_schemas(value: object) -> tuple[JsonObject, ...]:
    if value is None or (type(value) is tuple and not value):  # the default
        return ()
    items = _ordered(value, "tool_schemas", "a sequence of schema dicts")
    bad = [f"[{i}]" for i, s in enumerate(items) if not isinstance(s, Mapping)]
    if bad:
        raise TypeError(
            f"TurnRequest.tool_schemas{', '.join(bad)} must be dicts; pass each tool's schema "
            "mapping (e.g. a lionagi Tool's tool_schema)"
        )
    with naming_record("TurnRequest.tool_schemas"):
        return tuple(copy.deepcopy(dict(s)) for s in items)


def _response_format(value: object) -> type[BaseModel] | JsonObject | BaseModel | None:
    if value is None:
        return None
    if isinstance(value, type) and issubclass(value, BaseModel):
        return value
    if isinstance(value, BaseModel | Mapping):
        with naming_record("TurnRequest.response_format"):
            return copy.deepcopy(dict(value) if isinstance(value, Mapping) else value)
    raise TypeError(
        "TurnRequest.response_format must be a pydantic model class, a model instance, "
        f"a dict or None, got {type(value).__name__}"
    )


def _check_structure(value: object) -> None:
    if value is None or isinstance(value, str):
        return
    if isinstance(value, type) and issubclass(value, Structure):
        return
    raise TypeError(
        "TurnRequest.structure must be a Structure subclass, a string or None, got "
        f"{shown(value)}"
    )


def _context_blocks(value: object) -> tuple[ContextBlock, ...]:
    if value is None or (type(value) is tuple and not value):  # the default
        return ()
    blocks = _ordered(
        value, "context_blocks", "a sequence of ContextBlock values", (ContextBlock,)
    )
    bad = [f"[{i}] ({type(b).__name__})" for i, b in enumerate(blocks)
           if not isinstance(b, ContextBlock)]
    if bad:
        raise TypeError(
            f"TurnRequest.context_blocks{', '.join(bad)} are not ContextBlock values; "
            "build them with ContextBlock(provider_name=..., content=...)"
        )
    return blocks
