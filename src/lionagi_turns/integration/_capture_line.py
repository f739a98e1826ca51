"""One capture record as the JSON object of a capture file line
(``lionagi-turns/capture@1``, described by ``cli/schema/capture.schema.json``).

Contract:

- ``capture_line(record)`` is a JSON-ready dict: the schema tag, the time the call was compiled
  (UTC, ISO 8601), the process id, the branch id, the profile, the model, the compiled messages
  in provider form, Amendment 1's bound rows (``[]`` for the default profile) and how many
  records they left out, the ceiling record, the cache segments and marks, the payload lionagi's
  endpoint sent (``data:`` URLs redacted by ``redacted``), the usage and the outcome.
- It holds no header, API key or credential: none is in a record.
"""

from __future__ import annotations

import hashlib
import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from lionagi_turns.core.providers import to_provider_messages

if TYPE_CHECKING:
    from lionagi_turns.core.contracts import CompiledChatRequest
    from lionagi_turns.integration._capture_record import CallRecord

__all__ = ("INLINE_LIMIT", "SCHEMA", "capture_line", "redacted")

SCHEMA = "lionagi-turns/capture@1"
INLINE_LIMIT = 4096


def capture_line(record: CallRecord) -> dict[str, Any]:
    """The capture file object of ``record`` (see the contract)."""
    from lionagi_turns.profiles.amendment1._report import bounds_rows

    compiled = record.compiled
    messages = to_provider_messages(cast_compiled(compiled))
    bounds = bounds_rows(compiled) if hasattr(compiled, "bounds") else []
    return {
        "schema": SCHEMA,
        "time": datetime.fromtimestamp(record.started, UTC).isoformat(),
        "pid": os.getpid(),
        "branch": record.branch_id,
        "profile": record.profile,
        "model": record.model,
        "messages": redacted(messages),
        "bounds": bounds,
        "left_out": record.left_out,
        "in_flight_left_out": list(record.in_flight_left_out),
        "ceiling": redacted(record.ceiling),
        "cache": {"segments": record.cache_segments, "marks": list(record.cache_marks)},
        "payload": record.payload,
        "usage": dict(record.usage),
        "outcome": record.outcome,
    }


def cast_compiled(compiled: object) -> CompiledChatRequest:
    """``compiled`` read as the default contract (Amendment 1's has the same message fields)."""
    return compiled  # type: ignore[return-value]


def redacted(value: Any) -> Any:
    """``value`` with each ``data:`` URL longer than ``INLINE_LIMIT`` replaced by
    ``data:<media type>;sha256=<hex>;bytes=<n>`` (a deep copy otherwise)."""
    if isinstance(value, dict):
        return {k: redacted(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redacted(v) for v in value]
    if isinstance(value, str) and value.startswith("data:") and len(value) > INLINE_LIMIT:
        media = value[5:].split(";", 1)[0].split(",", 1)[0]
        digest = hashlib.sha256(value.encode()).hexdigest()
        return f"data:{media};sha256={digest};bytes={len(value)}"
    return value
