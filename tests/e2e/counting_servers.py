"""Fake servers whose reported usage comes from a tokenizer other than o200k.

Contract:

- ``provider_tokens(text, scale)`` is the "provider's tokenizer": ``ceil(scale × o200k(text))``,
  deterministic (``scale`` 1.18 counts ~18% more than o200k, 0.90 ~10% fewer).
- ``CountingChatServer(scale=...)`` is the OpenAI-compatible ``ChatServer`` whose every answer
  reports ``prompt_tokens`` = the provider's count of the JSON of the body's ``tools`` and
  ``messages`` (so the JSON framing is counted, as a provider counts its own framing);
  ``counts()`` lists them in arrival order.
- ``counting_anthropic(scale)`` is an ``AnthropicServer`` whose simulator measures each prompt
  block (each tool, system block, message content block) by the provider's count of its text
  (of its canonical JSON for a block that is not text); the reply's usage splits that count
  into uncached input, cache reads and cache writes as the simulator prices the request.
  ``anthropic_counts(server)`` is each request's whole count (the three added).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from lionagi_turns.core.measure import count_tokens

if __package__:
    from .anthropic_server import AnthropicServer
    from .cache_simulator import CacheSimulator
    from .http_server import ChatServer
else:  # loaded as a top-level module: benchmarks/ put tests/e2e itself on sys.path
    from anthropic_server import AnthropicServer  # type: ignore[import-not-found,no-redef]
    from cache_simulator import CacheSimulator  # type: ignore[import-not-found,no-redef]
    from http_server import ChatServer  # type: ignore[import-not-found,no-redef]

__all__ = (
    "CountingChatServer",
    "anthropic_counts",
    "counting_anthropic",
    "provider_tokens",
)


def provider_tokens(text: str, scale: float) -> int:
    return math.ceil(scale * count_tokens(text))


@dataclass
class CountingChatServer(ChatServer):
    """See the module contract."""

    scale: float = 1.18
    _counts: list[int] = field(default_factory=list, init=False)

    def counts(self) -> list[int]:
        with self._lock:
            return list(self._counts)

    def clear(self) -> None:
        super().clear()
        with self._lock:
            self._counts.clear()

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, reply = super()._answer(body)
        counted = {k: body[k] for k in ("tools", "messages") if k in body}
        n = provider_tokens(json.dumps(counted, ensure_ascii=False), self.scale)
        with self._lock:
            self._counts.append(n)
        if status == 200:
            reply["usage"] = {"prompt_tokens": n, "completion_tokens": 7,
                              "total_tokens": n + 7}
        return status, reply


def counting_anthropic(scale: float) -> AnthropicServer:
    def measure(block: Any) -> int:
        text = block.get("text") if block.get("type") == "text" else None
        if not isinstance(text, str):
            bare = {k: v for k, v in block.items() if k != "cache_control"}
            text = json.dumps(bare, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return provider_tokens(text, scale)

    return AnthropicServer(simulator=CacheSimulator(measure=measure))


def anthropic_counts(server: AnthropicServer) -> list[int]:
    return [u.total_input for u in server.usages()]
