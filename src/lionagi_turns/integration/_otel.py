"""One OpenTelemetry span per installed model call (the optional ``otel`` extra).

Contract:

- ``configure(on)`` (from ``install(otel=...)``): True on, False off, None as the environment
  says (``LIONAGI_TURNS_OTEL=1`` on). ``enabled()`` is that, and False whenever
  ``opentelemetry`` is not importable: then nothing is emitted and nothing fails.
- ``emit_span(record, finish_reasons)`` emits, through the global tracer provider, one
  ``CLIENT`` span named ``"chat <model>"`` from the time the call was compiled to now, with the
  GenAI semantic conventions' attributes (``gen_ai.operation.name``, ``gen_ai.provider.name``,
  ``gen_ai.request.model``, ``gen_ai.usage.*`` including the cache read and creation tokens,
  ``gen_ai.response.finish_reasons``, ``error.type`` and an error status on a failed call)
  and this package's own (``lionagi_turns.*``: the profile, the messages, the records left
  out, the per-section tokens (``lionagi_turns.sections.<section>.tokens``: under a ceiling
  the ceiling record's sections; for a call the pipeline alone compiled, the default profile's
  or a stage profile's, the sections ``compile`` reports, ``system`` to ``current_turn`` and
  ``total``), the ceiling record and the calibration in force
  (``lionagi_turns.ceiling.calibration.*``: source, factor, margin, model, limit, low_limit)
  with the provider's count of the request (``lionagi_turns.ceiling.reported_input``), the
  cache segments and marks).
- Message content (``gen_ai.input.messages``, the payload's messages as JSON) is recorded only
  when ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is ``true``.
- It reads the record only: tracing never changes what is sent. It never raises.
"""

from __future__ import annotations

import json
import os
import time
from types import MappingProxyType
from typing import Any

from lionagi_turns.core.providers import to_provider_messages
from lionagi_turns.core.sections import SECTION_NAMES, measure
from lionagi_turns.integration._capture_record import CallRecord
from lionagi_turns.integration._state import STATE

__all__ = ("CONTENT_ENV", "OTEL_ENV", "configure", "emit_span", "enabled")

OTEL_ENV = "LIONAGI_TURNS_OTEL"
CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_USAGE = MappingProxyType({
    "input_tokens": "gen_ai.usage.input_tokens",
    "output_tokens": "gen_ai.usage.output_tokens",
    "cache_read_tokens": "gen_ai.usage.cache_read.input_tokens",
    "cache_write_tokens": "gen_ai.usage.cache_creation.input_tokens",
})


def configure(on: bool | None) -> None:
    """Turn spans on (True), off (False) or as ``LIONAGI_TURNS_OTEL`` says (None)."""
    STATE.otel = on


def enabled() -> bool:
    """Whether a call emits a span now (see the contract)."""
    on = STATE.otel
    if on is None:
        on = os.environ.get(OTEL_ENV, "").strip().lower() in {"1", "true", "yes", "on"}
    if not on:
        return False
    try:
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        return False
    return True


def _attributes(record: CallRecord, finish_reasons: list[str]) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": record.provider or "unknown",
        "lionagi_turns.profile": record.profile,
        "lionagi_turns.branch": record.branch_id,
        "lionagi_turns.messages": len(record.compiled.messages),
        "lionagi_turns.left_out": record.left_out,
        "lionagi_turns.cache.marks": list(record.cache_marks),
    }
    if record.model is not None:
        attrs["gen_ai.request.model"] = record.model
    attrs.update({_USAGE[k]: v for k, v in record.usage.items() if k in _USAGE})
    if finish_reasons:
        attrs["gen_ai.response.finish_reasons"] = list(finish_reasons)
    if record.outcome not in (None, "ok"):
        attrs["error.type"] = record.outcome
    for key, value in (record.cache_segments or {}).items():
        if isinstance(value, int):
            attrs[f"lionagi_turns.cache.{key}"] = value
    attrs.update(_ceiling(record.ceiling) or _sections(record))
    if os.environ.get(CONTENT_ENV, "").strip().lower() == "true" and record.payload:
        attrs["gen_ai.input.messages"] = json.dumps(
            {k: record.payload[k] for k in ("system", "messages") if k in record.payload},
            ensure_ascii=False,
        )
    return attrs


def _ceiling(ceiling: dict[str, Any] | None) -> dict[str, Any]:
    if not ceiling:
        return {}
    out: dict[str, Any] = {}
    for key, name in (("ceiling", "ceiling"), ("first", "first_kept_turn"),
                      ("stepped", "drop_step"), ("used", "used")):
        if isinstance(ceiling.get(key), int | str | bool):
            out[f"lionagi_turns.ceiling.{name}"] = ceiling[key]
    for section, tokens in (ceiling.get("sections") or {}).items():
        if isinstance(tokens, int):
            out[f"lionagi_turns.sections.{section}.tokens"] = tokens
    calibration = ceiling.get("calibration")
    for key, value in (calibration.items() if isinstance(calibration, dict) else ()):
        if isinstance(value, int | float | str) and not isinstance(value, bool):
            out[f"lionagi_turns.ceiling.calibration.{key}"] = value
    reported = ceiling.get("reported")
    if isinstance(reported, dict) and isinstance(reported.get("input"), int):
        out["lionagi_turns.ceiling.reported_input"] = reported["input"]
    return out


def _sections(record: CallRecord) -> dict[str, Any]:
    """The request's sections as ``compile`` measures them (``core.sections.measure`` with the
    compile's fold and, laid out for the prompt cache, its system blocks), when the call's
    record has its fold; else none."""
    if record.fold is None:
        return {}
    index, parts = record.fold
    try:
        messages = to_provider_messages(record.compiled)  # type: ignore[arg-type]  # the seed's
        rows = measure(messages, index, parts, record.system_sections).sections
    except (TypeError, ValueError):  # content the measure cannot read: no section attributes
        return {}
    return {f"lionagi_turns.sections.{name}.tokens": rows[name]["tokens"]
            for name in (*SECTION_NAMES, "total")}


def emit_span(record: CallRecord, finish_reasons: list[str]) -> None:
    """Emit the call's span (see the contract)."""
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind, Status, StatusCode

    tracer = trace.get_tracer("lionagi_turns")
    span = tracer.start_span(
        f"chat {record.model}" if record.model else "chat",
        kind=SpanKind.CLIENT,
        start_time=int(record.started * 1e9),
        attributes=_attributes(record, finish_reasons),
    )
    if record.outcome not in (None, "ok"):
        span.set_status(Status(StatusCode.ERROR, str(record.outcome)))
    span.end(end_time=time.time_ns())
