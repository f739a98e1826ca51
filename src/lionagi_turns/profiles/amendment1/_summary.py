"""Tier 3 of the input ceiling: recorded compaction (``InputCeiling(compaction=Compaction(...))``).

Contract:

- ``Compaction(summarize, timeout=30.0, share=0.25)``: ``summarize`` is an async callable taking
  a list of texts (the previous summary first, when there is one, then each dropped record's
  text, oldest first) and returning the summary's text. The compile never calls it: the
  integration does, at a drop step, before it compiles (``integration._compaction``).
- A summary is a durable record in the branch: ``branch.metadata[SUMMARIES_KEY]``, a list of
  JSON objects ``{"upto": <first kept instruction id>, "covers": [<record ids>], "text": ...,
  "step": k}``, newest last. Nothing is removed from the branch.
- ``summary_for(branch, first)``: the newest well-formed record whose ``upto`` is ``first``
  (None otherwise; a malformed entry is skipped). A compile under a ceiling whose first kept
  turn is ``first`` sends it (``summary_block``) right after the history marker and lists the
  records it covers as ``summarized`` instead of ``truncated``; a compile that keeps the
  recorded first kept turn counts that turn's summary against the ceiling
  (``summary_sizes``), so the request sent stays under it.
- ``summary_block(summary)``: one header line naming how many records it stands for, the step
  and the material authority, then the text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

    from lionagi_turns.profiles.amendment1._meter import Meter

__all__ = ("SUMMARIES_KEY", "Compaction", "Summary", "check_compaction", "recorded",
           "summary_block", "summary_for", "summary_sizes")

SUMMARIES_KEY = "lionagi_turns.summaries"


@dataclass(frozen=True, slots=True)
class Compaction:
    """Tier 3's options (module contract): the summarizer, how long it may take (seconds), and
    the share of the ceiling a summary may take (else the step is a plain drop)."""

    summarize: Callable[[list[str]], Awaitable[object]]
    timeout: float = 30.0
    share: float = 0.25

    def __post_init__(self) -> None:
        if not callable(self.summarize):
            raise TypeError(
                f"Compaction.summarize must be an async callable, got {self.summarize!r}")
        timeout, share = self.timeout, self.share
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ValueError(f"Compaction.timeout must be seconds > 0, got {timeout!r}")
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share <= 1:
            raise ValueError(f"Compaction.share must be in (0, 1], got {share!r}")


def check_compaction(value: object) -> None:
    """``TypeError`` for an ``InputCeiling.compaction`` that is neither None nor a
    ``Compaction``."""
    if value is not None and not isinstance(value, Compaction):
        raise TypeError(f"InputCeiling.compaction must be a Compaction, got {value!r}")


@dataclass(frozen=True, slots=True)
class Summary:
    """One recorded summary (module contract)."""

    upto: str
    covers: tuple[str, ...]
    text: str
    step: int

    def to_json(self) -> dict[str, Any]:
        return {"upto": self.upto, "covers": list(self.covers), "text": self.text,
                "step": self.step}


def _summary(data: object) -> Summary | None:
    if not isinstance(data, Mapping):
        return None
    upto, covers, text, step = (data.get(k) for k in ("upto", "covers", "text", "step"))
    if not (isinstance(upto, str) and isinstance(text, str) and text.strip()
            and isinstance(covers, list) and all(isinstance(c, str) for c in covers)
            and isinstance(step, int) and not isinstance(step, bool)):
        return None
    return Summary(upto, tuple(covers), text, step)


def recorded(branch: Branch) -> list[Summary]:
    """The branch's well-formed summaries, oldest first."""
    found = branch.metadata.get(SUMMARIES_KEY)
    if not isinstance(found, list):
        return []
    return [s for s in map(_summary, found) if s is not None]


def summary_for(branch: Branch, first: str | None) -> Summary | None:
    """The newest summary whose ``upto`` is ``first`` (module contract)."""
    if first is None:
        return None
    return next((s for s in reversed(recorded(branch)) if s.upto == first), None)


def summary_sizes(branch: Branch, meter: Meter) -> dict[str, int]:
    """Per ``upto``: what its newest summary adds to a request (its block and the join)."""
    join = meter.text("\n\n")
    return {s.upto: meter.text(summary_block(s)) + join for s in recorded(branch)}


def summary_block(summary: Summary) -> str:
    """The summary as sent, at the truncation point (module contract)."""
    return (f"[LIONAGI_SUMMARY covers={len(summary.covers)} step={summary.step} "
            f"authority=material]\n{summary.text}")
