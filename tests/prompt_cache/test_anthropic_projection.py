"""ADR-0127 D5: the Anthropic projection's marks, on lionagi's own adapter output."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import pytest
from lionagi import iModel
from lionagi.providers.anthropic.messages import AnthropicMessagesEndpoint

import lionagi_turns
from lionagi_turns.integration._anthropic import (
    LOOKBACK,
    SegmentedBlocks,
    create_payload,
    place_segment_marks,
)

H = {"type": "ephemeral", "ttl": "1h"}
M = {"type": "ephemeral"}


def endpoint(caching: bool = True) -> AnthropicMessagesEndpoint:
    model = iModel(provider="anthropic", model="claude-sonnet-4-5", api_key="x",
                   requires_tokens=False, prompt_caching=caching)
    return model.endpoint


def chat(n: int) -> list[dict]:
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(n)]


def marks(payload: dict) -> list[tuple[str, int, dict]]:
    out = [("system", i, b["cache_control"]) for i, b in enumerate(payload.get("system") or ())
           if "cache_control" in b]
    for i, m in enumerate(payload["messages"]):
        if isinstance(m["content"], list):
            out += [("message", i, b["cache_control"]) for b in m["content"]
                    if "cache_control" in b]
    return out


@pytest.fixture
def not_installed() -> Iterator[None]:
    lionagi_turns.uninstall()
    yield
    lionagi_turns.uninstall()


def test_plain_system_blocks_go_to_lionagis_adapter_unchanged(not_installed: None) -> None:
    ep = endpoint()
    request = {"messages": chat(3), "system_blocks": ["S", "T"], "model": "claude-sonnet-4-5"}
    assert create_payload(ep, copy.deepcopy(request)) == ep.create_payload(copy.deepcopy(request))


def test_an_endpoint_that_does_not_place_the_cache_is_unchanged(not_installed: None) -> None:
    ep = endpoint(caching=False)
    request = {"messages": chat(3), "model": "claude-sonnet-4-5", "cache_control": True,
               "system_blocks": SegmentedBlocks(["S"], ["C"], None)}
    assert create_payload(ep, dict(request)) == ep.create_payload(dict(request))


def test_segment_marks_one_hour_stable_five_minutes_conversation_and_tail(
    not_installed: None,
) -> None:
    request = {"messages": chat(3), "model": "claude-sonnet-4-5",
               "system_blocks": SegmentedBlocks(["S", "T"], ["C"], 0)}
    before = copy.deepcopy(request)
    payload, _ = create_payload(endpoint(), request)
    assert request == before
    assert [b["text"] for b in payload["system"]] == ["S", "T", "C"]
    assert marks(payload) == [("system", 1, H), ("system", 2, M), ("message", 2, M)]
    assert "system_blocks" not in payload and "prompt_caching" not in payload


def test_no_conversation_block_no_conversation_mark(not_installed: None) -> None:
    payload, _ = create_payload(endpoint(), {"messages": chat(1), "model": "claude-sonnet-4-5",
                                             "system_blocks": SegmentedBlocks(["S"], [], None)})
    assert marks(payload) == [("system", 0, H), ("message", 0, M)]


@pytest.mark.parametrize("added", [LOOKBACK - 1, LOOKBACK])
def test_lookback_mark_only_when_the_previous_end_leaves_the_tail_marks_window(
    added: int,
) -> None:
    payload = {"system": [{"type": "text", "text": "S"}], "messages": chat(1 + added)}
    place_segment_marks(payload, stable_count=1, previous_end=0)
    expected = [("system", 0, H)]
    if added >= LOOKBACK:
        expected.append(("message", 0, M))
    assert marks(payload) == [*expected, ("message", added, M)]


def test_at_most_four_marks_the_tail_before_the_lookback() -> None:
    payload = {"system": [{"type": "text", "text": "S"}, {"type": "text", "text": "C"}],
               "tools": [{"name": "t", "input_schema": {}, "cache_control": H}],
               "messages": chat(30)}
    place_segment_marks(payload, stable_count=1, previous_end=0)
    assert marks(payload) == [("system", 0, H), ("system", 1, M), ("message", 29, M)]


def test_no_one_hour_mark_after_a_callers_five_minute_tool_mark() -> None:
    payload = {"system": [{"type": "text", "text": "S"}],
               "tools": [{"name": "t", "input_schema": {}, "cache_control": M}],
               "messages": chat(3)}
    place_segment_marks(payload, stable_count=1, previous_end=None)
    assert marks(payload) == [("message", 2, M)]


def test_install_rebinds_the_adapter_and_uninstall_restores_it(not_installed: None) -> None:
    original = AnthropicMessagesEndpoint.create_payload
    with lionagi_turns.installed():
        assert AnthropicMessagesEndpoint.create_payload is create_payload
    assert AnthropicMessagesEndpoint.create_payload is original
