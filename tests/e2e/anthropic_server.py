"""A fake Anthropic Messages server on 127.0.0.1 that records bodies and prices them.

Contract:

- Listens only on ``127.0.0.1`` on an ephemeral port; ``close()`` shuts it down. Use it as a
  context manager or through the ``anthropic_server`` fixture.
- Every POST body is parsed as JSON and recorded, in arrival order (``bodies()``). A body that
  is not JSON, or that breaks a cache-mark rule (more than four marks, a one-hour mark after a
  five-minute one), is answered with 400 as the API does and recorded.
- ``POST .../messages`` consumes the next scripted reply (``script()``; text, or a dict/list sent
  as JSON text, which is what lionagi's structured parsers read); ``default`` otherwise.
- Each accepted body is priced by one ``CacheSimulator`` shared by the server's requests, at a
  clock that advances ``seconds_per_request`` per request (deterministic, no sleeping); the
  reply's ``usage`` carries the simulated counts in Anthropic's shape, including the
  per-lifetime ``cache_creation`` split. ``usages()`` returns them in order.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from typing import Any, ClassVar

if __package__:
    from .cache_simulator import CacheRuleError, CacheSimulator, Usage
    from .http_server import JsonPostServing
else:  # loaded as a top-level module: benchmarks/ put tests/e2e itself on sys.path
    from cache_simulator import (  # type: ignore[import-not-found,no-redef]
        CacheRuleError,
        CacheSimulator,
        Usage,
    )
    from http_server import JsonPostServing  # type: ignore[import-not-found,no-redef]

__all__ = ("AnthropicServer",)


@dataclass
class AnthropicServer(JsonPostServing):
    """See the module contract."""

    default: str | dict[str, Any] = "ok"
    seconds_per_request: float = 10.0
    simulator: CacheSimulator = field(default_factory=CacheSimulator)
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list, init=False)
    _usages: list[Usage] = field(default_factory=list, init=False)
    _replies: deque[str | dict[str, Any] | list[Any]] = field(default_factory=deque, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _httpd: ThreadingHTTPServer | None = field(default=None, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)
    _clock: float = field(default=0.0, init=False)

    _THREAD_NAME: ClassVar[str] = "e2e-anthropic-server"
    _ROUTE: ClassVar[str] = "/messages"

    @staticmethod
    def _error_payload(message: str) -> dict[str, Any]:
        return _error(message)

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("AnthropicServer is not running; call start() first")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def script(self, *replies: str | dict[str, Any] | list[Any]) -> None:
        with self._lock:
            self._replies.extend(replies)

    def bodies(self) -> list[dict[str, Any]]:
        """Every recorded ``/messages`` body, in arrival order."""
        with self._lock:
            return [b for p, b in self.requests if p.rstrip("/").endswith("/messages")]

    def usages(self) -> list[Usage]:
        with self._lock:
            return list(self._usages)

    def _record(self, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append((path, body))

    def _answer(self, body: Mapping[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            reply = self._replies.popleft() if self._replies else self.default
            text = reply if isinstance(reply, str) else json.dumps(reply)
            try:
                usage = self.simulator.request(body, self._clock, output=len(text))
            except CacheRuleError as exc:
                return 400, _error(str(exc))
            self._clock += self.seconds_per_request
            self._usages.append(usage)
            number = len(self._usages)
        return 200, {
            "id": f"msg_e2e_{number}",
            "type": "message",
            "role": "assistant",
            "model": str(body.get("model", "")),
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": usage.anthropic(),
        }


def _error(message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
