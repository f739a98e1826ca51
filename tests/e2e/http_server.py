"""A real OpenAI-compatible chat-completions server on 127.0.0.1 for end-to-end tests.

Contract:

- Listens only on ``127.0.0.1`` on an ephemeral port; ``close()`` shuts it down and joins the
  serving thread. Use it as a context manager or through the ``chat_server`` fixture.
- Every POST body is parsed as JSON and appended, in arrival order, to ``requests`` (with its
  path). A body that is not JSON is answered with 400 and recorded as ``{"_invalid": text}``.
- Each POST to ``.../chat/completions`` consumes the next scripted ``Reply`` (``script()``);
  when none is scripted it answers ``default`` (plain text ``"ok"`` unless changed). A reply
  may carry ``content`` (text; ``dict``/``list`` are JSON-encoded, which is what lionagi's
  response-format parser reads), OpenAI ``tool_calls``, or an HTTP error ``status``.
- Any other path answers 404 and is recorded.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self

__all__ = (
    "ChatServer",
    "JsonPostServing",
    "RecordedRequest",
    "Reply",
    "serve_json_posts",
    "stop_serving",
    "tool_call",
)


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message}}


class JsonPostServing:
    """``start()``/``close()`` and the context-manager protocol of a fake server that answers
    JSON POSTs through ``serve_json_posts``. A subclass declares ``_httpd`` and ``_thread``
    (None until started), the thread name and route, ``_record``, ``_answer`` and
    ``_error_payload``."""

    _THREAD_NAME: ClassVar[str]
    _ROUTE: ClassVar[str]
    _httpd: ThreadingHTTPServer | None
    _thread: threading.Thread | None

    def _record(self, path: str, body: dict[str, Any]) -> None:
        raise NotImplementedError

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        raise NotImplementedError

    def _error_payload(self, message: str) -> dict[str, Any]:
        raise NotImplementedError

    def start(self) -> Self:
        if self._httpd is not None:
            raise RuntimeError(
                f"{type(self).__name__}.start() called twice; create a new server instead"
            )
        self._httpd, self._thread = serve_json_posts(
            self._THREAD_NAME, self._ROUTE, self._record, self._answer, self._error_payload
        )
        return self

    def close(self) -> None:
        if self._httpd is None or self._thread is None:
            return
        stop_serving(self._httpd, self._thread)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Reply:
    """One scripted answer. ``content`` dict/list values are sent as JSON text."""

    content: str | dict[str, Any] | list[Any] | None = "ok"
    tool_calls: tuple[dict[str, Any], ...] = ()
    status: int = 200
    finish_reason: str | None = None

    def body(self, model: str, number: int) -> dict[str, Any]:
        if self.status != 200:
            return {"error": {"message": f"scripted failure {self.status}", "type": "test"}}
        content = self.content
        if isinstance(content, dict | list):
            content = json.dumps(content)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if self.tool_calls:
            message["tool_calls"] = [copy.deepcopy(c) for c in self.tool_calls]
        finish = self.finish_reason or ("tool_calls" if self.tool_calls else "stop")
        return {
            "id": f"chatcmpl-e2e-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
        }


def tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI ``tool_calls`` entry."""
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


@dataclass(frozen=True)
class RecordedRequest:
    path: str
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The POSTed ``messages``; KeyError (naming the path) when the body has none."""
        try:
            return list(self.body["messages"])
        except KeyError:
            raise KeyError(
                f"POST {self.path} body has no 'messages': keys {sorted(self.body)}"
            ) from None


@dataclass
class ChatServer(JsonPostServing):
    """See the module contract. Thread-safe recording; replies are consumed in POST order."""

    default: Reply = field(default_factory=Reply)
    requests: list[RecordedRequest] = field(default_factory=list, init=False)
    _replies: deque[Reply] = field(default_factory=deque, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _httpd: ThreadingHTTPServer | None = field(default=None, init=False)
    _thread: threading.Thread | None = field(default=None, init=False)

    _THREAD_NAME: ClassVar[str] = "e2e-chat-server"
    _ROUTE: ClassVar[str] = "/chat/completions"
    _error_payload = staticmethod(_error)

    # -- configuration and inspection ------------------------------------------------------
    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("ChatServer is not running; call start() first")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def script(self, *replies: Reply | str | dict[str, Any]) -> None:
        """Queue replies; a ``str``/``dict`` is shorthand for ``Reply(content=...)``."""
        with self._lock:
            for r in replies:
                self._replies.append(r if isinstance(r, Reply) else Reply(content=r))

    @property
    def pending_replies(self) -> int:
        with self._lock:
            return len(self._replies)

    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path.rstrip("/").endswith("/chat/completions")]

    def payloads(self) -> list[list[dict[str, Any]]]:
        """The ``messages`` of every chat-completions POST, in order."""
        return [r.messages for r in self.chat_requests()]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
            self._replies.clear()

    def _record(self, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(RecordedRequest(path=path, body=body))

    def _next_reply(self) -> tuple[Reply, int]:
        with self._lock:
            number = len(self.requests)
            return (self._replies.popleft() if self._replies else self.default), number

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        reply, number = self._next_reply()
        return reply.status, reply.body(str(body.get("model", "")), number)


def serve_json_posts(
    name: str,
    route: str,
    record: Callable[[str, dict[str, Any]], None],
    answer: Callable[[dict[str, Any]], tuple[int, dict[str, Any]]],
    error: Callable[[str], dict[str, Any]],
) -> tuple[ThreadingHTTPServer, threading.Thread]:
    """Serve JSON POSTs on ``127.0.0.1`` (ephemeral port) from a daemon thread named ``name``.

    Every POST body is passed to ``record(path, body)``; a body that is not JSON is recorded as
    ``{"_invalid": text}`` and answered 400. A POST whose path ends with ``route`` is answered
    with ``answer(body)`` (status, JSON payload); any other path with 404. Error payloads are
    ``error(message)``. Stop it with ``stop_serving``.
    """

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # silence stderr
            return

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8", "replace")
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                record(self.path, {"_invalid": raw})
                self._send(400, error("body is not JSON"))
                return
            record(self.path, body)
            if not self.path.rstrip("/").endswith(route):
                self._send(404, error(f"no route {self.path}"))
                return
            self._send(*answer(body))

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(
        target=lambda: httpd.serve_forever(poll_interval=0.02), name=name, daemon=True
    )
    thread.start()
    return httpd, thread


def stop_serving(httpd: ThreadingHTTPServer, thread: threading.Thread) -> None:
    """Shut ``httpd`` down, close its socket and join its serving ``thread``."""
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)
