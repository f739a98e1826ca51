"""What each installed model call compiled, sent and got back, for ``capture()`` and
``last_request()``.

Contract:

- ``note_call`` (called by the installed ``_prepare_run_kwargs`` with the one compile it made)
  starts the record of the call in this task's context; nothing is compiled here.
- ``emit_api_post_call`` (installed in place of lionagi's name in its chat and run modules)
  completes that record when the call settles: the payload lionagi's endpoint built (the
  ``APICalling.payload`` it sent, never its headers), usage and outcome; then it hands every
  argument to lionagi's own ``emit_api_post_call`` unchanged. A failure to record is swallowed:
  a capture never changes or fails a call. Under a ceiling it also writes the provider's
  count of the request into the instruction's ceiling record (``_calibrate.note_reported``).
- ``capture()`` is a sync and async context manager yielding a list; each completed record of a
  call made in its context (and tasks started from it) is appended to every capture open there,
  so nested and concurrent captures each see their own calls. It raises ``IntegrationError``
  outside ``install()``.
- ``last_request(branch)`` is the last completed record of ``branch`` (None before any); it is
  kept only while ``branch`` lives (a weak reference to the branch).
- No record holds an API key or header: the payload is the request body only, and a ``data:``
  URL longer than ``_capture_line.INLINE_LIMIT`` characters is kept as its media
  type, digest and size.
"""

from __future__ import annotations

import contextlib
import time
from contextvars import ContextVar, Token
from types import TracebackType
from typing import TYPE_CHECKING, Any

from lionagi_turns.core.support import IntegrationError
from lionagi_turns.integration._calibrate import note_reported
from lionagi_turns.integration._capture_file import append
from lionagi_turns.integration._capture_line import redacted
from lionagi_turns.integration._capture_record import CallRecord
from lionagi_turns.integration._originals import HOOKS, original, saved
from lionagi_turns.integration._otel import emit_span
from lionagi_turns.integration._otel import enabled as otel_enabled
from lionagi_turns.integration._state import STATE
from lionagi_turns.memo.branch_memory import BranchSlot

if TYPE_CHECKING:
    from lionagi_turns.integration._compile import CompiledCall

__all__ = (
    "CallRecord",
    "Capture",
    "capture",
    "emit_api_post_call",
    "last_request",
    "note_call",
    "reported_input",
)

CAPTURE_OUTSIDE_INSTALL = (
    "lionagi_turns.capture() records installed calls only: call lionagi_turns.install() "
    "before opening the capture"
)


# The calling task's call in progress, by a number: tasks lionagi starts during a call (its
# executor's processor) copy the context and outlive the call, so the context holds only the
# number and the record itself lives in ``STATE.calls`` until the call settles.
_pending: ContextVar[int | None] = ContextVar("lionagi_turns_capture_pending", default=None)
_open: ContextVar[tuple[list[CallRecord], ...]] = ContextVar(
    "lionagi_turns_captures", default=()
)
# The last record of each live branch, kept only as long as the branch lives.
_last: BranchSlot[CallRecord] = BranchSlot("capture")


def note_call(branch: object, call: CompiledCall, profile: str) -> None:
    """Start the record of the call ``call`` compiled for ``branch`` (see the contract)."""
    from lionagi_turns.profiles.amendment1._ceiling import CEILING_KEY

    metadata = getattr(call.compiled.instruction, "metadata", None) or {}
    ceiling = metadata.get(CEILING_KEY) if isinstance(metadata, dict) else None
    blocks = call.kwargs.get("system_blocks")
    segments = None
    if blocks is not None:
        segments = {
            "blocks": len(blocks),
            "stable_count": getattr(blocks, "stable_count", None),
            "previous_end": getattr(blocks, "previous_end", None),
        }
    previous = _pending.get()
    if previous is not None:  # this task's previous call never settled: nothing completes it
        STATE.calls.pop(previous, None)
    number = next(STATE.call_numbers)
    _pending.set(number)
    STATE.calls[number] = (
        CallRecord(
            branch_id=str(getattr(branch, "id", "")),
            profile=profile,
            compiled=call.compiled,
            started=time.time(),
            ceiling=dict(ceiling) if isinstance(ceiling, dict) else None,
            cache_segments=segments,
            in_flight_left_out=tuple(str(uid) for uid in call.in_flight_left_out),
            fold=call.fold,
            system_sections=call.system_sections,
        )
    )


async def emit_api_post_call(
    branch: Any,
    imodel: Any,
    api_call: Any = None,
    *,
    error: str | BaseException | None = None,
    tokens: dict[str, Any] | None = None,
) -> None:
    """lionagi's ``emit_api_post_call``, after completing this call's record (see the
    contract)."""
    number = _pending.get()
    record = STATE.calls.get(number) if number is not None else None
    if number is not None and record is not None and record.branch_id == str(
        getattr(branch, "id", "")
    ):
        _pending.set(None)
        del STATE.calls[number]
        with contextlib.suppress(Exception):  # the provider's count, for the next compile
            payload = getattr(api_call, "payload", None)
            model = payload.get("model") if isinstance(payload, dict) else None
            note_reported(record, reported_input(getattr(api_call, "response", None)),
                          model if isinstance(model, str) else None)
        with contextlib.suppress(Exception):  # a capture never fails a call
            _complete(record, branch, imodel, api_call, error)
    await original(HOOKS, "emit_api_post_call")(
        branch, imodel, api_call, error=error, tokens=tokens
    )


def _complete(
    record: CallRecord, branch: object, imodel: Any, api_call: Any, error: object
) -> None:
    config = getattr(getattr(imodel, "endpoint", None), "config", None)
    provider = getattr(config, "provider", None)
    record.provider = provider if isinstance(provider, str) else None
    payload = getattr(api_call, "payload", None)
    if isinstance(payload, dict):
        record.payload = redacted(payload)
        record.cache_marks = cache_marks(record.payload)
    response = getattr(api_call, "response", None)
    record.usage = usage_of(response)
    record.outcome = _outcome(api_call, error)
    _last.put(branch, record)
    for calls in _open.get():
        calls.append(record)
    append(record)
    if otel_enabled():
        emit_span(record, finish_reasons(response))


def _outcome(api_call: Any, error: object) -> str:
    if isinstance(error, BaseException):
        return type(error).__name__
    if error is not None:
        return "ProviderError"
    status = getattr(getattr(api_call, "status", None), "value", None)
    if status == "failed":
        failure = getattr(getattr(api_call, "execution", None), "error", None)
        return type(failure).__name__ if isinstance(failure, BaseException) else "ProviderError"
    return "ok"


def usage_of(response: object) -> dict[str, int]:
    """Input, cache read, cache write and output tokens of an OpenAI-style or Anthropic
    response body (only the counts it reports)."""
    usage = response.get("usage") if isinstance(response, dict) else None
    if not isinstance(usage, dict):
        return {}
    details = usage.get("prompt_tokens_details")
    read = details.get("cached_tokens") if isinstance(details, dict) else None
    found = {
        "input_tokens": usage.get("input_tokens", usage.get("prompt_tokens")),
        "cache_read_tokens": usage.get("cache_read_input_tokens", read),
        "cache_write_tokens": usage.get("cache_creation_input_tokens"),
        "output_tokens": usage.get("output_tokens", usage.get("completion_tokens")),
    }
    return {k: int(v) for k, v in found.items() if isinstance(v, int) and not isinstance(v, bool)}


def reported_input(response: object) -> int | None:
    """The input tokens an OpenAI-style or Anthropic response body reports for its request,
    cache reads and writes included: an OpenAI-style ``prompt_tokens`` holds its cached
    tokens; Anthropic's ``input_tokens`` does not, so its cache counts are added (None: no
    input count)."""
    raw = response.get("usage") if isinstance(response, dict) else None
    found = usage_of(response)
    if not isinstance(raw, dict) or "input_tokens" not in found:
        return None
    if "prompt_tokens" in raw:
        return found["input_tokens"]
    return sum(found.get(k, 0) for k in ("input_tokens", "cache_read_tokens",
                                         "cache_write_tokens"))


def finish_reasons(response: object) -> list[str]:
    """The finish reasons of an OpenAI-style (``choices[].finish_reason``) or Anthropic
    (``stop_reason``) response body."""
    if not isinstance(response, dict):
        return []
    if isinstance(response.get("stop_reason"), str):
        return [response["stop_reason"]]
    choices = response.get("choices")
    return [
        c["finish_reason"]
        for c in (choices if isinstance(choices, list) else ())
        if isinstance(c, dict) and isinstance(c.get("finish_reason"), str)
    ]


def cache_marks(payload: dict[str, Any]) -> list[str]:
    """Where the payload carries a ``cache_control`` mark (``system[i]``,
    ``messages[i].content[j]``, ``tools[i]``)."""
    marks: list[str] = []
    for key in ("system", "tools"):
        for i, block in enumerate(payload.get(key) or ()):
            if isinstance(block, dict) and "cache_control" in block:
                marks.append(f"{key}[{i}]")
    for i, msg in enumerate(payload.get("messages") or ()):
        content = msg.get("content") if isinstance(msg, dict) else None
        for j, block in enumerate(content if isinstance(content, list) else ()):
            if isinstance(block, dict) and "cache_control" in block:
                marks.append(f"messages[{i}].content[{j}]")
    return marks


def last_request(branch: object) -> CallRecord | None:
    """The record of ``branch``'s last installed call (None before any)."""
    return _last.get(branch)


class Capture:
    """The context manager ``capture()`` returns (see the module contract)."""

    def __init__(self) -> None:
        self.calls: list[CallRecord] = []
        self._token: Token[tuple[list[CallRecord], ...]] | None = None

    def __enter__(self) -> list[CallRecord]:
        if not saved:  # install() is not in effect
            raise IntegrationError(CAPTURE_OUTSIDE_INSTALL)
        self._token = _open.set((*_open.get(), self.calls))
        return self.calls

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._token is not None:
            _open.reset(self._token)
            self._token = None

    async def __aenter__(self) -> list[CallRecord]:
        return self.__enter__()

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.__exit__(kind, exc, tb)


def capture() -> Capture:
    """A context manager collecting the records of the installed calls made inside it."""
    return Capture()
