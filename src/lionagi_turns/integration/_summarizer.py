"""Asking tier 3's summarizer (``Compaction.summarize``): an async callable, or a lionagi
``iModel`` through lionagi's own call.

Contract of ``ask(compaction, texts) -> Answer`` (the caller bounds it with
``Compaction.timeout`` and turns any exception into a plain drop):

- An async callable is awaited with ``texts``; its answer is returned as it came (the caller
  checks that it is text), with no model and no usage.
- An ``iModel`` is asked with ``iModel.invoke(messages=[system: Compaction.instructions,
  user: the texts joined by blank lines])``: lionagi's endpoint, headers, retries and rate
  limits, never a request of this package's own. A call that did not complete raises
  ``SummarizerFailed`` naming the model and lionagi's error. The text is lionagi's own reading
  of the response (``AssistantResponse.from_response``); ``model`` is the iModel's model name;
  ``usage`` the input tokens the response reports (cache reads and writes included,
  ``_capture.reported_input``) and its output tokens, each only when reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from lionagi.protocols.generic.event import EventStatus
from lionagi.protocols.messages import AssistantResponse

from lionagi_turns.integration._capture import reported_input, usage_of

if TYPE_CHECKING:
    from lionagi.service.imodel import iModel

    from lionagi_turns.profiles.amendment1._summary import Compaction

__all__ = ("Answer", "SummarizerFailed", "ask")


class SummarizerFailed(RuntimeError):
    """The summarizing iModel's call did not complete (module contract)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """What the summarizer answered: its value (text when it kept its contract), the model
    that wrote it (None: a callable) and the tokens that call reported."""

    value: object
    model: str | None = None
    usage: dict[str, int] = field(default_factory=dict)


async def ask(compaction: Compaction, texts: list[str]) -> Answer:
    """The summarizer's answer over ``texts`` (module contract)."""
    model = compaction.model
    if model is None:
        summarize = compaction.summarize
        assert callable(summarize)
        return Answer(await summarize(texts))
    return await _ask_model(model, compaction.instructions, texts)


async def _ask_model(model: iModel, prompt: str, texts: list[str]) -> Answer:
    messages = [{"role": "system", "content": prompt},
                {"role": "user", "content": "\n\n".join(texts)}]
    call = await model.invoke(messages=messages)
    name = model.model_name or model.endpoint.config.provider
    if call is None or call.status != EventStatus.COMPLETED:
        error = call.execution.error if call is not None else "no call returned"
        raise SummarizerFailed(f"the summarizing model {name!r} failed: {error}")
    response = call.response
    usage = {}
    found = reported_input(response)
    if found is not None:
        usage["input"] = found
    output = usage_of(response).get("output_tokens")
    if output is not None:
        usage["output"] = output
    return Answer(AssistantResponse.from_response(response).response, name, usage)
