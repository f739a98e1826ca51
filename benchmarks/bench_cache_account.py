"""How ``prompt_cache_account(branch)`` grows with the history: the time at 8n calls over n.

Run from the repository root, in the project's virtualenv::

    python benchmarks/bench_cache_account.py            # n = 1,000 and 8,000 calls
    python benchmarks/bench_cache_account.py --n 250    # another n
    python benchmarks/bench_cache_account.py --check    # and exit 1 if the ratio is over GOAL

The branch (``build``): a system message, then per call an instruction carrying a prompt-cache
record, every other call a tool call (action request and response), and an assistant response
whose recorded provider response holds an Anthropic ``usage``. The records are real: the first
two calls are compiled under the prompt-cache profile (``compile_cached``) and every later
instruction carries a copy of the second one's record, so building 8,000 calls stays quick.

Timed in process CPU time (``time.process_time``) with the cyclic garbage collector paused,
best of ``--runs``. Printed per size: messages, milliseconds, microseconds per message, and the
ratio of the two times. Linear growth shows as a ratio near 8 (messages grow 8x); the goal
(``--check``) is a ratio of at most ``GOAL``.
"""

from __future__ import annotations

import argparse
import copy
import gc
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LOG_AUTO_SAVE_ON_EXIT", "false")
os.environ.setdefault("LIONAGI_HOME", tempfile.mkdtemp(prefix="bench-cache-account-"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from lionagi import Branch

from lionagi_turns import TurnRequest, prompt_cache_account
from lionagi_turns.profiles.prompt_cache._compile import RECORD_KEY, compile_cached

GOAL = 11.0  # 8x the messages: linear is 8, plus slack for caches and a shared machine
USAGE = {
    "input_tokens": 12,
    "cache_read_input_tokens": 900,
    "cache_creation": {"ephemeral_5m_input_tokens": 40, "ephemeral_1h_input_tokens": 0},
    "cache_creation_input_tokens": 40,
    "output_tokens": 30,
}


def _reply(branch: Branch, text: str) -> None:
    response = branch.msgs.add_message(assistant_response=text)
    response.metadata["model_response"] = {"usage": dict(USAGE)}


def build(calls: int) -> Branch:
    """A branch of ``calls`` recorded calls (module docstring)."""
    branch = Branch(system="You are the operations assistant. " * 20)
    record = None
    for i in range(calls):
        if i < 2:
            request = TurnRequest(instruction=branch.msgs.create_instruction(instruction=f"q{i}"))
            instruction = compile_cached(branch, request, None).compiled.instruction
            record = instruction.metadata[RECORD_KEY]
        else:
            instruction = branch.msgs.create_instruction(instruction=f"q{i}")
            instruction.metadata[RECORD_KEY] = copy.deepcopy(record)
        branch.msgs.add_message(instruction=instruction)
        if i % 2:
            request_msg = branch.msgs.add_message(
                action_function="lookup", action_arguments={"sku": f"SKU-{i}"}
            )
            branch.msgs.add_message(action_request=request_msg, action_output={"units": i})
        _reply(branch, f"a{i}")
    return branch


def best_time(branch: Branch, runs: int) -> float:
    """Fewest CPU seconds of one ``prompt_cache_account(branch)`` over ``runs`` runs."""
    best = float("inf")
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(runs):
            start = time.process_time()
            prompt_cache_account(branch)
            best = min(best, time.process_time() - start)
    finally:
        if enabled:
            gc.enable()
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1000, help="calls in the smaller branch")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--check", action="store_true", help=f"exit 1 if the ratio > {GOAL}")
    args = parser.parse_args(argv)
    times = []
    print(f"{'calls':>7} {'messages':>9} {'ms':>9} {'us/message':>11}")
    for calls in (args.n, 8 * args.n):
        branch = build(calls)
        assert len(prompt_cache_account(branch).calls) == calls
        seconds = best_time(branch, args.runs)
        times.append(seconds)
        size = len(branch.messages)
        print(f"{calls:>7} {size:>9} {seconds * 1e3:>9.2f} {seconds * 1e6 / size:>11.2f}")
    ratio = times[1] / times[0] if times[0] else float("inf")
    print(f"time ratio at 8x the calls: {ratio:.1f} (linear: 8)")
    if args.check and ratio > GOAL:
        print(f"goal missed: ratio {ratio:.1f} > {GOAL}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
