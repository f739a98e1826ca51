"""ADR-0127 over the real transport: lionagi's Anthropic adapter, HTTP, the fake Messages server.

Every body asserted on is what the server received. "Parity" tests run the same scripted
conversation with install() off (lionagi 0.36's own ADR-0127 parts) and on, and compare the
bodies; the D7 tests are the six acceptance tests of ADR-0127 D7, in its order.
"""

import asyncio
import itertools
import json
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from lionagi import Branch, iModel
from pydantic import BaseModel

import lionagi_turns
from lionagi_turns import prompt_cache_account
from lionagi_turns.cli._load import parse_branch
from lionagi_turns.integration._install import seed_profile_forced
from lionagi_turns.profiles.prompt_cache._compile import RECORD_KEY

from .anthropic_server import AnthropicServer
from .cache_simulator import normalized_messages, prefix_pairs

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("offline_tokens")]

SYSTEM = "You are the dispatcher's assistant. Cite every tool result you use. " * 8


def check_stock(sku: str) -> dict:
    """Look up the stock of one product.

    Args:
        sku: the product's stock-keeping unit
    """
    return {"sku": sku, "units": 44}


def find_order(order_id: str) -> dict:
    """Find a customer order by its number.

    Args:
        order_id: the order number
    """
    return {"order": order_id, "status": "packed"}


def plan_route(origin: str, destination: str) -> dict:
    """Plan a route between two depots.

    Args:
        origin: the starting depot
        destination: the final depot
    """
    return {"route": [origin, destination], "hours": 3}


TOOLS = [check_stock, find_order, plan_route]


class Step(BaseModel):
    finding: str


class Summary(BaseModel):
    summary: str


class FirstTurnOnly:
    """A context provider that answers only while the branch has no response yet."""

    async def provide(self, branch: Any, instruction: Any) -> str | None:
        if any(type(m).__name__ == "AssistantResponse" for m in branch.messages):
            return None
        return "Depots: NORTH, SOUTH. Fleet: 12 trucks."


class EveryTurn:
    def __init__(self) -> None:
        self.n = 0

    async def provide(self, branch: Any, instruction: Any) -> str:
        self.n += 1
        return f"news #{self.n}"


def anthropic(server: AnthropicServer, *, caching: bool = True, unfiltered: bool = False,
              **kw: Any) -> Any:
    model = iModel(provider="anthropic", model="claude-sonnet-4-5", api_key="x",
                   base_url=server.base_url, requires_tokens=False, allow_local_network=True,
                   prompt_caching=caching, **kw)
    if unfiltered:  # as an iModel restored from a serialized config: no request-option filter
        model.endpoint.config.request_options = None
    return model


@pytest.fixture
def uninstalled() -> Iterator[None]:
    lionagi_turns.uninstall()
    yield
    lionagi_turns.uninstall()


def bodies_of(install: bool, drive: Callable[[AnthropicServer], Awaitable[Any]],
              *, seed: bool = False) -> list[dict[str, Any]]:
    with AnthropicServer() as server:
        if install:
            lionagi_turns.install()
        try:
            if seed:
                with seed_profile_forced():
                    asyncio.run(drive(server))
            else:
                asyncio.run(drive(server))
        finally:
            lionagi_turns.uninstall()
        return server.bodies()


def step(i: int, call: tuple[str, dict] | None) -> dict[str, Any]:
    return {"finding": f"f{i}", "action_required": call is not None,
            "action_requests": [{"function": call[0], "arguments": call[1]}] if call else []}


CALLS = [("check_stock", {"sku": "A1"}), ("find_order", {"order_id": "#7"}),
         ("plan_route", {"origin": "NORTH", "destination": "SOUTH"})]


async def communicate_x3(server: AnthropicServer) -> Branch:
    branch = Branch(system=SYSTEM, chat_model=anthropic(server), tools=TOOLS)
    for i in range(3):
        await branch.communicate(f"question {i}")
    return branch


async def operate_x4(server: AnthropicServer) -> Branch:
    server.script(*(step(i, c) for i, c in enumerate(CALLS)), step(3, None))
    branch = Branch(system=SYSTEM, chat_model=anthropic(server), tools=TOOLS)
    for i in range(4):
        await branch.operate(instruction=f"round {i}", response_format=Step, actions=True)
    return branch


def react_script(server: AnthropicServer) -> None:
    server.script(
        {"analysis": "need stock", "extension_needed": True, "action_required": True,
         "action_requests": [{"function": "check_stock", "arguments": {"sku": "A1"}}]},
        {"analysis": "done", "extension_needed": False, "action_required": False,
         "action_requests": []},
        {"summary": "44 units"},
    )


async def react(server: AnthropicServer) -> Branch:
    react_script(server)
    branch = Branch(system=SYSTEM, chat_model=anthropic(server), tools=TOOLS)
    await branch.ReAct({"instruction": "How many A1 are in stock?"}, response_format=Summary,
                       extension_allowed=True, max_extensions=2)
    return branch


async def react_with_context(server: AnthropicServer) -> Branch:
    react_script(server)
    branch = Branch(system=SYSTEM, chat_model=anthropic(server), tools=TOOLS)
    await branch.ReAct({"instruction": "How many A1 are in stock?",
                        "context": {"warehouse": "NORTH", "unit": "pallets"}},
                       response_format=Summary, extension_allowed=True, max_extensions=2)
    return branch


# ------------------------------------------------------------------------------------ parity


@pytest.mark.parametrize("drive", [communicate_x3, operate_x4, react, react_with_context],
                         ids=["communicate", "operate_actions", "ReAct", "ReAct_context"])
def test_parity_with_lionagi_bodies_are_byte_identical_without_context_providers(
    uninstalled: None, drive: Callable[[AnthropicServer], Awaitable[Any]]
) -> None:
    off = bodies_of(False, drive)
    on = bodies_of(True, drive)
    assert len(off) == len(on) >= 3
    assert [json.dumps(b, sort_keys=True) for b in on] == [
        json.dumps(b, sort_keys=True) for b in off]
    # lionagi's shipped parts, present in both: system text and tool section as system
    # blocks, a one-hour mark on the stable segment and a five-minute mark on the tail.
    last = on[-1]
    assert next(b["text"] for b in last["system"]) == SYSTEM
    assert last["system"][1]["text"].startswith("Tools:\n")
    assert last["system"][-1]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert last["messages"][-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


@pytest.mark.filterwarnings(
    # The seed profile is forced on purpose (the "before" figures); that it warns is tested in
    # tests/integration/test_chat_paths.py.
    "ignore::lionagi_turns.TurnsCompatibilityWarning"
)
def test_before_this_profile_install_folded_the_system_and_lost_the_tool_section(
    uninstalled: None,
) -> None:
    seed = bodies_of(True, operate_x4, seed=True)
    assert all("system" not in b for b in seed)
    assert "Cite every tool result" in json.dumps(seed[0]["messages"][0])
    assert not all(p.ok for p in prefix_pairs(seed))


# ---------------------------------------------------------------------- ADR-0127 D7, 1 to 6


async def with_first_turn_provider(server: AnthropicServer) -> Branch:
    server.script(*(step(i, c) for i, c in enumerate(CALLS)), step(3, None))
    branch = Branch(system=SYSTEM, chat_model=anthropic(server), tools=TOOLS)
    branch.providers.register(FirstTurnOnly(), name="catalog")
    for i in range(4):
        await branch.operate(instruction=f"round {i}", response_format=Step, actions=True)
    return branch


def test_d7_1_rounds_keep_a_strict_prefix_tools_once_no_system_in_user_context_every_request(
    uninstalled: None,
) -> None:
    bodies = bodies_of(True, with_first_turn_provider)
    assert len(bodies) == 4
    for a, b in itertools.pairwise(bodies):
        ma, mb = normalized_messages(a), normalized_messages(b)
        assert len(ma) < len(mb) and mb[: len(ma)] == ma
    for body in bodies:
        system_texts = [b["text"] for b in body["system"]]
        assert sum(t.count("Tools:\n") for t in system_texts) == 1
        assert all("Tools:\n- type: function" not in json.dumps(m) for m in body["messages"])
        users = [json.dumps(m) for m in body["messages"] if m["role"] == "user"]
        assert all("dispatcher's assistant" not in u for u in users)
        assert any("Depots: NORTH, SOUTH" in t for t in system_texts)


def test_d7_2_the_last_payload_has_stable_and_conversation_blocks_and_ordered_marks(
    uninstalled: None,
) -> None:
    last = bodies_of(True, with_first_turn_provider)[-1]
    texts = [b["text"] for b in last["system"]]
    assert texts[0] == SYSTEM and texts[1].startswith("Tools:\n")
    assert texts[2].startswith("LIONAGI_CONTEXT_BLOCKS_JSON\n")
    marks = [b["cache_control"] for b in last["system"] if "cache_control" in b]
    for m in last["messages"]:
        if isinstance(m["content"], list):
            marks += [b["cache_control"] for b in m["content"] if "cache_control" in b]
    assert len(marks) <= 4
    assert marks == [{"type": "ephemeral", "ttl": "1h"}, {"type": "ephemeral"},
                     {"type": "ephemeral"}]
    assert last["system"][1]["cache_control"]["ttl"] == "1h"


@pytest.mark.parametrize("unfiltered", [False, True], ids=["filtered", "request_options_None"])
def test_d7_3_option_off_the_request_is_todays_on_both_paths(
    uninstalled: None, unfiltered: bool
) -> None:
    async def drive(server: AnthropicServer) -> None:
        branch = Branch(system=SYSTEM, tools=TOOLS,
                        chat_model=anthropic(server, caching=False, unfiltered=unfiltered))
        for i in range(2):
            await branch.communicate(f"q{i}", cache_control=True)

    on = bodies_of(True, drive)
    seed = bodies_of(True, drive, seed=True)
    assert on == seed  # the default profile, byte for byte: nothing new runs with the option off
    assert all("system" not in b for b in on)  # folded, as ADR-0007 D2 step 4 says
    last = on[-1]["messages"][-1]["content"]
    if unfiltered:  # lionagi's adapter's own cache_control mark, where it fires today
        assert last[-1]["cache_control"] == {"type": "ephemeral"}
    else:
        assert isinstance(last, str)


def test_d7_4_react_final_turn_changes_the_format_but_never_the_tool_section(
    uninstalled: None,
) -> None:
    bodies = bodies_of(True, react)
    assert len(bodies) == 3
    sections = [[b["text"] for b in body["system"]] for body in bodies]
    assert sections[0] == sections[1] == sections[2]
    assert "Summary" in json.dumps(bodies[-1]["messages"][-1])
    assert all(p.ok for p in prefix_pairs(bodies))


@pytest.mark.parametrize("unfiltered", [False, True], ids=["filtered", "request_options_None"])
def test_d7_5_and_6_the_option_key_is_absent_from_the_body(
    uninstalled: None, unfiltered: bool
) -> None:
    async def drive(server: AnthropicServer) -> None:
        branch = Branch(system=SYSTEM, chat_model=anthropic(server, unfiltered=unfiltered))
        await branch.communicate("q", prompt_caching=True)

    (body,) = bodies_of(True, drive)
    assert "prompt_caching" not in json.dumps(body)
    assert "system_blocks" not in body
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}


# ------------------------------------------------------------------- beyond lionagi 0.36


def test_a_first_turn_block_stays_in_the_conversation_where_lionagi_drops_it(
    uninstalled: None,
) -> None:
    off = bodies_of(False, with_first_turn_provider)
    on = bodies_of(True, with_first_turn_provider)
    assert not prefix_pairs(off)[0].messages_prefix  # ADR-0127 P3 in lionagi 0.36
    assert all(p.ok for p in prefix_pairs(on))


def test_a_block_returned_on_a_later_call_goes_into_that_turn(uninstalled: None) -> None:
    async def drive(server: AnthropicServer) -> None:
        branch = Branch(system=SYSTEM, chat_model=anthropic(server))
        branch.providers.register(EveryTurn(), name="news")
        for i in range(3):
            await branch.communicate(f"q{i}")

    bodies = bodies_of(True, drive)
    conversation = [b["system"][-1]["text"] for b in bodies]
    assert len(set(conversation)) == 1 and "news #1" in conversation[0]
    assert "news #2" in json.dumps(bodies[1]["messages"][-1])
    assert "news #3" in json.dumps(bodies[2]["messages"][-1])
    assert all(p.ok for p in prefix_pairs(bodies))


def test_a_reloaded_branch_continues_the_same_cached_prefix(uninstalled: None) -> None:
    saved: dict[str, Any] = {}

    async def drive(server: AnthropicServer) -> None:
        server.script(step(0, CALLS[0]), step(1, None), step(2, None))
        branch = Branch(system=SYSTEM, chat_model=anthropic(server), tools=TOOLS)
        branch.providers.register(FirstTurnOnly(), name="catalog")
        await branch.operate(instruction="round 0", response_format=Step, actions=True)
        await branch.operate(instruction="round 1", response_format=Step, actions=True)
        saved["dict"] = json.loads(json.dumps(branch.to_dict(), default=str))
        # lionagi 0.36's from_dict drops msgs.system; the CLI's loader restores it.
        reloaded = parse_branch(saved["dict"]).branch
        reloaded.chat_model = anthropic(server)
        reloaded.register_tools(TOOLS)
        await reloaded.operate(instruction="round 2", response_format=Step, actions=True)
        saved["branch"] = reloaded

    bodies = bodies_of(True, drive)
    assert all(p.ok for p in prefix_pairs(bodies))
    assert "ResponseSchema" in json.dumps(bodies[2]["messages"][0])  # history kept its sections
    account = prompt_cache_account(saved["branch"])
    calls = account.calls
    assert len(calls) == 3
    for before, after in itertools.pairwise(calls):  # each reads all of the previous
        assert after.cache_read == (
            before.uncached_input + before.cache_read + before.cache_write_total)
    assert account.segment_changes == account.history_rewrites == 0
    # Plain lionagi loads the same dict; the record is metadata, never a call option.
    plain = Branch.from_dict(saved["dict"])
    instructions = [m for m in plain.messages if type(m).__name__ == "Instruction"]
    assert all(RECORD_KEY in m.metadata for m in instructions)
    assert all(not m.content.tool_schemas and m.content.response_format is None
               for m in instructions)


def reload_session(reload: bool) -> Callable[[AnthropicServer], Awaitable[Any]]:
    """Two ``operate`` rounds with tools and a response format, then (``reload``) a save with
    lionagi's own ``Branch.to_dict()`` and a reload with its ``Branch.from_dict()`` (the tools
    registered again: a saved branch holds no functions), then one more ``communicate``."""

    async def drive(server: AnthropicServer) -> None:
        server.script(step(0, CALLS[0]), step(1, None))
        branch = Branch(system=SYSTEM, chat_model=anthropic(server), tools=TOOLS)
        await branch.operate(instruction="round 0", response_format=Step, actions=True)
        await branch.operate(instruction="round 1", response_format=Step, actions=True)
        if reload:
            saved = json.loads(json.dumps(branch.to_dict(), default=str))
            branch = Branch.from_dict(saved, chat_model=anthropic(server))
            assert branch.msgs.system is None  # lionagi 0.36's from_dict
            branch.register_tools(TOOLS)
        await branch.communicate("question 2")

    return drive


def session(install: bool, reload: bool) -> tuple[list[dict[str, Any]], list[Any]]:
    with AnthropicServer() as server:
        if install:
            lionagi_turns.install()
        try:
            asyncio.run(reload_session(reload)(server))
        finally:
            lionagi_turns.uninstall()
        return server.bodies(), server.usages()


def test_a_branch_reloaded_by_lionagis_from_dict_sends_what_it_would_have_sent(
    uninstalled: None,
) -> None:
    on, on_usage = session(True, reload=False)
    reloaded, reloaded_usage = session(True, reload=True)
    off, off_usage = session(False, reload=True)
    assert len(on) == len(reloaded) == len(off) == 3
    # After lionagi's own reload the request is the one the same conversation sends without
    # it, the branch's system text included, and it reads the cached prefix.
    assert reloaded == on
    assert reloaded[-1]["system"][0]["text"] == SYSTEM
    assert reloaded_usage[-1] == on_usage[-1] and reloaded_usage[-1].cache_read > 0
    assert reloaded_usage[-1].cache_read == (
        on_usage[-2].cache_read + on_usage[-2].write_5m + on_usage[-2].write_1h
        + on_usage[-2].uncached)  # all of the previous request
    # lionagi 0.36 itself sends no system after its reload and reads nothing from the cache.
    assert off[-1].get("system") is None or SYSTEM not in json.dumps(off[-1]["system"])
    assert off_usage[-1].cache_read == 0
    assert reloaded_usage[-1].cost() < off_usage[-1].cost()
    assert sum(u.cost() for u in reloaded_usage) < sum(u.cost() for u in off_usage)


def test_account_counts_a_stable_change_and_a_history_rewrite(uninstalled: None) -> None:
    holder: dict[str, Branch] = {}

    async def drive(server: AnthropicServer) -> None:
        branch = Branch(system=SYSTEM, chat_model=anthropic(server), tools=TOOLS[:2])
        await branch.communicate("q0")
        await branch.communicate("q1")
        branch.register_tools(TOOLS[2])  # the stable segment changes
        await branch.communicate("q2")
        first = next(m for m in branch.messages if type(m).__name__ == "Instruction")
        first.content.prompt_context.append("edited")  # a history rewrite
        await branch.communicate("q3")
        holder["branch"] = branch

    bodies = bodies_of(True, drive)
    account = prompt_cache_account(holder["branch"])
    assert [(c.stable_changed, c.history_rewritten) for c in account.calls] == [
        (False, False), (False, False), (True, False), (False, True)]
    assert account.segment_changes == 1 and account.history_rewrites == 1
    assert [p.ok for p in prefix_pairs(bodies)] == [True, False, False]
    assert account.calls[1].cache_read and account.calls[1].cache_write_1h == 0


# ---------------------------------------------------- characterization matrix, cache mode


class Recorded:
    """Records what each provider pass returned, per request, as (provider name, text)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from lionagi.protocols.context_providers import ContextProviderRegistry

        self.calls: list[list[tuple[str, str]]] = []
        original = ContextProviderRegistry.gather

        async def gather(registry: Any, branch: Any, instruction: Any) -> Any:
            report = await original(registry, branch, instruction)
            self.calls.append([(f["provider_name"], b)
                               for f, b in zip(report.fired, report.blocks, strict=True)])
            return report

        monkeypatch.setattr(ContextProviderRegistry, "gather", gather)


PROVIDERS = {
    "none": (),
    "first_turn": (("catalog", FirstTurnOnly),),
    "every_turn": (("news", EveryTurn),),
    "both": (("catalog", FirstTurnOnly), ("news", EveryTurn)),
}
SURFACES = {"communicate": 3, "operate_actions": 4, "ReAct": 3}
EXPECTED_ENTRIES = {
    "none": set(),
    "first_turn": {"cache-segment-marks", "cache-conversation-segment"},
    "every_turn": {"cache-segment-marks", "cache-conversation-segment"},
    "both": {"cache-segment-marks", "cache-conversation-segment"},
}


def matrix_drive(surface: str, providers: str) -> Callable[[AnthropicServer], Awaitable[Any]]:
    async def drive(server: AnthropicServer) -> None:
        branch = Branch(system=SYSTEM, chat_model=anthropic(server), tools=TOOLS)
        for name, cls in PROVIDERS[providers]:
            branch.providers.register(cls(), name=name)
        if surface == "communicate":
            for i in range(SURFACES[surface]):
                await branch.communicate(f"question {i}", guidance="Answer in one line.")
        elif surface == "operate_actions":
            server.script(*(step(i, c) for i, c in enumerate(CALLS)), step(3, None))
            for i in range(SURFACES[surface]):
                await branch.operate(instruction=f"round {i}", response_format=Step,
                                     actions=True)
        else:
            react_script(server)
            await branch.ReAct({"instruction": "How many A1?"}, response_format=Summary,
                               extension_allowed=True, max_extensions=2)

    return drive


@pytest.mark.parametrize("providers", list(PROVIDERS))
@pytest.mark.parametrize("surface", list(SURFACES))
def test_cache_mode_matrix_every_difference_is_a_registered_one(
    uninstalled: None, monkeypatch: pytest.MonkeyPatch, surface: str, providers: str
) -> None:
    from lionagi_turns.characterize import CACHE_REGISTRY, compare_cache_bodies

    drive = matrix_drive(surface, providers)
    legacy_calls = Recorded(monkeypatch)
    off = bodies_of(False, drive)
    gathered_off = list(legacy_calls.calls)
    legacy_calls.calls.clear()
    on = bodies_of(True, drive)
    assert legacy_calls.calls == gathered_off  # the providers saw the same conversation
    comparison = compare_cache_bodies(off, on, gathered_off)
    assert comparison.ok, comparison.unexplained
    used = set().union(*map(set, comparison.entries))
    assert used == EXPECTED_ENTRIES[providers]
    assert {e.id for e in CACHE_REGISTRY} >= used
    assert all(p.ok for p in prefix_pairs(on))  # and the compiled side keeps every prefix
    tampered = json.loads(json.dumps(on))
    tampered[-1]["messages"][0]["content"] = json.dumps(tampered[-1]["messages"][0]) + "x"
    assert not compare_cache_bodies(off, tampered, gathered_off).ok


def test_react_caller_context_shows_once_per_request_and_keeps_the_prefix(
    uninstalled: None,
) -> None:
    import warnings

    from lionagi_turns.integration import TurnsCompatibilityWarning
    from lionagi_turns.integration._install import _reset_warnings

    _reset_warnings()  # each gap warns once per process: make this run the first
    with warnings.catch_warnings():
        warnings.simplefilter("error", TurnsCompatibilityWarning)  # no de-dup gap here
        bodies = bodies_of(True, react_with_context)
    assert all(p.ok for p in prefix_pairs(bodies))
    for body in bodies:
        assert json.dumps(body["messages"]).count("warehouse: NORTH") == 1


def test_compile_at_k_shows_the_system_blocks_call_k_sent(
    uninstalled: None, tmp_path: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """``compile --profile prompt-cache --at K`` on the saved branch shows each call's system
    blocks as the server received them, the first call's tool section included (it was
    recorded by that call, not before it)."""
    from lionagi_turns.cli import main

    lionagi_turns.install()
    with AnthropicServer() as server:
        server.script("a", "b")
        branch = Branch(system="stable system text " * 3, chat_model=anthropic(server),
                        tools=[check_stock])
        asyncio.run(branch.communicate("Is SKU-1 in stock?"))
        asyncio.run(branch.communicate("And SKU-2?"))
        bodies = server.bodies()
    lionagi_turns.uninstall()
    path = tmp_path / "branch.json"
    path.write_text(json.dumps(branch.to_dict(mode="json"), default=str), encoding="utf-8")
    for k, body in enumerate(bodies, 1):
        assert any(b["text"].startswith("Tools:") for b in body["system"])
        capsys.readouterr()
        with pytest.raises(SystemExit) as ended:
            main(["compile", str(path), "--profile", "prompt-cache", "--at", str(k),
                  "--format", "json"])
        assert ended.value.code in (0, None)
        report = json.loads(capsys.readouterr().out)
        assert [b["text"] for b in report["system"]] == [b["text"] for b in body["system"]], k
        assert report["messages"] == body["messages"], k
