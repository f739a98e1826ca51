"""ADR-0127's durable record of a sent instruction, and the digests it holds.

``SentRecord`` is what the prompt-cache profile (``prompt_cache._compile``) stores on each
instruction it compiles (``metadata[RECORD_KEY]``, plain JSON); ``read_record`` reads it back,
None for anything that is not a well-formed record of this version: every field of its JSON type
(a ``dict``, not any mapping; ``messages`` a positive ``int``; digests 64 lowercase hex digits;
at most two ``stable_blocks``), and ``record_problem`` names the first field that is not. Two
fields are read as absent instead, the rest of the record kept (``SentRecord.flaws`` names
them): a ``text`` that is neither a string nor a list of parts led by a text part (None: the
record holds no text to send, the instruction's durable view is sent) and ``stable_blocks`` that
are not 1 or 2 strings. ``digest(value)`` is the SHA-256 of ``value``'s canonical JSON (sorted
keys, no ASCII escaping, no spaces); ``message_digest`` that of one message's role and content;
``prefix_digests`` the chain over a request's messages, read at given lengths
(``SentRecord.prefix``). Pure functions of their arguments.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from uuid import UUID

from lionagi_turns.core.contracts import CompiledMessage, ContextBlock

if TYPE_CHECKING:
    from lionagi.protocols.messages import Instruction

    from lionagi_turns.core.render import Content

__all__ = (
    "RECORD_KEY",
    "RecordError",
    "SegmentChanges",
    "SentRecord",
    "digest",
    "message_digest",
    "prefix_digests",
    "read_record",
    "record_data",
    "record_problem",
    "rejections",
)

RECORD_KEY = "lionagi_turns.prompt_cache"
_VERSION = 1
_STABLE_BLOCKS = 2  # the system text and the tool section
_NO_TEXT = (
    "'text' is neither a string nor a list of parts led by a text part; its durable view is "
    "sent instead"
)
_BAD_STABLE = (
    f"'stable_blocks' is not a list of 1 to {_STABLE_BLOCKS} strings (the system text and the "
    "tool section); it is ignored"
)


@dataclass(frozen=True, slots=True)
class SegmentChanges:
    """What changed against the previous recorded request of the conversation (D6)."""

    stable: bool = False
    conversation: bool = False
    rewrite: bool = False


@dataclass(frozen=True, slots=True)
class SentRecord:
    """The durable record of one instruction sent under this profile (``metadata[RECORD_KEY]``).

    ``text``: the instruction's content as sent (string or multimodal parts); ``basis``: digest
    of its durable rendering, which the text extends; ``stable``/``conversation``: digests of the
    request's segments; ``blocks``: the conversation's blocks, on the instruction that started
    it only; ``messages``/``prefix``: the request's message count and their digest;
    ``changes``: what this request changed; ``stable_blocks``: the stable segment's text, on
    the conversation's first instruction and on each one that changed it (so a saved branch,
    which holds no tool functions, still shows its tool section); ``fold``: the context blocks
    first returned on this call, which its text carries (None when none). Plain JSON, so it
    survives ``Branch.to_dict()`` / ``from_dict()`` and plain lionagi, which never reads it.
    What a historical instruction sends from it is checked by ``prompt_cache._sent``.
    """

    text: Content | None  # None: the stored value was not a text
    basis: str
    stable: str
    conversation: str
    blocks: tuple[ContextBlock, ...] | None
    messages: int
    prefix: str
    changes: SegmentChanges
    stable_blocks: tuple[str, ...] | None = None
    fold: tuple[ContextBlock, ...] | None = None
    flaws: tuple[str, ...] = ()  # fields read as absent (never stored: ``to_metadata``)

    def to_metadata(self) -> dict[str, object]:
        out: dict[str, object] = {
            "v": _VERSION,
            "text": self.text,
            "basis": self.basis,
            "stable": self.stable,
            "conversation": self.conversation,
            "messages": self.messages,
            "prefix": self.prefix,
            "changes": {
                "stable": self.changes.stable,
                "conversation": self.changes.conversation,
                "rewrite": self.changes.rewrite,
            },
        }
        if self.blocks is not None:
            out["blocks"] = [[b.provider_name, b.content] for b in self.blocks]
        if self.stable_blocks is not None:
            out["stable_blocks"] = list(self.stable_blocks)
        if self.fold is not None:
            out["fold"] = [[b.provider_name, b.content] for b in self.fold]
        return out

    @classmethod
    def from_metadata(cls, data: object) -> SentRecord | None:
        """The record, or None for anything that is not a well-formed record of this version
        (``record_problem`` names what is wrong)."""
        try:
            return _parse(data)
        except RecordError:
            return None


class RecordError(ValueError):
    """A ``metadata[RECORD_KEY]`` value that is not a well-formed record of this version."""


_HEX = frozenset("0123456789abcdef")


def _digest_field(data: Mapping[str, object], key: str) -> str:
    value = data.get(key)
    if type(value) is not str or len(value) != 64 or not _HEX.issuperset(value):
        raise RecordError(f"{key!r} is not a SHA-256 hex digest")
    return value


def _text_field(value: object) -> Content | None:
    """``value`` when it is a text (a string, or a list of parts led by a text part), else
    None: the record is still read, but it holds no text to send."""
    if type(value) is str:
        return value
    if type(value) is list and value and all(type(p) is dict for p in value):
        first = value[0]
        if first.get("type") == "text" and type(first.get("text")) is str:
            return value
    return None


def _blocks_field(value: object, key: str) -> tuple[ContextBlock, ...] | None:
    if value is None:
        return None
    if type(value) is not list:
        raise RecordError(f"{key!r} is not a list of [provider, content] pairs")
    out = []
    for pair in value:
        if type(pair) is not list or len(pair) != 2:
            raise RecordError(f"{key!r} is not a list of [provider, content] pairs")
        try:
            out.append(ContextBlock(pair[0], pair[1]))
        except (TypeError, ValueError):
            raise RecordError(f"{key!r} holds a pair that is not a context block") from None
    return tuple(out)


def _parse(data: object) -> SentRecord:
    """``data`` as a ``SentRecord``; ``RecordError`` naming the first field that is wrong. Only
    plain JSON data is read: a ``dict`` (exactly), whose fields have their JSON types."""
    if type(data) is not dict:
        raise RecordError(f"the record is a {type(data).__name__}, not a JSON object")
    if data.get("v") != _VERSION or type(data.get("v")) is not int:
        raise RecordError(f"'v' is {data.get('v')!r}, not {_VERSION}")
    messages = data.get("messages")
    if type(messages) is not int or messages < 1:
        raise RecordError("'messages' is not a positive integer")
    changes = data.get("changes")
    if type(changes) is not dict or any(
        type(changes.get(k)) is not bool for k in ("stable", "conversation", "rewrite")
    ):
        raise RecordError("'changes' is not an object of three booleans")
    flaws = []
    text = _text_field(data.get("text"))
    if text is None:
        flaws.append(_NO_TEXT)
    stable_blocks = data.get("stable_blocks")
    if stable_blocks is not None and (
        type(stable_blocks) is not list
        or not 1 <= len(stable_blocks) <= _STABLE_BLOCKS
        or any(type(b) is not str for b in stable_blocks)
    ):
        flaws.append(_BAD_STABLE)
        stable_blocks = None
    return SentRecord(
        text=text,
        basis=_digest_field(data, "basis"),
        stable=_digest_field(data, "stable"),
        conversation=_digest_field(data, "conversation"),
        blocks=_blocks_field(data.get("blocks"), "blocks"),
        messages=messages,
        prefix=_digest_field(data, "prefix"),
        changes=SegmentChanges(changes["stable"], changes["conversation"], changes["rewrite"]),
        stable_blocks=None if stable_blocks is None else tuple(stable_blocks),
        fold=_blocks_field(data.get("fold"), "fold"),
        flaws=tuple(flaws),
    )


def record_data(message: object) -> object:
    """What ``message`` holds under ``RECORD_KEY``: None when its ``metadata`` is not a
    ``dict`` or lacks the key."""
    metadata = getattr(message, "metadata", None)
    return metadata.get(RECORD_KEY) if type(metadata) is dict else None


def rejections(
    positions: Sequence[int], view: Sequence[UUID], instructions: Sequence[Instruction],
    datas: Sequence[object], records: Sequence[SentRecord | None],
) -> tuple[tuple[int, UUID, str], ...]:
    """The instructions whose record data is present but not a record, or whose ``metadata``
    is not a ``dict`` (so no record is read from it), with the reason."""
    out = []
    for position, message, data, record in zip(
        positions, instructions, datas, records, strict=True
    ):
        if data is not None and (record is None or record.flaws):
            out.append((position, view[position], record_problem(data) or "not a record"))
        elif type(message.metadata) is not dict:
            kind = type(message.metadata).__name__
            out.append((position, view[position], f"its metadata is a {kind}, not a dict"))
    return tuple(out)


def record_problem(data: object) -> str | None:
    """Why ``data`` (a ``metadata[RECORD_KEY]`` value, not None) is not a record, or which of
    its fields are read as absent (``SentRecord.flaws``); None when it is a flawless record."""
    try:
        record = _parse(data)
    except RecordError as exc:
        return f"{exc}; the record is ignored"
    return "; ".join(record.flaws) or None


def read_record(message: object) -> SentRecord | None:
    """The ``SentRecord`` an instruction carries, or None (none, or not well-formed)."""
    data = record_data(message)
    return None if data is None else SentRecord.from_metadata(data)


# ``json.dumps`` with these options builds this very encoder on every call; one instance, same
# text (``encode`` keeps no state between calls).
_ENCODE = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode


def digest(value: object) -> str:
    """SHA-256 (hex) of ``value``'s canonical JSON."""
    text = _ENCODE(value)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def message_digest(message: CompiledMessage) -> bytes:
    """What the prefix chain takes in for one compiled message: the digest of its role and
    content, as ASCII bytes."""
    return digest([str(message.role.value), message.content]).encode("ascii")


def prefix_digests(messages: Sequence[CompiledMessage], marks: set[int]) -> dict[int, str]:
    """``out[n]`` for each ``n`` in ``marks`` (each ``<= len(messages)``): digest of the first
    ``n`` messages (role and content); the chain is read only at the marks."""
    chain = hashlib.sha256()
    out = {0: chain.hexdigest()} if 0 in marks else {}
    for n, m in enumerate(messages, 1):
        chain.update(message_digest(m))
        if n in marks:
            out[n] = chain.hexdigest()
    return out
