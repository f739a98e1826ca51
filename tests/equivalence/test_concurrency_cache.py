"""Concurrent compiles equal sequential ones; cache entries are bounded by live messages."""

from __future__ import annotations

import gc
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import anyio
import pytest
from lionagi.protocols.messages import Instruction

from lionagi_turns.memo import renders as _cache
from lionagi_turns.memo.switch import no_fast_path

from ._support import Convo, current, outcome, slow_outcome


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def convos(n: int) -> list[Convo]:
    out = []
    for i in range(n):
        convo = Convo(system=f"System {i}." if i % 2 else None)
        for j in range(i):
            convo.branch.msgs.add_message(instruction=f"extra {i}.{j}", context=[{"j": j}])
            convo.branch.msgs.add_message(assistant_response=f"reply {i}.{j}")
        out.append(convo)
    return out


def test_threads_compiling_many_branches_equal_sequential(busy_switching: None) -> None:
    group = convos(6)
    requests = [current(c.branch, f"turn for {i}") for i, c in enumerate(group)]
    expected = [slow_outcome(c.branch, r) for c, r in zip(group, requests, strict=True)]
    _cache.clear()  # every thread starts cold and races to fill the cache
    start = threading.Barrier(12)

    def work(k: int) -> list[tuple[Any, ...]]:
        start.wait()
        i = k % len(group)
        return [outcome(group[i].branch, requests[i]) for _ in range(5)]

    with ThreadPoolExecutor(max_workers=12) as pool:
        results = list(pool.map(work, range(12)))
    for k, got in enumerate(results):
        assert got == [expected[k % len(group)]] * 5


def test_threads_with_and_without_fast_path_agree(busy_switching: None) -> None:
    group = convos(3)
    requests = [current(c.branch) for c in group]

    def work(k: int) -> tuple[Any, ...]:
        i = k % len(group)
        if k % 2:
            with no_fast_path():
                return outcome(group[i].branch, requests[i])
        return outcome(group[i].branch, requests[i])

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(work, range(12)))
    for k, got in enumerate(results):
        assert got == results[k % len(group)]


@pytest.mark.anyio
async def test_asyncio_tasks_with_edits_between_compiles_equal_sequential() -> None:
    group = convos(4)
    requests = [current(c.branch) for c in group]
    seen: dict[int, list[tuple[Any, ...]]] = {i: [] for i in range(len(group))}

    async def task(i: int) -> None:
        convo = group[i]
        for step in range(3):
            seen[i].append(outcome(convo.branch, requests[i]))
            await anyio.sleep(0)
            convo.i2.content.prompt_context[0]["doc"] = f"edit {i}.{step}"
            await anyio.sleep(0)
            seen[i].append(outcome(convo.branch, requests[i]))

    async with anyio.create_task_group() as tg:
        for i in range(len(group)):
            tg.start_soon(task, i)

    # Replay each task's steps sequentially on fresh, identical branches.
    for i in range(len(group)):
        convo = convos(len(group))[i]
        request = current(convo.branch)
        replay = []
        for step in range(3):
            replay.append(slow_outcome(convo.branch, request))
            convo.i2.content.prompt_context[0]["doc"] = f"edit {i}.{step}"
            replay.append(slow_outcome(convo.branch, request))
        assert [s[1] for s in seen[i]] == [r[1] for r in replay]


@pytest.mark.anyio
async def test_no_fast_path_in_one_task_does_not_leak_into_another() -> None:
    states: dict[str, bool] = {}
    from lionagi_turns.memo.switch import fast_path_enabled

    async def off() -> None:
        with no_fast_path():
            await anyio.sleep(0.01)
            states["off"] = fast_path_enabled()

    async def on() -> None:
        await anyio.sleep(0.005)
        states["on"] = fast_path_enabled()

    async with anyio.create_task_group() as tg:
        tg.start_soon(off)
        tg.start_soon(on)
    assert states == {"off": False, "on": True}


def test_entries_die_with_their_messages() -> None:
    # Standalone records: lionagi 0.36 keeps whole Branches alive in an unbounded cache, so a
    # branch's messages are not a reliable way to observe eviction.
    messages = [Instruction(content={"instruction": f"ask {i}", "context": [{"i": i}]})
                for i in range(5)]
    for msg in messages:
        _cache.render_durable(msg)
    slots = {id(m) for m in messages}
    assert slots <= set(_cache._entries)
    del messages, msg
    gc.collect()
    assert not slots & set(_cache._entries)


def test_a_recycled_id_never_matches() -> None:
    msg = Instruction(content={"instruction": "old"})
    _cache.render_durable(msg)
    ref, _, keep, rendered = _cache._entries[id(msg)]
    stranger = Instruction(content={"instruction": "new"})
    # Forge an entry under the stranger's slot that matches its key but not its identity.
    key = _cache._revisions(stranger.content, (), ())
    _cache._entries[id(stranger)] = (ref, key, keep, rendered)
    assert _cache.render_durable(stranger) == "Instruction: new"


def test_warm_compile_renders_only_what_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    convo = Convo()
    request = current(convo.branch)
    expected = outcome(convo.branch, request)
    rendered: list[Any] = []
    real = _cache.render_history

    def counting(content: Any, results: Any = ()) -> Any:
        rendered.append(content)
        return real(content, results)

    monkeypatch.setattr(_cache, "render_history", counting)
    assert outcome(convo.branch, request) == expected
    assert rendered == []  # every historical instruction came from the cache
    convo.i2.content.guidance = "changed"
    outcome(convo.branch, request)
    assert rendered == [convo.i2.content]
