"""Bounded and cached together over the real transport: lionagi's Anthropic adapter with
``prompt_caching=True``, HTTP, the fake Messages server, ``install(profile="amendment1",
ceiling=...)``. Every body asserted on is what the server received."""

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
from lionagi_turns.amendment1 import CEILING_KEY, InputCeiling, SectionBudgetRefused
from lionagi_turns.cli._load import parse_branch
from lionagi_turns.core.measure import count_tokens

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
    if sku == "ALL":
        return {"sku": sku, "detail": "every bay, every lot, every count. " * 800}
    return {"sku": sku, "detail": "".join(f"{sku} lot {n}: bay {n % 7}, 40 units. "
                                          for n in range(25))}


class Step(BaseModel):
    finding: str


def step(i: int, sku: str | None = None) -> dict[str, Any]:
    return {"finding": f"f{i}", "action_required": True,
            "action_requests": [{"function": "check_stock",
                                 "arguments": {"sku": sku or f"SKU-{i}"}}]}


def model(server: AnthropicServer) -> Any:
    return iModel(provider="anthropic", model="claude-sonnet-4-5", api_key="x",
                  base_url=server.base_url, requires_tokens=False, allow_local_network=True,
                  prompt_caching=True)


def tokens(body: dict[str, Any]) -> int:
    texts = [b["text"] for b in body.get("system", [])]
    for message in body["messages"]:
        content = message["content"]
        texts += [content] if isinstance(content, str) else [b.get("text", "") for b in content]
    return sum(map(count_tokens, texts))


@pytest.fixture
def uninstalled() -> Iterator[None]:
    lionagi_turns.uninstall()
    yield
    lionagi_turns.uninstall()


async def rounds(branch: Branch, start: int, stop: int) -> None:
    for i in range(start, stop):
        await branch.operate(instruction=f"round {i}", response_format=Step, actions=True)


def run(install: bool, n: int) -> tuple[list[dict[str, Any]], Branch]:
    with AnthropicServer() as server:
        server.script(*(step(i) for i in range(n)))
        if install:
            lionagi_turns.install(profile="amendment1",
                                  ceiling=InputCeiling(CEILING, low_water=LOW_WATER))
        try:
            branch = Branch(system=SYSTEM, chat_model=model(server), tools=[check_stock])
            asyncio.run(rounds(branch, 0, n))
        finally:
            lionagi_turns.uninstall()
        return server.bodies(), branch


def stepped(branch: Branch) -> list[bool]:
    return [m.metadata[CEILING_KEY]["stepped"] for m in branch.messages
            if type(m).__name__ == "Instruction"]


def test_a_long_loop_holds_the_ceiling_keeps_the_cache_layout_and_counts_each_step(
    uninstalled: None,
) -> None:
    plain, _ = run(False, 12)
    bodies, branch = run(True, 12)
    assert tokens(plain[-1]) > 2 * CEILING  # lionagi alone: nothing bounds the history
    assert max(map(tokens, bodies)) <= CEILING
    # the ADR-0127 layout: system text and tool set as the stable blocks, marked
    for body in bodies:
        assert body["system"][0]["text"] == SYSTEM
        assert "check_stock" in body["system"][1]["text"]
        assert "cache_control" in body["system"][-1]  # the stable segment's mark
    steps = stepped(branch)
    assert 2 <= sum(steps) <= 5
    pairs = prefix_pairs(bodies)
    assert [p.ok for p in pairs] == [not s for s in steps[1:]]  # only a drop step breaks it
    account = prompt_cache_account(branch)
    assert account.history_rewrites == sum(steps)
    assert account.segment_changes == 0
    last = bodies[-1]["messages"][0]["content"]
    first_text = last if isinstance(last, str) else last[0]["text"]
    assert re.match(r"\[LIONAGI_SECTION_TRUNCATED section=history left_out=\d+ "
                    r"reason=truncated\]\n\n", first_text)


def test_a_reloaded_branch_continues_the_same_cached_prefix(uninstalled: None) -> None:
    with AnthropicServer() as server:
        server.script(*(step(i) for i in range(14)))
        lionagi_turns.install(profile="amendment1",
                              ceiling=InputCeiling(CEILING, low_water=LOW_WATER))
        branch = Branch(system=SYSTEM, chat_model=model(server), tools=[check_stock])
        asyncio.run(rounds(branch, 0, 12))
        while stepped(branch)[-1]:  # end between two steps
            asyncio.run(rounds(branch, 12, 13))
        saved = json.loads(json.dumps(branch.to_dict(), default=str))
        reloaded = parse_branch(saved).branch
        reloaded.chat_model = model(server)
        reloaded.register_tools([check_stock])
        asyncio.run(rounds(reloaded, 13, 14))
        bodies = server.bodies()
    first = [m.metadata[CEILING_KEY]["first"] for m in reloaded.messages
             if type(m).__name__ == "Instruction"]
    assert first[-1] == first[-2] is not None
    assert prefix_pairs(bodies)[-1].ok
    assert prompt_cache_account(reloaded).calls[-1].history_rewritten is False


def test_a_round_whose_own_result_is_over_the_ceiling_is_refused_before_the_call(
    uninstalled: None,
) -> None:
    with AnthropicServer() as server:
        server.script(step(0), step(1, "ALL"), step(2))
        lionagi_turns.install(profile="amendment1",
                              ceiling=InputCeiling(CEILING, low_water=LOW_WATER))
        branch = Branch(system=SYSTEM, chat_model=model(server), tools=[check_stock])
        asyncio.run(rounds(branch, 0, 2))  # round 1 asked for ALL: its result is huge
        count = len(branch.messages)
        with pytest.raises(SectionBudgetRefused) as info:
            asyncio.run(rounds(branch, 2, 3))
        assert len(server.bodies()) == 2  # no request without the data it asked for
    assert len(branch.messages) == count
    assert "the tool_results section measures" in str(info.value)


def test_on_an_openai_compatible_server_the_same_steps_hold_the_ceiling(
    uninstalled: None, chat_server: Any, openai_model: Any
) -> None:
    from collections import Counter

    from lionagi.protocols.messages import ActionRequest, System

    from lionagi_turns import amendment1

    from .http_server import Reply

    def loop(install: bool) -> tuple[list[dict[str, Any]], Branch]:
        chat_server.clear()
        chat_server.script(*(Reply(content=step(i)) for i in range(16)))
        if install:
            lionagi_turns.install(profile="amendment1",
                                  ceiling=InputCeiling(3000, low_water=1800))
        try:
            branch = Branch(system=SYSTEM, chat_model=openai_model(), tools=[check_stock])
            asyncio.run(rounds(branch, 0, 16))
        finally:
            lionagi_turns.uninstall()
        return [{"messages": r.messages} for r in chat_server.chat_requests()], branch

    plain, _ = loop(False)
    bodies, branch = loop(True)
    assert tokens(plain[-1]) > 2 * 3000  # history renders durably here: smaller rounds
    assert max(map(tokens, bodies)) <= 3000
    assert sum(stepped(branch)) >= 2
    # the next request names every record of the branch once: kept or left out
    ins = branch.msgs.create_instruction(instruction="next")
    compiled = amendment1.compile_chat_request(
        branch, amendment1.TurnRequest(instruction=ins),
        ceiling=InputCeiling(3000, low_water=1800))
    named = Counter(n for b in compiled.bounds for n in (*b.kept, *(e.name for e in b.left_out)))
    left = {e.name for e in compiled.bound("history").left_out}
    for msg in branch.messages:
        if isinstance(msg, System):
            continue
        hidden = isinstance(msg, ActionRequest) and str(msg.id) not in left
        assert named[str(msg.id)] == (0 if hidden else 1), type(msg).__name__


@pytest.mark.anyio
async def test_on_a_cli_model_the_same_steps_hold_the_ceiling(
    uninstalled: None, fake_clis: Any
) -> None:
    """codex never resumes: every prompt (its stdin) is the whole compiled view."""
    answers = [f"answer {i}: " + ", ".join(f"bay {i}.{k} holds {k * 37 % 101} units"
                                            for k in range(30)) for i in range(10)]

    async def loop(install: bool) -> list[int]:
        fake_clis.reset()
        fake_clis.replies(*answers)
        if install:
            lionagi_turns.install(profile="amendment1",
                                  ceiling=InputCeiling(1200, low_water=700))
        try:
            branch = Branch(system="Be brief.", chat_model=iModel(provider="codex",
                                                                  model="gpt-5.3-codex"))
            for i in range(10):
                await branch.communicate(f"question {i}")
        finally:
            lionagi_turns.uninstall()
        return [count_tokens(c["stdin"]) for c in fake_clis.calls("codex")]

    plain = await loop(False)
    bounded = await loop(True)
    assert plain[-1] > 2 * 1200
    assert len(bounded) == 10 and max(bounded) <= 1200
    assert "[LIONAGI_SECTION_TRUNCATED section=history" in fake_clis.calls("codex")[-1]["stdin"]
