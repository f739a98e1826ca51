"""The record of one installed model call (``capture()``, ``last_request()``, the capture file).

Contract: a ``CallRecord`` holds the branch id, the profile, the compiled request the call's
one compile produced, the time it was compiled, its ceiling record and cache segments, the
instructions of other calls in flight on the branch its view left out, the compile's fold
and system blocks' sections (``CompiledCall.fold``, ``system_sections``); once the
call settled, the payload lionagi's endpoint sent (redacted, never its headers), the payload's
cache marks, the usage the response reported and the outcome (``"ok"`` or the exception's type
name; None while the call is in flight).
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lionagi_turns.integration._registry import Compiled

__all__ = ("CallRecord",)


@dataclass(slots=True)
class CallRecord:
    """One installed model call: what was compiled and sent, and once it settled, its usage and
    outcome (``"ok"``, or the exception's type name)."""

    branch_id: str
    profile: str
    compiled: Compiled
    started: float
    ceiling: dict[str, Any] | None = None
    provider: str | None = None
    cache_segments: dict[str, Any] | None = None
    payload: dict[str, Any] | None = None
    cache_marks: list[str] = field(default_factory=list)
    usage: dict[str, int] = field(default_factory=dict)
    outcome: str | None = None
    in_flight_left_out: tuple[str, ...] = ()
    fold: tuple[int | None, tuple[tuple[str, str], ...]] | None = None
    system_sections: tuple[tuple[str, str], ...] = ()  # laid out for the prompt cache

    @property
    def model(self) -> str | None:
        """The payload's ``model`` (None when the call failed before sending)."""
        value = (self.payload or {}).get("model")
        return value if isinstance(value, str) else None

    @property
    def left_out(self) -> int:
        """How many records the request's section bounds left out (0 for the default profile)."""
        bounds = getattr(self.compiled, "bounds", ())
        return sum(len(b.left_out) for b in bounds)

    def facts(self) -> list[tuple[str, str]]:
        """The record's facts as (label, value) rows, the views' common part."""
        usage = ", ".join(f"{k} {v:,}" for k, v in self.usage.items()) or "none reported"
        return [("branch", self.branch_id), ("profile", self.profile),
                ("model", self.model or "not sent"), ("left out", f"{self.left_out:,}"),
                ("cache marks", ", ".join(self.cache_marks) or "none"), ("usage", usage),
                ("outcome", self.outcome or "in flight")]

    def __rich__(self) -> object:
        """What a Rich console prints: the compiled request's table (its ``__rich__``), then
        the record's facts (``facts``) as its last rows."""
        from lionagi_turns.core._rich_view import request_table

        return request_table(repr(self), self.compiled.messages, self.facts())

    def _repr_html_(self) -> str:
        """What a notebook shows: the record's facts (escaped) in a table, then the compiled
        request's own ``_repr_html_`` (the ``compile --format html`` body) when it has one."""
        rows = "".join(f"<tr><th>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                       for k, v in self.facts())
        view = self.compiled._repr_html_() or ""
        return f'<div class="lt-call"><table class="call">{rows}</table>{view}</div>'

    def __repr__(self) -> str:
        usage = ", ".join(f"{k}={v}" for k, v in self.usage.items()) or "no usage"
        return (
            f"<CallRecord branch={self.branch_id[:8]} profile={self.profile} "
            f"model={self.model} messages={len(self.compiled.messages)} "
            f"left_out={self.left_out} {usage} outcome={self.outcome}>"
        )
