"""Context tiers under an input ceiling: a long tool loop with planted facts, four ways.

Run from the repository root, in the project's virtualenv::

    python benchmarks/bench_context_tiers.py               # prints the table (150 rounds)
    python benchmarks/bench_context_tiers.py --rounds 12 --ceiling-round 6   # smoke (tests)

The loop: a Branch with the system message of ``bench_bounded_cache`` and one registered tool,
``--rounds`` ``operate(actions=True)`` rounds over HTTP to the fake Anthropic Messages server
(``tests/e2e/anthropic_server.py``) through lionagi's own adapter with ``prompt_caching=True``;
the server prices each body with the prefix-rule simulator (read 0.1, write 1.25, uncached
1.0). Each round's tool output is 100 B to 20 KB (``SIZES``, cycled). Forty one-line facts are
planted in rounds 1-40: in the instruction of an odd round, in the model's answer of an even
one; none in a tool output.

The ceiling is the o200k token count of lionagi's own (unbounded) request of round 30; the
low-water mark half of it. Rows, in this one process:

- ``lionagi alone``: install() off;
- ``the ADR's rule``: ``InputCeiling(C, low_water=C)`` (every request drops what does not fit);
- ``stepped drops (today)``: ``InputCeiling(C, low_water=C // 2)``;
- ``tiers 1+2``: the same with ``clear_tool_results=ToolResultClearing(keep=3)``.

Columns: requests over the ceiling (o200k tokens of system blocks and message texts), the
peak over the ceiling, the simulated input cost over the same requests sent uncached, the
consecutive request pairs keeping equal system blocks and a message prefix, the planted facts
still in the last request, and the turns the last request keeps.
"""

import argparse
import asyncio
import logging
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("LOG_AUTO_SAVE_ON_EXIT", "false")
os.environ.setdefault("LIONAGI_HOME", tempfile.mkdtemp(prefix="bench-context-tiers-"))

_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(_ROOT / "benchmarks"))
sys.path.insert(0, str(_ROOT / "tests" / "e2e"))
sys.path.insert(0, str(_ROOT / "src"))

from anthropic_server import AnthropicServer  # noqa: E402
from bench_bounded_cache import LOGS, SYSTEM, anthropic_model, request_tokens  # noqa: E402
from cache_simulator import prefix_pairs  # type: ignore[import-not-found]  # noqa: E402
from lionagi import Branch  # noqa: E402
from pydantic import BaseModel  # noqa: E402

ROUNDS = 150
CEILING_ROUND = 30
FACTS = 40
SIZES = (100, 400, 1_500, 3_000, 8_000, 20_000, 600, 250, 12_000, 2_000)
ROWS = ("lionagi alone", "the ADR's rule", "stepped drops (today)", "tiers 1+2")


def fact(i: int) -> str:
    return f"Fact {i}: depot D{i} closes at {6 + i % 14}:{(i * 7) % 60:02d}."


def lookup(key: str) -> dict[str, Any]:
    """Look up the records of one key.

    Args:
        key: the record key, e.g. "K-12"
    """
    n = int(key.split("-")[-1])
    size = SIZES[n % len(SIZES)]
    line = f"{key}: lot {{n}} checked, bay {{b}}, pallet count {{p}}, status nominal.\n"
    text = "".join(line.format(n=k, b=k % 7, p=(k * 13) % 40) for k in range(size // 50 + 1))
    return {"key": key, "detail": text[:size]}


class Step(BaseModel):
    finding: str


def instruction(i: int) -> str:
    planted = f" {fact(i)}" if 1 <= i <= FACTS and i % 2 else ""
    return f"Round {i}: work on the plan; call a tool when one helps.{planted}"


def reply(i: int) -> dict[str, Any]:
    planted = f" {fact(i)}" if 1 <= i <= FACTS and not i % 2 else ""
    return {"finding": f"round {i} done.{planted}", "action_required": True,
            "action_requests": [{"function": "lookup", "arguments": {"key": f"K-{i}"}}]}


def install(row: str, ceiling: int) -> None:
    import lionagi_turns
    from lionagi_turns.amendment1 import InputCeiling, ToolResultClearing

    if row == "lionagi alone":
        return
    low = ceiling if row == "the ADR's rule" else ceiling // 2
    clearing = ToolResultClearing(keep=3) if row == "tiers 1+2" else None
    lionagi_turns.install(profile="amendment1",
                          ceiling=InputCeiling(ceiling, low_water=low, clear_tool_results=clearing))


@dataclass(frozen=True)
class Row:
    row: str
    bodies: list[dict[str, Any]]
    cost: float
    ceiling: int

    def cells(self) -> list[str]:
        tokens = [request_tokens(b) for b in self.bodies]
        over = sum(t > self.ceiling for t in tokens)
        pairs = prefix_pairs(self.bodies)
        last = str(self.bodies[-1])
        facts = sum(fact(i) in last for i in range(1, FACTS + 1))
        turns = len({i for i in range(len(self.bodies)) if f"Round {i}:" in last}) - 1
        return [self.row, str(over), f"{max(tokens) / self.ceiling:.2f}", f"{self.cost:.3f}",
                f"{sum(p.ok for p in pairs)}/{len(pairs)}", f"{facts}/{FACTS}", str(turns)]


def run(row: str, rounds: int, ceiling: int) -> Row:
    import lionagi_turns

    with AnthropicServer() as server:
        install(row, ceiling)
        try:
            branch = Branch(system=SYSTEM, chat_model=anthropic_model(server), tools=[lookup],
                            log_config=LOGS)
            for i in range(rounds):
                server.script(reply(i))
                asyncio.run(branch.operate(instruction=instruction(i), response_format=Step,
                                           actions=True))
        finally:
            lionagi_turns.uninstall()
        usages = server.usages()
        cost = sum(u.cost() for u in usages) / sum(u.total_input for u in usages)
        return Row(row, server.bodies(), cost, ceiling)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--ceiling-round", type=int, default=CEILING_ROUND,
                        help="the round whose unbounded request sets the ceiling")
    args = parser.parse_args(argv)
    logging.disable(logging.INFO)
    plain = run("lionagi alone", args.rounds, 1)
    at = min(args.ceiling_round, args.rounds - 1)
    ceiling = request_tokens(plain.bodies[at])
    rows = [Row(plain.row, plain.bodies, plain.cost, ceiling),
            *(run(r, args.rounds, ceiling) for r in ROWS[1:])]
    head = ["row", "over ceiling", "peak/ceiling", "cost/uncached", "prefix kept",
            "facts kept", "turns kept"]
    print(f"{args.rounds} rounds, ceiling {ceiling:,} o200k tokens (lionagi's request at "
          f"round {at}), low-water half of it")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r.cells()) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
