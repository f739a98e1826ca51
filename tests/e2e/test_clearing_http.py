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
from lionagi_turns.amendment1 import CEILING_KEY, InputCeiling, ToolResultClearing
from lionagi_turns.core.measure import count_tokens
from lionagi_turns.profiles.amendment1._clearing import UnknownToolWarning

from .anthropic_server import AnthropicServer

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
