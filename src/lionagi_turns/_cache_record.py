"""ADR-0127's durable record of a sent instruction, and the digests it holds.

``SentRecord`` is what the prompt-cache profile (``_cache_layout``) stores on each instruction it
compiles (``metadata[RECORD_KEY]``, plain JSON); ``read_record`` reads it back, None for anything
that is not a well-formed record of this version. ``digest(value)`` is the SHA-256 of ``value``'s
canonical JSON (sorted keys, no ASCII escaping, no spaces); ``message_digest`` that of one
message's role and content; ``prefix_digests`` the chain over a request's messages, read at given
lengths (``SentRecord.prefix``). Pure functions of their arguments.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._contracts import ContextBlock

__all__ = (
    "RECORD_KEY",
    "SegmentChanges",
    "SentRecord",
    "digest",
    "message_digest",
    "prefix_digests",
    "read_record",
)

RECORD_KEY = "lionagi_turns.prompt_cache"
_VERSION = 1


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
    which holds no tool functions, still shows its stable segment). Plain JSON, so it survives
    ``Branch.to_dict()`` / ``from_dict()`` and plain lionagi, which never reads it.
    """

    text: str | list[dict[str, Any]]
    basis: str
    stable: str
    conversation: str
    blocks: tuple[ContextBlock, ...] | None
    messages: int
    prefix: str
    changes: SegmentChanges
    stable_blocks: tuple[str, ...] | None = None

    def to_metadata(self) -> dict[str, Any]:
        out: dict[str, Any] = {
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
        return out

    @classmethod
    def from_metadata(cls, data: Any) -> SentRecord | None:
        """The record, or None for anything that is not a well-formed record of this version."""
        if not isinstance(data, Mapping) or data.get("v") != _VERSION:
            return None
        try:
            blocks = data.get("blocks")
            stable_blocks = data.get("stable_blocks")
            changes = data["changes"]
            return cls(
                text=data["text"],
                basis=str(data["basis"]),
                stable=str(data["stable"]),
                conversation=str(data["conversation"]),
                blocks=(
                    None
                    if blocks is None
                    else tuple(ContextBlock(str(n), str(c)) for n, c in blocks)
                ),
                messages=int(data["messages"]),
                prefix=str(data["prefix"]),
                changes=SegmentChanges(
                    bool(changes["stable"]), bool(changes["conversation"]), bool(changes["rewrite"])
                ),
                stable_blocks=(
                    None if stable_blocks is None else tuple(str(b) for b in stable_blocks)
                ),
            )
        except (KeyError, TypeError, ValueError):
            return None


def read_record(message: Any) -> SentRecord | None:
    """The ``SentRecord`` an instruction carries, or None."""
    metadata = getattr(message, "metadata", None)
    return SentRecord.from_metadata(metadata.get(RECORD_KEY)) if metadata else None


# ``json.dumps`` with these options builds this very encoder on every call; one instance, same
# text (``encode`` keeps no state between calls).
_ENCODE = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode


def digest(value: Any) -> str:
    """SHA-256 (hex) of ``value``'s canonical JSON."""
    text = _ENCODE(value)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def message_digest(message: Any) -> bytes:
    """What the prefix chain takes in for one compiled message: the digest of its role and
    content, as ASCII bytes."""
    return digest([str(message.role.value), message.content]).encode("ascii")


def prefix_digests(messages: Sequence[Any], marks: set[int]) -> dict[int, str]:
    """``out[n]`` for each ``n`` in ``marks`` (each ``<= len(messages)``): digest of the first
    ``n`` messages (role and content); the chain is read only at the marks."""
    chain = hashlib.sha256()
    out = {0: chain.hexdigest()} if 0 in marks else {}
    for n, m in enumerate(messages, 1):
        chain.update(message_digest(m))
        if n in marks:
            out[n] = chain.hexdigest()
    return out
