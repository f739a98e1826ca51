"""Tier 3 of the input ceiling: recorded compaction (``InputCeiling(compaction=Compaction(...))``).

Contract:

- ``Compaction(summarize, timeout=30.0, share=0.25, prompt=None)``: ``summarize`` is either an
  async callable taking a list of texts (the previous summary first, when there is one, then
  each dropped record's text, oldest first) and returning the summary's text, or a lionagi
  ``iModel``, asked through its own ``invoke`` with ``prompt`` (None: ``SUMMARY_PROMPT``) as the
  system message and those texts as the user message (``integration._summarizer``). A
  ``prompt`` with a callable is refused (the callable gets the texts itself). Every option is
  checked at construction, so before any call. The compile never calls the summarizer: the
  integration does, at a drop step, before it compiles (``integration._compaction``).
- A summary is a durable record in the branch: ``branch.metadata[SUMMARIES_KEY]``, a list of
  JSON objects ``{"upto": <first kept instruction id>, "covers": [<record ids>], "text": ...,
  "step": k, "model": <the iModel's model name, None for a callable>, "tokens": {"summary":
  <what the summary adds to a request, offline measure>, "input": <the model call's reported
  input tokens>, "output": <its output tokens>}}`` (``input``/``output`` only when the model
  reported them), newest last. Nothing is removed from the branch.
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

from lionagi.service.imodel import iModel

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

    from lionagi_turns.profiles.amendment1._meter import Meter

__all__ = ("SUMMARIES_KEY", "SUMMARY_PROMPT", "Compaction", "Summary", "check_compaction",
           "recorded", "summary_block", "summary_for", "summary_sizes")

SUMMARIES_KEY = "lionagi_turns.summaries"
SUMMARY_PROMPT = (
    "You compress the earlier part of a conversation that no longer fits the model's context. "
    "Write a short summary of the records you are given, oldest first, the previous summary "
    "among them when there is one: keep every fact, figure, name, decision and open question "
    "the conversation may need later, verbatim where it is short; leave out tool output the "
    "tools can give again. Answer with the summary only."
)


@dataclass(frozen=True, slots=True)
class Compaction:
    """Tier 3's options (module contract): the summarizer (an async callable or an ``iModel``),
    how long it may take (seconds), the share of the ceiling a summary may take (else the step
    is a plain drop) and, for an ``iModel``, the prompt it is asked with."""

    summarize: Callable[[list[str]], Awaitable[object]] | iModel
    timeout: float = 30.0
    share: float = 0.25
    prompt: str | None = None

    def __post_init__(self) -> None:
        summarize, prompt = self.summarize, self.prompt
        if isinstance(summarize, iModel):
            if prompt is not None and (not isinstance(prompt, str) or not prompt.strip()):
                raise ValueError(
                    f"Compaction.prompt must be text the iModel is asked with, got {prompt!r}; "
                    "pass a non-empty string, or None for the default SUMMARY_PROMPT")
        elif not callable(summarize):
            raise TypeError(
                "Compaction.summarize must be an async callable or a lionagi iModel, got "
                f"{summarize!r}")
        elif prompt is not None:
            raise ValueError(
                f"Compaction.prompt is for an iModel summarizer, got {prompt!r} with the "
                f"callable {summarize!r}; the callable is given the texts itself: drop prompt")
        timeout, share = self.timeout, self.share
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ValueError(f"Compaction.timeout must be seconds > 0, got {timeout!r}")
        if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share <= 1:
            raise ValueError(f"Compaction.share must be in (0, 1], got {share!r}")

    @property
    def model(self) -> iModel | None:
        """The summarizing iModel (None: an async callable summarizes)."""
        return self.summarize if isinstance(self.summarize, iModel) else None

    @property
    def instructions(self) -> str:
        """The system prompt an iModel summarizer is asked with."""
        return SUMMARY_PROMPT if self.prompt is None else self.prompt


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
    model: str | None = None
    tokens: Mapping[str, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"upto": self.upto, "covers": list(self.covers), "text": self.text,
                "step": self.step, "model": self.model,
                "tokens": None if self.tokens is None else dict(self.tokens)}


def _summary(data: object) -> Summary | None:
    if not isinstance(data, Mapping):
        return None
    upto, covers, text, step = (data.get(k) for k in ("upto", "covers", "text", "step"))
    if not (isinstance(upto, str) and isinstance(text, str) and text.strip()
            and isinstance(covers, list) and all(isinstance(c, str) for c in covers)
            and isinstance(step, int) and not isinstance(step, bool)):
        return None
    model, tokens = data.get("model"), data.get("tokens")
    counts = {k: v for k, v in tokens.items() if isinstance(k, str) and isinstance(v, int)
              and not isinstance(v, bool)} if isinstance(tokens, Mapping) else None
    return Summary(upto, tuple(covers), text, step, model if isinstance(model, str) else None,
                   counts)


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
