"""Prompt-cache cost of one agent loop on Anthropic Messages (ADR-0127), three ways.

Run from the repository root, in the project's virtualenv::

    python benchmarks/bench_prompt_cache.py          # prints the table
    python benchmarks/bench_prompt_cache.py --check  # and exits 1 if the goal is missed

The loop (``run_loop``): a Branch with a system message (about 4,000 characters), three
registered tools and a context provider that answers on the first turn only (it checks whether
the branch has a response yet); six ``operate(actions=True)`` rounds, the first five calling a
tool, then one ``operate`` with a different response format and no actions. Every request goes
over HTTP to the fake Anthropic Messages server of ``tests/e2e/anthropic_server.py`` through
lionagi's own Anthropic adapter (``prompt_caching=True``); the server prices each body
with ``tests/e2e/cache_simulator.py`` (marks, lookback of 20 blocks,
lifetimes; read 0.1, five-minute write 1.25, one-hour write 2.0, uncached 1.0; units are
characters of block text; the clock advances 10 s per request).

Three modes, in this one process:

- ``lionagi``: install() off (lionagi 0.36's own ADR-0127 placement);
- ``seed``: install() on with the seed profile forced on the cache endpoint (this package before
  the prompt-cache profile: the system folded into the first instruction);
- ``cache``: install() on (the prompt-cache profile and the Anthropic projection).

Printed per mode: the simulated input cost as a fraction of sending the same requests uncached,
and how many consecutive request pairs keep equal system blocks and a message prefix.
Goal (``--check``): in ``cache`` mode every pair keeps the prefix and the fraction is <= 0.37.
"""



import argparse
import asyncio
import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("LOG_AUTO_SAVE_ON_EXIT", "false")
os.environ.setdefault("LIONAGI_HOME", tempfile.mkdtemp(prefix="bench-prompt-cache-"))

_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(_ROOT / "tests" / "e2e"))
sys.path.insert(0, str(_ROOT / "src"))

from anthropic_server import AnthropicServer  # noqa: E402
from cache_simulator import PrefixPair, Usage, prefix_pairs  # type: ignore[import-not-found]  # noqa: E402
from lionagi import Branch, iModel  # noqa: E402
from pydantic import BaseModel  # noqa: E402

GOAL = 0.37
MODES = ("lionagi", "seed", "cache")

SYSTEM = (
    "You are the operations assistant of a regional logistics company. "
    "You plan deliveries, check stock levels and look up customer orders. "
) + "".join(
    f"Rule {i}: state every figure with its unit, cite the tool result it came from, and "
    f"never guess a value a tool can provide (policy section {i}).\n"
    for i in range(1, 26)
)


def check_stock(sku: str, warehouse: str) -> dict[str, Any]:
    """Look up the stock of one product in one warehouse.

    Args:
        sku: the product's stock-keeping unit, e.g. "SKU-1042"
        warehouse: the warehouse code, e.g. "NORTH"
    """
    return {"sku": sku, "warehouse": warehouse, "units": 40 + len(sku)}


def plan_route(origin: str, destination: str, pallets: int) -> dict[str, Any]:
    """Plan a delivery route between two depots.

    Args:
        origin: the depot the delivery starts from
        destination: the depot the delivery ends at
        pallets: how many pallets the truck carries
    """
    return {"route": [origin, "HUB", destination], "hours": 3 + pallets % 5}


def find_order(order_id: str) -> dict[str, Any]:
    """Find a customer order by its number.

    Args:
        order_id: the order number, e.g. "#1042"
    """
    return {"order": order_id, "status": "packed", "items": 3}


TOOLS = (check_stock, plan_route, find_order)


class Step(BaseModel):
    finding: str
    next_step: str


class Summary(BaseModel):
    summary: str
    figures: list[str]


class FirstTurnCatalog:
    """A context provider on the first-turn cadence: a block only while nothing answered yet."""

    name = "catalog"

    async def provide(self, branch: Any, instruction: Any) -> str | None:
        if any(type(m).__name__ == "AssistantResponse" for m in branch.messages):
            return None
        return "Depots: NORTH, SOUTH, HUB. Fleet: 12 trucks, 18 pallets each. " * 3


_CALLS = (
    ("check_stock", {"sku": "SKU-1042", "warehouse": "NORTH"}),
    ("find_order", {"order_id": "#1042"}),
    ("plan_route", {"origin": "NORTH", "destination": "SOUTH", "pallets": 6}),
    ("check_stock", {"sku": "SKU-2001", "warehouse": "SOUTH"}),
    ("find_order", {"order_id": "#2001"}),
)
ROUNDS = 6


def script(server: AnthropicServer) -> None:
    """The model's replies: five tool-calling rounds, one plain round, the summary."""
    for i in range(ROUNDS):
        reply: dict[str, Any] = {
            "finding": f"round {i} finding",
            "next_step": "continue" if i < ROUNDS - 1 else "summarise",
            "action_required": i < len(_CALLS),
            "action_requests": (
                [{"function": _CALLS[i][0], "arguments": _CALLS[i][1]}] if i < len(_CALLS) else []
            ),
        }
        server.script(reply)
    server.script({"summary": "Stock checked, orders found, route planned.",
                   "figures": ["44 units", "3 items", "3 hours"]})


def model(server: AnthropicServer) -> Any:
    return iModel(
        provider="anthropic",
        model="claude-sonnet-4-5",
        api_key="x",
        base_url=server.base_url,
        requires_tokens=False,
        allow_local_network=True,
        prompt_caching=True,
    )


async def run_loop(server: AnthropicServer) -> Branch:
    """The benchmark's loop (module docstring) against ``server``; returns the branch."""
    script(server)
    branch = Branch(system=SYSTEM, chat_model=model(server), tools=list(TOOLS))
    branch.providers.register(FirstTurnCatalog(), name="catalog")
    for i in range(ROUNDS):
        await branch.operate(
            instruction=f"Round {i}: work on the delivery plan; call a tool when one helps.",
            response_format=Step,
            actions=True,
        )
    await branch.operate(instruction="Summarise the plan for the dispatcher.",
                         response_format=Summary)
    return branch


@dataclass(frozen=True)
class Measured:
    mode: str
    bodies: list[dict[str, Any]]
    usages: list[Usage]

    @property
    def pairs(self) -> list[PrefixPair]:
        return prefix_pairs(self.bodies)

    @property
    def fraction(self) -> float:
        cost = sum(u.cost() for u in self.usages)
        return cost / sum(u.total_input for u in self.usages)


@contextmanager
def mode_on(mode: str) -> Iterator[None]:
    import lionagi_turns
    from lionagi_turns.integration import _install

    if mode == "lionagi":
        yield
        return
    lionagi_turns.install()
    try:
        if mode == "seed":
            with _install.seed_profile_forced():
                yield
        else:
            yield
    finally:
        lionagi_turns.uninstall()


@contextmanager
def offline_tokens() -> Iterator[None]:
    """lionagi's context-provider budget counts with tiktoken, which cannot download its
    encoding offline: count one token per four characters while the loop runs."""
    from lionagi.service.token_calculator import TokenCalculator

    original = TokenCalculator.__dict__["tokenize"]
    TokenCalculator.tokenize = staticmethod(lambda s_=None, /, *a, **k: len(s_ or "") // 4)
    try:
        yield
    finally:
        TokenCalculator.tokenize = original


def measure(mode: str) -> Measured:
    with AnthropicServer() as server, offline_tokens(), mode_on(mode):
        asyncio.run(run_loop(server))
        return Measured(mode, server.bodies(), server.usages())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the goal is missed")
    parser.add_argument("--modes", nargs="*", default=list(MODES), choices=MODES)
    args = parser.parse_args(argv)
    results = [measure(m) for m in args.modes]
    print(f"{'mode':<9} {'requests':>8} {'cost / uncached':>16} {'prefix pairs kept':>18}")
    for r in results:
        kept = sum(p.ok for p in r.pairs)
        print(f"{r.mode:<9} {len(r.bodies):>8} {r.fraction:>16.3f} {kept:>12} of {len(r.pairs)}")
    if not args.check:
        return 0
    cache = next((r for r in results if r.mode == "cache"), None)
    if cache is None:
        print("--check needs the cache mode")
        return 1
    ok = all(p.ok for p in cache.pairs) and cache.fraction <= GOAL
    print("goal met" if ok else f"goal missed: need every pair kept and fraction <= {GOAL}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
