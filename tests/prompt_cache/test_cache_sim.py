"""The cache simulator follows Anthropic's prefix rules (ADR-0127 Context), rule by rule."""

from __future__ import annotations

import pytest
from e2e.cache_simulator import (  # type: ignore[import-not-found]
    CacheRuleError,
    CacheSimulator,
    Prices,
    Usage,
    prefix_pairs,
)

H = {"type": "ephemeral", "ttl": "1h"}
M = {"type": "ephemeral"}


def text(t: str, mark: dict | None = None) -> dict:
    block = {"type": "text", "text": t}
    if mark is not None:
        block["cache_control"] = mark
    return block


def body(system: list[dict], *messages: str, tail: dict | None = M, marks: dict | None = None):
    """Messages alternate user/assistant; the last carries ``tail``; ``marks`` {index: mark}."""
    out = []
    for i, m in enumerate(messages):
        role = "user" if i % 2 == 0 else "assistant"
        mark = (marks or {}).get(i)
        if i == len(messages) - 1 and tail is not None:
            mark = tail
        out.append({"role": role, "content": [text(m, mark)] if mark else m})
    return {"system": system, "messages": out}


def test_first_request_writes_each_segment_at_its_marks_lifetime() -> None:
    sim = CacheSimulator()
    usage = sim.request(body([text("S" * 100, H)], "u" * 10, "a" * 5, "v" * 7), now=0)
    assert usage == Usage(uncached=0, cache_read=0, write_5m=22, write_1h=100)


def test_unmarked_tail_is_uncached_and_a_repeat_reads_the_prefix() -> None:
    sim = CacheSimulator()
    first = body([text("S" * 100, H)], "u" * 10, tail=None)
    assert sim.request(first, 0) == Usage(10, 0, 0, 100)
    assert sim.request(first, 1) == Usage(10, 100, 0, 0)


def test_next_request_reads_the_previous_tail_and_writes_only_what_it_added() -> None:
    sim = CacheSimulator()
    sim.request(body([text("S" * 100, H)], "u" * 10), 0)
    usage = sim.request(body([text("S" * 100, H)], "u" * 10, "a" * 5, "v" * 7), 10)
    assert usage == Usage(uncached=0, cache_read=110, write_5m=12, write_1h=0)


def test_a_changed_early_message_misses_everything_after_it() -> None:
    sim = CacheSimulator()
    sim.request(body([text("S" * 100, H)], "u" * 10, "a" * 5, "v" * 7), 0)
    usage = sim.request(body([text("S" * 100, H)], "X" * 10, "a" * 5, "v" * 7), 1)
    assert usage == Usage(uncached=0, cache_read=100, write_5m=22, write_1h=0)


def test_lookback_finds_a_write_at_most_twenty_positions_back() -> None:
    history = [f"m{i}" for i in range(40)]
    for added, hit in ((19, True), (20, False)):
        sim = CacheSimulator()
        sim.request(body([], *history[:1]), 0)
        usage = sim.request(body([], *history[: 1 + added]), 1)
        assert (usage.cache_read == 2) is hit, added


def test_a_lookback_mark_on_the_previous_end_restores_the_read() -> None:
    history = [f"m{i}" for i in range(40)]
    sim = CacheSimulator()
    sim.request(body([], *history[:1]), 0)
    usage = sim.request(body([], *history[:31], marks={0: M}), 1)
    assert usage.cache_read == 2


def test_five_minute_entries_expire_and_one_hour_entries_outlive_them() -> None:
    sim = CacheSimulator()
    request = body([text("S" * 100, H)], "u" * 10)
    sim.request(request, 0)
    assert sim.request(request, 299).cache_read == 110  # hit renews the 5-minute entry
    usage = sim.request(request, 299 + 301)
    assert usage == Usage(uncached=0, cache_read=100, write_5m=10, write_1h=0)
    assert sim.request(request, 600 + 3601).write_1h == 100


def test_minimum_cacheable_length_caches_nothing_below_it() -> None:
    sim = CacheSimulator(min_cacheable=500)
    request = body([text("S" * 100, H)], "u" * 10)
    assert sim.request(request, 0) == Usage(110, 0, 0, 0)
    assert sim.request(request, 1) == Usage(110, 0, 0, 0)


def test_more_than_four_marks_is_refused() -> None:
    with pytest.raises(CacheRuleError, match="at most 4"):
        CacheSimulator().request(body([], *"abcde", marks=dict.fromkeys(range(5), M)), 0)


def test_a_one_hour_mark_after_a_five_minute_mark_is_refused() -> None:
    with pytest.raises(CacheRuleError, match="one-hour"):
        CacheSimulator().request(body([text("a", M), text("b", H)], "u"), 0)


def test_cost_uses_the_adr_multipliers() -> None:
    usage = Usage(uncached=10, cache_read=100, write_5m=4, write_1h=2)
    assert usage.cost() == pytest.approx(10 + 10 + 5 + 4)
    assert usage.cost(Prices(read=0.05)) == pytest.approx(10 + 5 + 5 + 4)
    assert usage.anthropic()["cache_creation"] == {
        "ephemeral_5m_input_tokens": 4, "ephemeral_1h_input_tokens": 2}


def test_prefix_pairs_ignore_marks_and_string_versus_block_content() -> None:
    a = body([text("S", H)], "u")
    b = body([text("S")], "u", "a", "v")
    c = body([text("T")], "u", "a", "v")
    pairs = prefix_pairs([a, b, c])
    assert [(p.system_equal, p.messages_prefix) for p in pairs] == [(True, True), (False, True)]
