"""Tier 3 under ``install()``: the summarizer runs before the compile, never inside it.

Contract of ``compact_before_call(branch, ins, param, found)``, awaited by the installed
``_apply_context_providers`` after lionagi's own (so with the call's instruction and context
report), only when the installed profile is ``amendment1`` with an ``InputCeiling`` whose
``compaction`` is set:

- The call's request is compiled once ahead (pure: nothing is recorded). When that compile is
  a drop step whose first kept turn has no summary yet, the summarizer is asked
  (``_summarizer.ask``: an async callable awaited, or an ``iModel`` invoked with the
  compaction's prompt; at most ``Compaction.timeout`` seconds) over the newest summary's
  text, when there is one, then the text of each record of the view before the new first kept
  turn that summary does not cover, oldest first.
- Its text is recorded as a durable summary in ``branch.metadata`` (``_summary.SUMMARIES_KEY``:
  ``upto`` the first kept turn, ``covers`` every record before it, ``step`` one more than the
  newest's, ``model`` and ``tokens``: the summary's size and the model call's reported usage)
  when it is text, not empty, at most ``share`` of the ceiling, and the request with it stays
  under the ceiling. The compile that follows then sends it at the truncation point.
- Otherwise (the summarizer raises, its model call fails, it times out, returns something
  else or too much) nothing is recorded, ``TurnsCompatibilityWarning`` says why once per
  branch, and the call proceeds with a plain drop. Nothing is ever removed from the branch.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from uuid import UUID

from lionagi.protocols.messages import System

from lionagi_turns.core.history import select_ids
from lionagi_turns.integration._compile import compile_call
from lionagi_turns.integration._registry import current
from lionagi_turns.integration._summarizer import ask
from lionagi_turns.integration._warnings import warn_once
from lionagi_turns.profiles.amendment1._ceiling import CEILING_KEY, InputCeiling
from lionagi_turns.profiles.amendment1._meter import Meter
from lionagi_turns.profiles.amendment1._summary import (
    SUMMARIES_KEY,
    Compaction,
    Summary,
    recorded,
    summary_block,
)

if TYPE_CHECKING:
    from lionagi.operations.types import ChatParam
    from lionagi.protocols.messages import Instruction
    from lionagi.session.branch import Branch

__all__ = ("FALLBACK", "compact_before_call")

FALLBACK = (
    "lionagi-turns: branch {branch}: the summarizer's answer was not used ({why}); this drop "
    "step leaves the turns out without a summary (the call proceeds)"
)


async def compact_before_call(
    branch: Branch, ins: Instruction | None, param: ChatParam, found: tuple[Any, Any]
) -> None:
    """Summarize the turns a drop step is about to leave out (module contract)."""
    installed = current()
    ceiling = installed.ceiling
    if not isinstance(ceiling, InputCeiling) or ceiling.compaction is None:
        return
    provider_ins, report = found
    instruction = provider_ins or ins
    if instruction is None:
        return
    model = getattr(param, "imodel", None)
    if model is None or param._is_sentinel(model):
        model = getattr(branch, "chat_model", None)
    blocks = report.blocks if report is not None else None
    call = compile_call(branch, instruction, param, context_blocks=blocks, imodel=model)
    record = call.compiled.instruction.metadata.get(CEILING_KEY) or {}
    first = record.get("first")
    if not record.get("stepped") or not isinstance(first, str):
        return
    summaries = recorded(branch)
    if any(s.upto == first for s in summaries):
        return
    await _summarize(branch, ceiling, ceiling.compaction, record, first, summaries)


async def _summarize(
    branch: Branch,
    ceiling: InputCeiling,
    compaction: Compaction,
    record: dict[str, Any],
    first: str,
    summaries: list[Summary],
) -> None:
    previous = summaries[-1] if summaries else None
    before = _before(branch, first)
    done = set(previous.covers) if previous is not None else set()
    texts = [previous.text] if previous is not None else []
    texts += [_text(branch, uid) for uid in before if uid not in done]
    try:
        answer = await asyncio.wait_for(ask(compaction, texts), compaction.timeout)
    except Exception as exc:  # any failure falls back to a plain drop, said once
        why = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        warn_once(f"summary:{branch.id}", FALLBACK.format(branch=branch.id, why=why))
        return
    text = answer.value
    if not isinstance(text, str) or not text.strip():
        why = f"it returned {type(text).__name__}, not text"
        warn_once(f"summary:{branch.id}", FALLBACK.format(branch=branch.id, why=why))
        return
    step = previous.step + 1 if previous is not None else 1
    summary = Summary(first, tuple(before), text.strip(), step)
    meter = Meter(None)
    size = meter.text(summary_block(summary)) + meter.text("\n\n")
    summary = replace(summary, model=answer.model, tokens={"summary": size, **answer.usage})
    calibration = record.get("calibration")
    found = calibration.get("limit") if isinstance(calibration, dict) else None
    limit: int = found if isinstance(found, int) and found > 0 else ceiling.tokens
    reported = record.get("used")
    used: int = reported if isinstance(reported, int) else limit
    if size > compaction.share * ceiling.tokens or used + size > limit:
        why = f"{size:,} tokens, over its share or the room under the ceiling"
        warn_once(f"summary:{branch.id}", FALLBACK.format(branch=branch.id, why=why))
        return
    stored = branch.metadata.get(SUMMARIES_KEY)
    branch.metadata[SUMMARIES_KEY] = [*(stored if isinstance(stored, list) else []),
                                      summary.to_json()]


def _before(branch: Branch, first: str) -> list[str]:
    """The ids of the view's records before the instruction ``first`` (the system excluded)."""
    pile = branch.msgs.messages.collections  # type: ignore[has-type]
    out: list[str] = []
    for uid in select_ids(branch, None):
        if str(uid) == first:
            break
        if not isinstance(pile.get(uid), System):
            out.append(str(uid))
    return out


def _text(branch: Branch, uid: str) -> str:
    msg = branch.msgs.messages.collections.get(UUID(uid))  # type: ignore[has-type]
    rendered = getattr(msg, "rendered", None)
    text = rendered if isinstance(rendered, str) else str(getattr(msg, "content", ""))
    return f"{type(msg).__name__}: {text}"
