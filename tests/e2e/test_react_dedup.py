"""ReAct's caller context once per request (issue 9 item 1), install off vs on in one test.

lionagi 0.36 shows the caller's context once per ReAct request (``_react_context``); under
``install()`` the adapter passes that context to ``compile_chat_request(react_context=...)``.
Sent characters per call must be no more than lionagi's on the same run, over HTTP and on a CLI
model whose later rounds resume the session.
"""

from __future__ import annotations

import json

import pytest

from lionagi_turns.integration import _install as integration

from . import workflows

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

DOC = json.dumps(workflows.CONTEXT_DOC["document"])[1:-1][:200]


async def test_react_over_http_sends_no_more_per_call_than_lionagi(
    chat_server, openai_model
) -> None:
    off = await workflows.http_react_calls(chat_server, openai_model)
    with integration.installed():
        on = await workflows.http_react_calls(chat_server, openai_model)
    off_chars = [workflows.sent_chars(m) for m in off]
    on_chars = [workflows.sent_chars(m) for m in on]
    assert all(a <= b for a, b in zip(on_chars, off_chars, strict=True)), (on_chars, off_chars)
    assert len(workflows.CONTEXT_DOC["document"]) > 5_000
    # The caller's context renders exactly once in every request, on both sides.
    for messages in (*off, *on):
        assert sum(str(m["content"]).count(DOC) for m in messages) == 1


async def test_react_on_a_cli_model_sends_the_context_in_round_one_only(
    fake_claude, claude_model
) -> None:
    off = await workflows.cli_react_prompts(fake_claude, claude_model)
    fake_claude.log.unlink()
    with integration.installed():
        on = await workflows.cli_react_prompts(fake_claude, claude_model)
    assert [c["resume"] for c in on] == [c["resume"] for c in off]
    assert [c["resume"] is not None for c in on] == [False, True, True, True, True]
    off_chars = [len(c["prompt"]) for c in off]
    on_chars = [len(c["prompt"]) for c in on]
    assert all(a <= b for a, b in zip(on_chars, off_chars, strict=True)), (on_chars, off_chars)
    assert [DOC in c["prompt"] for c in on] == [True, False, False, False, False]
    assert [DOC in c["prompt"] for c in off] == [True, False, False, False, False]
