"""A prompt-cache simulator following Anthropic's prefix rules (ADR-0127 Context), for tests and
benchmarks. Tooling only: the runtime never imports it.

Model of one Messages request body (``tools``, ``system``, ``messages``):

- The prompt is a sequence of blocks in the order the API reads it: each tool, each system block,
  then each message's content blocks (a string content is one text block). A block's identity is
  its content without ``cache_control`` and the role of the message holding it, chained with
  every block before it, so two requests share a cached prefix exactly when their leading blocks
  are equal.
- A block carrying ``cache_control`` is a mark: ``{"type": "ephemeral"}`` lives five minutes,
  ``{"type": "ephemeral", "ttl": "1h"}`` one hour. A request with more than four marks, or a
  one-hour mark after a five-minute mark, is refused with ``CacheRuleError`` (the API answers
  400).
- Reading: for each mark, the prefix ending at the mark and at each of the ``lookback - 1``
  blocks before it (20 positions in all) is looked up; the longest prefix with a live entry is
  read. A hit renews that entry's lifetime.
- Writing: each mark past the read point writes the prefix ending at it, charged for the units
  between the previous mark (or the read point) and it, at the mark's own lifetime; a mark at or
  before the read point renews its entry. A mark whose prefix is shorter than ``min_cacheable``
  units neither reads nor writes (the API processes it uncached, without an error).
- Units: ``measure(block)``, by default the characters of a text block's text (other blocks:
  characters of their canonical JSON). Prices are multiples of the uncached input price.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypedDict

__all__ = (
    "LOOKBACK",
    "TTL_SECONDS",
    "CacheRuleError",
    "CacheSimulator",
    "MessagesBody",
    "Prices",
    "PromptBlock",
    "Usage",
    "normalized_messages",
    "normalized_system",
    "prefix_pairs",
    "prompt_blocks",
)

LOOKBACK = 20
MAX_MARKS = 4
TTL_SECONDS: Mapping[str, float] = {"5m": 300.0, "1h": 3600.0}


Block = Mapping[str, object]  # one tool, system block or message content block (JSON)


class MessagesBody(TypedDict, total=False):
    """The fields of a Messages request body the simulator reads (any others are ignored)."""

    tools: Sequence[Block]
    system: str | Sequence[Block]
    messages: Sequence[Block]


class CacheRuleError(ValueError):
    """The request breaks a mark rule the provider enforces (the API would answer 400)."""


@dataclass(frozen=True, slots=True)
class Prices:
    """Multiples of the uncached input price (ADR-0127 Context; most models)."""

    uncached: float = 1.0
    read: float = 0.1
    write_5m: float = 1.25
    write_1h: float = 2.0


@dataclass(frozen=True, slots=True)
class PromptBlock:
    """One cacheable position: its chained identity, its size in units, its mark's lifetime."""

    key: str
    units: int
    mark: str | None


@dataclass(frozen=True, slots=True)
class Usage:
    """One request's input split as the provider reports it, in units."""

    uncached: int
    cache_read: int
    write_5m: int
    write_1h: int
    output: int = 0

    @property
    def total_input(self) -> int:
        return self.uncached + self.cache_read + self.write_5m + self.write_1h

    def cost(self, prices: Prices = Prices()) -> float:
        """Input cost in uncached-input units."""
        return (
            self.uncached * prices.uncached
            + self.cache_read * prices.read
            + self.write_5m * prices.write_5m
            + self.write_1h * prices.write_1h
        )

    def anthropic(self) -> dict[str, int | dict[str, int]]:
        """The ``usage`` object of a Messages response carrying these counts."""
        return {
            "input_tokens": self.uncached,
            "output_tokens": self.output,
            "cache_read_input_tokens": self.cache_read,
            "cache_creation_input_tokens": self.write_5m + self.write_1h,
            "cache_creation": {
                "ephemeral_5m_input_tokens": self.write_5m,
                "ephemeral_1h_input_tokens": self.write_1h,
            },
        }


def _canonical(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _bare(block: Block) -> dict[str, object]:
    return {k: v for k, v in block.items() if k != "cache_control"}


def default_measure(block: Block) -> int:
    """Characters of a text block's text; of the canonical JSON for any other block."""
    if block.get("type") == "text" and isinstance(text := block.get("text"), str):
        return len(text)
    return len(_canonical(_bare(block)))


def _as_blocks(content: object) -> list[Block]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content else []
    if isinstance(content, list):
        return [
            b if isinstance(b, Mapping) else {"type": "text", "text": str(b)} for b in content
        ]
    raise CacheRuleError(f"message content must be a string or a list, got {type(content)}")


def _mark_of(block: Block) -> str | None:
    control = block.get("cache_control")
    if control is None:
        return None
    if not isinstance(control, Mapping) or control.get("type") != "ephemeral":
        raise CacheRuleError(f"cache_control must be {{'type': 'ephemeral'}}, got {control!r}")
    ttl = control.get("ttl", "5m")
    if ttl not in TTL_SECONDS:
        raise CacheRuleError(f"cache_control ttl must be '5m' or '1h', got {ttl!r}")
    return str(ttl)


def prompt_blocks(
    body: MessagesBody, measure: Callable[[Block], int] = default_measure
) -> list[PromptBlock]:
    """The body's cacheable positions in prompt order (module rules)."""
    raw: list[tuple[str, Block]] = []
    raw.extend(("tool", t) for t in body.get("tools") or ())
    system = body.get("system")
    if system:
        raw.extend(("system", b) for b in _as_blocks(system))
    for message in body.get("messages") or ():
        raw.extend((str(message.get("role")), b) for b in _as_blocks(message.get("content")))
    chain = hashlib.sha256()
    out = []
    for place, block in raw:
        chain.update(_canonical([place, _bare(block)]).encode("utf-8"))
        out.append(PromptBlock(chain.copy().hexdigest(), measure(block), _mark_of(block)))
    return out


@dataclass
class CacheSimulator:
    """Holds live cache entries across requests; ``request()`` prices one body at time ``now``
    (seconds, any origin, non-decreasing)."""

    lookback: int = LOOKBACK
    min_cacheable: int = 0
    measure: Callable[[Block], int] = default_measure
    entries: dict[str, tuple[float, str]] = field(default_factory=dict)

    def request(self, body: MessagesBody, now: float, output: int = 0) -> Usage:
        blocks = prompt_blocks(body, self.measure)
        marks = [i for i, b in enumerate(blocks) if b.mark is not None]
        _check_marks([blocks[i].mark for i in marks])
        ends = _cumulative(blocks)
        live = {k: v for k, v in self.entries.items() if v[0] > now}
        self.entries = live
        marks = [m for m in marks if ends[m] >= self.min_cacheable]

        read_end = 0  # number of leading blocks read from cache
        for m in marks:
            for j in range(m, max(-1, m - self.lookback), -1):
                if blocks[j].key in live and ends[j] >= self.min_cacheable:
                    read_end = max(read_end, j + 1)
                    break
        if read_end:
            hit = blocks[read_end - 1].key
            self.entries[hit] = (now + TTL_SECONDS[live[hit][1]], live[hit][1])

        written = {"5m": 0, "1h": 0}
        boundary = read_end
        for m in marks:
            mark = blocks[m].mark
            assert mark is not None
            if m + 1 <= read_end:
                if blocks[m].key in self.entries:
                    self.entries[blocks[m].key] = (now + TTL_SECONDS[mark], mark)
                continue
            written[mark] += ends[m] - (ends[boundary - 1] if boundary else 0)
            self.entries[blocks[m].key] = (now + TTL_SECONDS[mark], mark)
            boundary = m + 1
        total = ends[-1] if ends else 0
        read = ends[read_end - 1] if read_end else 0
        uncached = total - read - written["5m"] - written["1h"]
        return Usage(uncached, read, written["5m"], written["1h"], output)


def _cumulative(blocks: Sequence[PromptBlock]) -> list[int]:
    ends, running = [], 0
    for b in blocks:
        running += b.units
        ends.append(running)
    return ends


def _check_marks(marks: Sequence[str | None]) -> None:
    if len(marks) > MAX_MARKS:
        raise CacheRuleError(
            f"a request may carry at most {MAX_MARKS} cache marks, got {len(marks)}"
        )
    seen_short = False
    for mark in marks:
        if mark == "5m":
            seen_short = True
        elif seen_short:
            raise CacheRuleError("a one-hour cache mark must come before every five-minute mark")


def normalized_system(body: MessagesBody) -> list[dict[str, object]]:
    """The system field as bare blocks (no marks; a string is one text block)."""
    system = body.get("system")
    return [_bare(b) for b in _as_blocks(system)] if system else []


def normalized_messages(body: MessagesBody) -> list[dict[str, object]]:
    """The messages with every content a list of bare blocks (no marks)."""
    return [
        {"role": m.get("role"), "content": [_bare(b) for b in _as_blocks(m.get("content"))]}
        for m in body.get("messages") or ()
    ]


@dataclass(frozen=True, slots=True)
class PrefixPair:
    """Two consecutive requests: equal system blocks, and messages a prefix of the next's."""

    system_equal: bool
    messages_prefix: bool

    @property
    def ok(self) -> bool:
        return self.system_equal and self.messages_prefix


def prefix_pairs(bodies: Iterable[MessagesBody]) -> list[PrefixPair]:
    """One ``PrefixPair`` per consecutive pair of bodies, marks ignored."""
    seq = list(bodies)
    out = []
    for a, b in itertools.pairwise(seq):
        ma, mb = normalized_messages(a), normalized_messages(b)
        out.append(
            PrefixPair(
                normalized_system(a) == normalized_system(b)
                and (a.get("tools") or []) == (b.get("tools") or []),
                len(ma) <= len(mb) and mb[: len(ma)] == ma,
            )
        )
    return out
