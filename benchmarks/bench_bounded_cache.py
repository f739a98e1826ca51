"""Bounded and cached together: a long tool loop under an input ceiling, three ways.

Run from the repository root, in the project's virtualenv::

    python benchmarks/bench_bounded_cache.py          # prints the tables
    python benchmarks/bench_bounded_cache.py --check  # and exits 1 if a goal is missed
    python benchmarks/bench_bounded_cache.py --rounds 6 --smoke   # a few rounds (tests)

The loop (``run_loop``): a Branch with a system message of about 4,000 characters and three
registered tools, ``ROUNDS`` (60) ``operate(actions=True)`` rounds, each calling one tool whose
output is about 1.5 KB. Every request goes over HTTP to the fake Anthropic Messages server of
``tests/e2e/anthropic_server.py`` through lionagi's own Anthropic adapter
(``prompt_caching=True``); the server prices each body with the prefix-rule simulator
(``tests/e2e/cache_simulator.py``: read 0.1, five-minute write 1.25, one-hour write
2.0, uncached 1.0; units are characters; 10 s per request).

The ceiling is the o200k token count of lionagi's own (unbounded) request of round 20, so the
unbounded history passes it there and is about three times over it by round 60. The low-water
mark is ``LOW_WATER`` of the ceiling.

Modes, in this one process:

- ``lionagi``: install() off (lionagi 0.36 alone; nothing bounds the history);
- ``adr``: ``install(profile="amendment1", ceiling=InputCeiling(C, low_water=C))`` - Amendment
  1's bound as the ADR states it: every request drops exactly what does not fit;
- ``stepped``: ``install(profile="amendment1", ceiling=InputCeiling(C, low_water=L))``.

Columns: whether every request's input (o200k tokens of its system blocks and message texts)
is at most the ceiling; the simulated input cost over the same requests sent uncached; how
many consecutive request pairs keep equal system blocks and a message prefix. Goals
(``--check``): ``stepped`` holds the ceiling, costs <= 0.40 and keeps >= 85% of the pairs.

Then the same loop (``OPENAI_ROUNDS`` rounds) on the OpenAI-compatible server of
``tests/e2e/http_server.py`` under the stepped ceiling (every request held under it, every
record of the branch kept or left out, and the share of its input tokens an automatic prefix
cache could reuse: the longest common prefix of consecutive requests in o200k tokens, none
below 1,024, counted in 128-token steps from 1,024, as OpenAI's automatic caching counts;
goal >= 0.85), and a ReAct run with ~5 KB of caller context.
"""


import argparse
import asyncio
import logging
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

os.environ.setdefault("LOG_AUTO_SAVE_ON_EXIT", "false")
os.environ.setdefault("LIONAGI_HOME", tempfile.mkdtemp(prefix="bench-bounded-cache-"))

_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(_ROOT / "tests" / "e2e"))
sys.path.insert(0, str(_ROOT / "src"))

from anthropic_server import AnthropicServer  # noqa: E402
from cache_simulator import PrefixPair, Usage, prefix_pairs  # type: ignore[import-not-found]  # noqa: E402
from lionagi import Branch, iModel  # noqa: E402
from pydantic import BaseModel  # noqa: E402

from lionagi_turns.core.measure import count_tokens, encode  # noqa: E402

ROUNDS = 60
CEILING_ROUND = 20
LOW_WATER = 0.5
COST_GOAL = 0.40
PAIRS_GOAL = 0.85
REUSE_GOAL = 0.85  # OpenAI-compatible run: the share of input an automatic prefix cache reuses
MODES = ("lionagi", "adr", "stepped")

SYSTEM = (
    "You are the operations assistant of a regional logistics company. "
    "You plan deliveries, check stock levels and look up customer orders. "
) + "".join(
    f"Rule {i}: state every figure with its unit, cite the tool result it came from, and "
    f"never guess a value a tool can provide (policy section {i}).\n"
    for i in range(1, 26)
)


def _detail(key: str) -> str:
    """About 1.5 KB of tool output, different for each key."""
    line = f"{key}: lot {{n}} checked, bay {{b}}, pallet count {{p}}, status nominal.\n"
    return "".join(line.format(n=n, b=n % 7, p=(n * 13) % 40) for n in range(22))[:1500]


def check_stock(sku: str, warehouse: str) -> dict[str, Any]:
    """Look up the stock of one product in one warehouse.

    Args:
        sku: the product's stock-keeping unit, e.g. "SKU-1042"
        warehouse: the warehouse code, e.g. "NORTH"
    """
    return {"sku": sku, "warehouse": warehouse, "detail": _detail(f"{sku}@{warehouse}")}


def plan_route(origin: str, destination: str, pallets: int) -> dict[str, Any]:
    """Plan a delivery route between two depots.

    Args:
        origin: the depot the delivery starts from
        destination: the depot the delivery ends at
        pallets: how many pallets the truck carries
    """
    return {"route": [origin, "HUB", destination],
            "detail": _detail(f"{origin}-{destination}-{pallets}")}


def find_order(order_id: str) -> dict[str, Any]:
    """Find a customer order by its number.

    Args:
        order_id: the order number, e.g. "#1042"
    """
    return {"order": order_id, "detail": _detail(order_id)}


TOOLS = (check_stock, plan_route, find_order)
# lionagi's own logs stay in memory (a long loop would otherwise dump them into ./data/logs)
LOGS = {"persist_dir": os.path.join(os.environ["LIONAGI_HOME"], "logs"), "capacity": None,
        "auto_save_on_exit": False}


class Step(BaseModel):
    finding: str
    next_step: str


def call_of(i: int) -> tuple[str, dict[str, Any]]:
    kind = i % 3
    if kind == 0:
        return "check_stock", {"sku": f"SKU-{1000 + i}", "warehouse": "NORTH"}
    if kind == 1:
        return "find_order", {"order_id": f"#{2000 + i}"}
    return "plan_route", {"origin": "NORTH", "destination": f"D{i}", "pallets": i % 9 + 1}


def reply(i: int) -> dict[str, Any]:
    name, arguments = call_of(i)
    return {
        "finding": f"round {i} finding",
        "next_step": "continue",
        "action_required": True,
        "action_requests": [{"function": name, "arguments": arguments}],
    }


def anthropic_model(server: AnthropicServer) -> Any:
    return iModel(provider="anthropic", model="claude-sonnet-4-5", api_key="x",
                  base_url=server.base_url, requires_tokens=False,
                  allow_local_network=True, prompt_caching=True)


async def run_loop(branch: Branch, rounds: int) -> Branch:
    for i in range(rounds):
        await branch.operate(
            instruction=f"Round {i}: work on the delivery plan; call a tool when one helps.",
            response_format=Step,
            actions=True,
        )
    return branch


def request_tokens(body: dict[str, Any]) -> int:
    """o200k tokens of a request's text: its system blocks and its messages' text parts."""
    texts: list[str] = []
    system = body.get("system")
    if isinstance(system, str):
        texts.append(system)
    elif isinstance(system, list):
        texts.extend(b.get("text", "") for b in system)
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        else:
            texts.extend(b.get("text", "") for b in content if isinstance(b, dict))
    return sum(count_tokens(t) for t in texts)


@dataclass(frozen=True)
class Measured:
    mode: str
    bodies: list[dict[str, Any]]
    usages: list[Usage]
    ceiling: int
    branch: Branch

    @property
    def pairs(self) -> list[PrefixPair]:
        return prefix_pairs(self.bodies)

    @property
    def kept(self) -> int:
        return sum(p.ok for p in self.pairs)

    @property
    def fraction(self) -> float:
        return sum(u.cost() for u in self.usages) / sum(u.total_input for u in self.usages)

    @property
    def peak(self) -> int:
        return max(request_tokens(b) for b in self.bodies)


@contextmanager
def mode_on(mode: str, ceiling: int) -> Iterator[None]:
    import lionagi_turns
    from lionagi_turns.amendment1 import InputCeiling

    if mode == "lionagi":
        yield
        return
    low = ceiling if mode == "adr" else int(ceiling * LOW_WATER)
    lionagi_turns.install(profile="amendment1", ceiling=InputCeiling(ceiling, low_water=low))
    try:
        yield
    finally:
        lionagi_turns.uninstall()


def measure(mode: str, rounds: int, ceiling: int) -> Measured:
    with AnthropicServer() as server, mode_on(mode, ceiling):
        server.script(*(reply(i) for i in range(rounds)))
        branch = Branch(system=SYSTEM, chat_model=anthropic_model(server), tools=list(TOOLS),
                        log_config=LOGS)
        asyncio.run(run_loop(branch, rounds))
        return Measured(mode, server.bodies(), server.usages(), ceiling, branch)


def records_complete(branch: Branch, compiled: Any) -> bool:
    """Every record of the branch is named by the compiled request's bounds exactly once, or
    is an action request inside a kept turn (it never renders)."""
    from collections import Counter

    from lionagi.protocols.messages import ActionRequest, System

    named = Counter(
        n for b in compiled.bounds if b.section in ("history", "tool_results")
        for n in (*b.kept, *(e.name for e in b.left_out))
    )
    left = {e.name for e in compiled.bound("history").left_out}
    for msg in branch.msgs.messages:
        if isinstance(msg, System):
            continue
        expected = 0 if isinstance(msg, ActionRequest) and str(msg.id) not in left else 1
        if named[str(msg.id)] != expected:
            return False
    return True


def next_compile(branch: Branch, ceiling: int) -> Any:
    """The next request of ``branch`` under the stepped ceiling, compiled without a call."""
    from lionagi_turns import amendment1

    ins = branch.msgs.create_instruction(instruction="next")
    return amendment1.compile_chat_request(
        branch, amendment1.TurnRequest(instruction=ins),
        ceiling=amendment1.InputCeiling(ceiling, low_water=int(ceiling * LOW_WATER)),
    )


def prompt_tokens(body: dict[str, Any]) -> list[int]:
    """The o200k tokens of an OpenAI-style request's messages end to end (each message as its
    role, a newline, its text parts and a newline): the sequence an automatic prefix cache
    compares."""
    text = []
    for message in body.get("messages", []):
        content = message.get("content")
        parts = [content] if isinstance(content, str) else [
            b.get("text", "") for b in content or [] if isinstance(b, dict)]
        text.append(f"{message.get('role')}\n{''.join(parts)}\n")
    return encode("".join(text))


def reusable(previous: list[int], current: list[int]) -> int:
    """The tokens of ``current`` an automatic prefix cache reuses after ``previous``: their
    longest common prefix, none below 1,024 tokens, else counted in 128-token steps from
    1,024 (as OpenAI's automatic caching counts cached tokens)."""
    common = 0
    for a, b in zip(previous, current, strict=False):
        if a != b:
            break
        common += 1
    return 0 if common < 1024 else 1024 + (common - 1024) // 128 * 128


def reuse_share(bodies: list[dict[str, Any]]) -> float:
    """The share of the input tokens of every request after the first that an automatic
    prefix cache could reuse from the request before it (``reusable``)."""
    seqs = [prompt_tokens(b) for b in bodies]
    total = sum(len(s) for s in seqs[1:])
    return sum(reusable(a, b) for a, b in pairwise(seqs)) / total if total else 1.0


def openai_loop(rounds: int, ceiling: int) -> tuple[int, int, bool, float]:
    """The loop over the OpenAI-compatible server under the stepped ceiling: (requests, peak
    request tokens, records complete, the automatic prefix cache's reusable share)."""
    from http_server import ChatServer, Reply

    with ChatServer() as server, mode_on("stepped", ceiling):
        server.script(*(Reply(content=reply(i)) for i in range(rounds)))
        model = iModel(provider="openai", model="gpt-4.1-mini", api_key="x",
                       base_url=server.base_url, requires_tokens=False,
                       allow_local_network=True)
        branch = Branch(system=SYSTEM, chat_model=model, tools=list(TOOLS), log_config=LOGS)
        asyncio.run(run_loop(branch, rounds))
        bodies = [{"messages": r.messages} for r in server.chat_requests()]
        peak = max(request_tokens(b) for b in bodies)
    complete = records_complete(branch, next_compile(branch, ceiling))
    return len(bodies), peak, complete, reuse_share(bodies)


def react_run(ceiling: int) -> tuple[int, int]:
    """A ReAct run with ~5 KB of caller context under the stepped ceiling: (requests, peak
    request tokens)."""
    from http_server import ChatServer, Reply

    context = {"manifest": _detail("manifest") * 3 + _detail("fleet")[:500]}
    with ChatServer() as server, mode_on("stepped", ceiling):
        for i in range(3):
            name, arguments = call_of(i)
            server.script(Reply(content={
                "analysis": f"step {i}", "planned_actions": [],
                "extension_needed": i < 2, "milestone": None,
                "action_strategy": "sequential",
                "action_requests": [{"function": name, "arguments": arguments}],
                "action_required": True,
            }))
        server.script(Reply(content={"answer": "done"}))
        model = iModel(provider="openai", model="gpt-4.1-mini", api_key="x",
                       base_url=server.base_url, requires_tokens=False,
                       allow_local_network=True)
        branch = Branch(system=SYSTEM, chat_model=model, tools=list(TOOLS), log_config=LOGS)
        asyncio.run(branch.ReAct(
            instruct={"instruction": "Plan the north deliveries.", "context": context},
            max_extensions=2, extension_allowed=True,
        ))
        bodies = [{"messages": r.messages} for r in server.chat_requests()]
    return len(bodies), max(request_tokens(b) for b in bodies)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a goal is missed")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--smoke", action="store_true", help="skip the OpenAI and ReAct runs")
    args = parser.parse_args(argv)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    rounds = args.rounds
    ceiling_round = min(CEILING_ROUND, max(1, rounds // 3))
    base = measure("lionagi", rounds, 10**9)
    ceiling = request_tokens(base.bodies[ceiling_round])
    results = [Measured(base.mode, base.bodies, base.usages, ceiling, base.branch)]
    results += [measure(m, rounds, ceiling) for m in MODES[1:]]
    print(f"{rounds} operate(actions=True) rounds; ceiling {ceiling} tokens "
          f"(lionagi's request {ceiling_round}); low-water {int(ceiling * LOW_WATER)}; "
          f"lionagi's last request {request_tokens(base.bodies[-1])} tokens")
    print(f"| {'mode':<8} | every request <= ceiling (peak) | cost / uncached | "
          "prefix pairs kept |")
    for r in results:
        held = "yes" if r.peak <= ceiling else "no"
        share = r.kept / len(r.pairs) if r.pairs else 1.0
        print(f"| {r.mode:<8} | {held:>3} ({r.peak:>6})                  | {r.fraction:>15.3f} | "
              f"{r.kept:>3} of {len(r.pairs):<3} ({share:.0%})  |")
    stepped = results[-1]
    reuse = 1.0
    if not args.smoke:
        n, peak, complete, reuse = openai_loop(rounds, ceiling)
        print(f"OpenAI-compatible, stepped: {n} requests, peak {peak} tokens "
              f"(ceiling {ceiling}: {'held' if peak <= ceiling else 'NOT held'}), "
              f"records complete: {complete}, automatic prefix cache could reuse "
              f"{reuse:.3f} of the input tokens")
        n, peak = react_run(ceiling)
        print(f"ReAct with ~5 KB caller context, stepped: {n} requests, peak {peak} tokens "
              f"({'held' if peak <= ceiling else 'NOT held'})")
    if not args.check:
        return 0
    share = stepped.kept / len(stepped.pairs)
    ok = (stepped.peak <= ceiling and stepped.fraction <= COST_GOAL and share >= PAIRS_GOAL
          and reuse >= REUSE_GOAL)
    print("goal met" if ok else
          f"goal missed: need peak <= {ceiling}, cost <= {COST_GOAL}, pairs >= {PAIRS_GOAL:.0%}, "
          f"OpenAI-compatible reusable share >= {REUSE_GOAL}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
