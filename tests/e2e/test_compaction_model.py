"""Tier 3 with a lionagi ``iModel`` as the summarizer (issue 28 item 3: "an async callable, or
a lionagi iModel with a prompt"), over HTTP under ``install()``: at each drop step the
summarizing model is called through lionagi's own ``iModel.invoke`` (a second fake
OpenAI-style server), its scripted answer is recorded in the branch with the model and the
tokens it reported, and it is sent in that call's request; a failing model call falls back to
a plain drop with one warning."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from lionagi import Branch, iModel

import lionagi_turns
from lionagi_turns import TurnsCompatibilityWarning
from lionagi_turns import amendment1 as a1
from lionagi_turns.integration import _install
from lionagi_turns.profiles.amendment1._summary import SUMMARIES_KEY, SUMMARY_PROMPT

from .counting_servers import CountingChatServer
from .http_server import ChatServer, Reply
from .test_compaction_http import PAD, ROUNDS
from .test_compaction_http import _loop as compaction_loop

pytestmark = pytest.mark.e2e

PROMPT = "Keep every FACT line of what you are given."


@pytest.fixture
def uninstalled() -> Iterator[None]:
    try:
        yield
    finally:
        _install.uninstall()


def model_at(server: Any, name: str) -> iModel:
    return iModel(provider="openai", model=name, api_key="x", base_url=server.base_url,
                  requires_tokens=False, allow_local_network=True)


def _loop(
    summarizer: ChatServer | None, prompt: str | None = PROMPT
) -> tuple[Branch, list[Any], list[list[dict[str, Any]]]]:
    """``test_compaction_http``'s loop, summarized by the model ``summarizer`` serves."""
    compaction = None if summarizer is None else a1.Compaction(
        model_at(summarizer, "gpt-4.1-nano"), prompt=prompt)
    return compaction_loop(compaction)


def test_an_imodel_summarizes_each_drop_step_through_its_own_invoke(uninstalled: None) -> None:
    with CountingChatServer(scale=1.0) as summarizer:
        summarizer.script(*(Reply(content=f"RECAP-{k}: the early facts.") for k in range(1, 9)))
        with warnings.catch_warnings():
            warnings.simplefilter("error", TurnsCompatibilityWarning)
            branch, calls, sent = _loop(summarizer)
        asked = [r.body for r in summarizer.chat_requests()]
        counts = summarizer.counts()
    steps = [j for j, c in enumerate(calls) if c.ceiling.get("stepped")]
    summaries = branch.metadata[SUMMARIES_KEY]
    assert len(steps) >= 2 and len(summaries) == len(asked) == len(steps)
    assert all(c.ceiling["used"] <= 900 for c in calls)
    for k, (j, record, body) in enumerate(zip(steps, summaries, asked, strict=True), start=1):
        # the model was asked with the prompt as the system message, the dropped texts after
        assert body["model"] == "gpt-4.1-nano"
        assert body["messages"][0] == {"role": "system", "content": PROMPT}
        texts = body["messages"][1]["content"]
        assert "FACT-" in texts and (k == 1 or texts.startswith(f"RECAP-{k - 1}: "))
        # its answer is recorded with the model, its tokens and the drop step ...
        assert record["text"] == f"RECAP-{k}: the early facts."
        assert record["model"] == "gpt-4.1-nano" and record["step"] == k
        assert record["tokens"]["input"] == counts[k - 1]  # what the server counted
        assert record["tokens"]["output"] == 7 and record["tokens"]["summary"] > 0
        assert record["covers"] and record["upto"] == calls[j].ceiling["first"]
        # ... and sent in the request of the very call whose drop step it summarizes
        assert f"[LIONAGI_SUMMARY covers={len(record['covers'])} step={k}" in str(sent[j])
        assert record["text"] in str(sent[j])
        assert all(record["text"] not in str(p) for p in sent[:j])


def test_an_imodel_without_a_prompt_is_asked_with_the_default_one(uninstalled: None) -> None:
    with CountingChatServer(scale=1.0) as summarizer:
        summarizer.script(*(Reply(content=f"RECAP-{k}") for k in range(1, 9)))
        branch, _, _ = _loop(summarizer, prompt=None)
        asked = [r.body for r in summarizer.chat_requests()]
    assert asked and all(b["messages"][0]["content"] == SUMMARY_PROMPT for b in asked)
    assert branch.metadata[SUMMARIES_KEY][0]["text"] == "RECAP-1"


def test_a_failing_model_call_falls_back_to_a_plain_drop_once_warned(uninstalled: None) -> None:
    with CountingChatServer(scale=1.0, default=Reply(status=400)) as summarizer:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            branch, calls, sent = _loop(summarizer)
        asked = summarizer.chat_requests()
    _, _, plain_sent = _loop(None)
    said = [str(w.message) for w in caught if "summarizer" in str(w.message)]
    assert len(asked) >= 2  # the model was asked at every drop step
    assert len(said) == 1 and "gpt-4.1-nano" in said[0], said
    assert SUMMARIES_KEY not in branch.metadata
    assert sent == plain_sent  # exactly the plain drops
    assert all(c.outcome == "ok" for c in calls)


def test_bad_summarizers_and_prompts_are_refused_before_any_call(uninstalled: None) -> None:
    async def keep(texts: list[str]) -> str:
        return "\n".join(texts)

    with ChatServer() as server:
        model = model_at(server, "gpt-4.1-nano")
        branch = Branch(system="s", chat_model=model)
        before = branch.to_dict()
        with pytest.raises(TypeError, match=r"async callable or a lionagi iModel, got 42"):
            a1.InputCeiling(900, compaction=a1.Compaction(42))  # type: ignore[arg-type]
        with pytest.raises(ValueError, match=r"Compaction\.prompt is for an iModel summarizer, "
                                             r"got 'p' with the callable"):
            a1.Compaction(keep, prompt="p")
        with pytest.raises(ValueError, match=r"Compaction\.prompt must be text .* got ' '"):
            a1.Compaction(model, prompt=" ")
        with pytest.raises(ValueError, match=r"Compaction\.prompt must be text .* got 3"):
            a1.Compaction(model, prompt=3)  # type: ignore[arg-type]
        assert server.requests == [] and branch.to_dict() == before


def test_an_anthropic_imodel_summarizes_through_lionagis_messages_payload(
    uninstalled: None,
) -> None:
    """The summarizer's provider is its own: an Anthropic iModel gets the prompt as the
    Messages ``system`` (lionagi's own payload), and its record's input tokens are the
    server's whole count (uncached, cache reads and writes)."""
    from .anthropic_server import AnthropicServer

    with AnthropicServer() as summarizer:
        summarizer.script(*(f"RECAP-{k}" for k in range(1, 9)))
        model = iModel(provider="anthropic", model="claude-sonnet-4-5", api_key="x",
                       base_url=summarizer.base_url, requires_tokens=False,
                       allow_local_network=True)
        ceiling = a1.InputCeiling(900, low_water=500,
                                  compaction=a1.Compaction(model, prompt=PROMPT))
        with ChatServer(default=Reply(content=f"noted. {PAD}")) as server:
            lionagi_turns.install(profile="amendment1", ceiling=ceiling)
            branch = Branch(system="Keep track of the facts.",
                            chat_model=model_at(server, "gpt-4.1-mini"))
            for i in range(ROUNDS):
                asyncio.run(branch.communicate(f"round {i}: FACT-{i}=v{i}. {PAD}"))
            _install.uninstall()
            sent = server.payloads()
        asked, usages = summarizer.bodies(), summarizer.usages()
    summaries = branch.metadata[SUMMARIES_KEY]
    assert asked and len(summaries) == len(asked)
    system = asked[0]["system"]
    assert PROMPT in (system if isinstance(system, str) else system[0]["text"])
    assert asked[0]["messages"][0]["role"] == "user"
    assert "FACT-0=v0" in str(asked[0]["messages"][0]["content"])
    for record, usage in zip(summaries, usages, strict=True):
        assert record["model"] == "claude-sonnet-4-5"
        assert record["tokens"]["input"] == usage.total_input > 0
    assert summaries[-1]["text"] in str(sent[-1])
