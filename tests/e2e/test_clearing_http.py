"""Clearing old tool results under ``install(profile="amendment1", ceiling=InputCeiling(...,
clear_tool_results=...))`` over the real transport: lionagi's Anthropic adapter, HTTP, the fake
Messages server, ``operate(actions=True)`` loops. Every body asserted on is what the server
received."""

import asyncio
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from lionagi import Branch, iModel
from pydantic import BaseModel

import lionagi_turns
from lionagi_turns import prompt_cache_account
from lionagi_turns.amendment1 import (
    CEILING_KEY,
    InputCeiling,
    ToolResultClearing,
    TurnRequest,
    UnknownToolWarning,
)
from lionagi_turns.cli._load import parse_branch
from lionagi_turns.core.measure import count_tokens
from lionagi_turns.profiles.composed import compile_cached_amended

from .anthropic_server import AnthropicServer
from .cache_simulator import prefix_pairs

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("offline_tokens")]

SYSTEM = "You are the dispatcher's assistant. Cite every tool result you use. " * 8
CEILING = 6000
LOW_WATER = 3600


def check_stock(sku: str) -> dict:
    """Look up the stock of one product.

    Args:
        sku: the product's stock-keeping unit
    """
    return {"sku": sku, "detail": "".join(f"{sku} lot {n}: bay {n % 7}, 40 units. "
                                          for n in range(25))}


class Step(BaseModel):
    finding: str


def step(i: int) -> dict[str, Any]:
    return {"finding": f"f{i}", "action_required": True,
            "action_requests": [{"function": "check_stock", "arguments": {"sku": f"SKU-{i}"}}]}


def model(server: AnthropicServer) -> Any:
    return iModel(provider="anthropic", model="claude-sonnet-4-5", api_key="x",
                  base_url=server.base_url, requires_tokens=False, allow_local_network=True)


def texts(body: dict[str, Any]) -> list[str]:
    out = [b["text"] for b in body.get("system", [])]
    for message in body["messages"]:
        content = message["content"]
        out += [content] if isinstance(content, str) else [b.get("text", "") for b in content]
    return out


@pytest.fixture
def uninstalled() -> Iterator[None]:
    lionagi_turns.uninstall()
    yield
    lionagi_turns.uninstall()


def run(ceiling: InputCeiling | None, n: int) -> tuple[list[dict[str, Any]], Branch]:
    with AnthropicServer() as server:
        server.script(*(step(i) for i in range(n)))
        if ceiling is not None:
            lionagi_turns.install(profile="amendment1", ceiling=ceiling)
        try:
            branch = Branch(system=SYSTEM, chat_model=model(server), tools=[check_stock])
            for i in range(n):
                asyncio.run(branch.operate(instruction=f"round {i}", response_format=Step,
                                           actions=True))
        finally:
            lionagi_turns.uninstall()
        return server.bodies(), branch


def test_clearing_keeps_more_turns_than_drops_alone_and_every_body_fits(
    uninstalled: None,
) -> None:
    clearing = InputCeiling(CEILING, low_water=LOW_WATER,
                            clear_tool_results=ToolResultClearing(keep=1))
    dropped, _ = run(InputCeiling(CEILING, low_water=LOW_WATER), 14)
    cleared, branch = run(clearing, 14)
    for body in cleared:
        assert sum(map(count_tokens, texts(body))) <= CEILING
    last = "\n".join(texts(cleared[-1]))
    assert "[LIONAGI_TOOL_RESULT_CLEARED tool=check_stock id=" in last
    assert "section=tool_results left_out=1 reason=cleared" in last

    def rounds_sent(body: dict[str, Any]) -> int:
        return len(set(re.findall(r"round \d+", "\n".join(texts(body)))))

    assert rounds_sent(cleared[-1]) > rounds_sent(dropped[-1])
    # the current round's result is sent whole, in the last message
    assert "SKU-12 lot 24: bay 3, 40 units." in json.dumps(cleared[-1]["messages"][-1])
    records = [m.metadata[CEILING_KEY] for m in branch.messages
               if type(m).__name__ == "Instruction"]
    assert any(r["cleared"] for r in records)


def test_an_unknown_tool_to_exclude_warns_naming_the_registered_tools(uninstalled: None) -> None:
    clearing = ToolResultClearing(keep=1, exclude_tools=("check_stok",))
    with pytest.warns(UnknownToolWarning, match=r"'check_stok'.*registered: check_stock"):
        bodies, _ = run(InputCeiling(CEILING, low_water=LOW_WATER, clear_tool_results=clearing),
                        2)
    assert len(bodies) == 2  # the calls proceed


# ------------------------------------------------------------------ the prompt-cache layout


def cached_model(server: AnthropicServer) -> Any:
    return iModel(provider="anthropic", model="claude-sonnet-4-5", api_key="x",
                  base_url=server.base_url, requires_tokens=False, allow_local_network=True,
                  prompt_caching=True)


def cached_round(server: AnthropicServer, branch: Branch, i: int) -> None:
    server.script(step(i))
    asyncio.run(branch.operate(instruction=f"round {i}", response_format=Step, actions=True))


def ceiling_records(branch: Branch) -> list[dict[str, Any]]:
    return [m.metadata[CEILING_KEY] for m in branch.messages if type(m).__name__ == "Instruction"]


def test_in_the_prompt_cache_layout_a_clearing_step_is_one_counted_rewrite(
    uninstalled: None,
) -> None:
    ceiling = InputCeiling(CEILING, low_water=LOW_WATER,
                           clear_tool_results=ToolResultClearing(keep=1))
    with AnthropicServer() as server:
        lionagi_turns.install(profile="amendment1", ceiling=ceiling)
        try:
            branch = Branch(system=SYSTEM, chat_model=cached_model(server), tools=[check_stock])
            for i in range(14):
                cached_round(server, branch, i)
            bodies = server.bodies()
            saved = json.loads(json.dumps(branch.to_dict(), default=str))
            reloaded = parse_branch(saved).branch
            reloaded.chat_model = cached_model(server)
            reloaded.register_tools([check_stock])
            cached_round(server, branch, 14)
            cached_round(server, reloaded, 14)
            here, there = server.bodies()[-2:]
        finally:
            lionagi_turns.uninstall()
    records = ceiling_records(branch)[:14]
    steps = [r["stepped"] for r in records]
    assert max(sum(map(count_tokens, texts(b))) for b in bodies) <= CEILING
    assert any(r["cleared"] for r in records) and sum(steps) >= 2
    assert [p.ok for p in prefix_pairs(bodies)] == [not s for s in steps[1:]]
    account = prompt_cache_account(branch)
    assert account.history_rewrites == sum(ceiling_records(branch)[i]["stepped"]
                                           for i in range(15))
    assert account.segment_changes == 0
    # nothing the compile read was passed over: a cleared turn is sent in its durable view
    ins = branch.msgs.create_instruction(instruction="next")
    _, _, result = compile_cached_amended(branch, TurnRequest(instruction=ins),
                                          list(branch.acts.schema_list), ceiling=ceiling)
    assert result.ignored == ()
    # a reloaded branch continues identically: the same body, the same cleared set
    assert there == here
    assert ceiling_records(reloaded)[-1] == ceiling_records(branch)[-1]


def test_the_capture_record_lists_the_cleared_results(uninstalled: None) -> None:
    ceiling = InputCeiling(CEILING, low_water=LOW_WATER,
                           clear_tool_results=ToolResultClearing(keep=1))
    with AnthropicServer() as server:
        server.script(*(step(i) for i in range(14)))
        lionagi_turns.install(profile="amendment1", ceiling=ceiling)
        try:
            branch = Branch(system=SYSTEM, chat_model=model(server), tools=[check_stock])
            with lionagi_turns.capture() as calls:
                for i in range(14):
                    asyncio.run(branch.operate(instruction=f"round {i}", response_format=Step,
                                               actions=True))
        finally:
            lionagi_turns.uninstall()
        bodies = server.bodies()
    assert [c.payload for c in calls] == bodies
    seen = 0
    for call in calls:
        results = next(b for b in call.compiled.bounds if b.section == "tool_results")
        cleared = [e.name for e in results.left_out if e.reason == "cleared"]
        assert cleared == call.ceiling["cleared"]
        seen += len(cleared)
    assert seen


@pytest.mark.parametrize("clear", [None, ToolResultClearing(keep=1)], ids=["drops", "clearing"])
def test_the_ceiling_memory_sends_what_the_fast_path_off_sends(
    uninstalled: None, clear: ToolResultClearing | None
) -> None:
    """The same installed operate loop over HTTP with the compile memory on (a next turn
    weighs only its new whole turns) and with the fast path off (every turn weighed again):
    the server receives the same bodies byte for byte, across drop and clearing steps, once
    each run's record ids are numbered in the order they first appear (the two runs make
    their own ids)."""
    ceiling = InputCeiling(CEILING, low_water=LOW_WATER, clear_tool_results=clear)
    kept, branch = run(ceiling, 24)
    with lionagi_turns.no_fast_path():
        walked, _ = run(ceiling, 24)
    assert _numbered_ids(kept) == _numbered_ids(walked)
    records = [m.metadata[CEILING_KEY] for m in branch.messages
               if type(m).__name__ == "Instruction"]
    assert sum(r["stepped"] for r in records) >= 2  # the loop reached its steps
    if clear is not None:
        assert any(r["cleared"] for r in records)


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _numbered_ids(bodies: list[dict[str, Any]]) -> list[str]:
    seen: dict[str, str] = {}

    def number(match: re.Match[str]) -> str:
        return seen.setdefault(match.group(0), f"<id {len(seen)}>")

    return [_UUID.sub(number, json.dumps(b, sort_keys=True)) for b in bodies]
