"""Structured output under load (issue 9 item 4): the response model reaches lionagi's parser
for every concurrent call, install off and on, over the real local HTTP transport."""

from __future__ import annotations

import gc

import anyio
import pytest
from lionagi import Branch
from pydantic import BaseModel

from lionagi_turns.integration import _install as integration

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

CALLS = 1_000
#: lionagi's own behaviour (install off) is established on fewer calls: it has no hand-over
#: that load could break, and the suite stays fast.
BASELINE_CALLS = 100


class Verdict(BaseModel):
    label: str
    score: int


async def _structured_calls(model_factory, n: int) -> list[object]:
    model = model_factory()
    results: list[object] = [None] * n

    async def one(i: int) -> None:
        branch = Branch(system="Classify.", chat_model=model)
        results[i] = await branch.communicate(f"item {i}", response_format=Verdict)

    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(one, i)
    return results


@pytest.mark.slow
async def test_a_thousand_concurrent_structured_calls_all_return_the_model(
    chat_server, openai_model
) -> None:
    chat_server.default = chat_server.default.__class__(content={"label": "ok", "score": 1})

    off = await _structured_calls(openai_model, BASELINE_CALLS)
    with integration.installed():
        on = await _structured_calls(openai_model, CALLS)

    # lionagi parses into the Structure's response model (a Verdict subclass), not bare Verdict.
    (response_model,) = {type(r) for r in off}
    assert issubclass(response_model, Verdict) and response_model is not Verdict
    kinds = [type(r) for r in on]
    assert kinds.count(response_model) == CALLS, {k.__name__: kinds.count(k) for k in set(kinds)}
    assert all(r.model_dump() == {"label": "ok", "score": 1} for r in on)
    assert len(chat_server.chat_requests()) == BASELINE_CALLS + CALLS


async def test_the_handover_is_released_with_the_recorded_instruction(
    chat_server, openai_model
) -> None:
    chat_server.default = chat_server.default.__class__(content={"label": "ok", "score": 1})
    with integration.installed():
        branch = Branch(system="Classify.", chat_model=openai_model())
        out = await branch.communicate("x", response_format=Verdict)
        assert isinstance(out, Verdict) and type(out) is not Verdict
        recorded = branch.messages[-2]
        key = id(recorded.content)
        assert integration._structures.owner(recorded.content) is recorded
        branch.msgs.clear_messages()
        del recorded
        # lionagi_turns.last_request(branch) holds the branch's last call, its compiled
        # instruction included, until the next call replaces it.
        await branch.communicate("y", response_format=Verdict)
        gc.collect()
        assert key not in integration._structures._entries
