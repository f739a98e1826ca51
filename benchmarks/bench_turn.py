"""Share of request preparation in a warm ``communicate`` turn, end to end.

Run from the repository root, in the project's virtualenv::

    python benchmarks/bench_turn.py                 # 10,000-message branch, 5 measured turns
    python benchmarks/bench_turn.py --messages 2000 --turns 3 --profile

A real lionagi ``Branch`` (``workload.build_branch``) talks to the OpenAI-compatible server of
``tests/e2e/http_server.py`` on 127.0.0.1 through lionagi's own OpenAI adapter. Each mode runs
two unmeasured turns, then ``--turns`` measured ``communicate`` turns on the same branch
(wall clock per turn, and the part of it spent inside ``_prepare_run_kwargs`` — lionagi's
own with install() off, this package's with install() on). ``--profile`` adds a cProfile of
one more install()-on turn: the functions outside preparation that cost the most, which is
what lionagi itself spends per call (its log snapshot, payload validation, the HTTP client).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("LIONAGI_HOME", tempfile.mkdtemp(prefix="lionagi-turns-bench-"))
os.environ.setdefault("LOG_AUTO_SAVE_ON_EXIT", "false")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))

import workload
from http_server import ChatServer
from lionagi import iModel
from lionagi.ln.concurrency.utils import _is_coro_func_cached
from lionagi.operations.chat import chat as chat_module

from lionagi_turns import install, uninstall


class _Timer:
    """Wraps lionagi's ``chat._prepare_run_kwargs`` (whatever it currently is) and adds up
    the wall time spent inside it."""

    def __init__(self) -> None:
        self.spent = 0.0
        self.original: Callable[..., Any] | None = None

    def __enter__(self) -> _Timer:
        self.original = original = chat_module._prepare_run_kwargs

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.spent += time.perf_counter() - start

        chat_module._prepare_run_kwargs = timed
        return self

    def __exit__(self, *exc: object) -> None:
        chat_module._prepare_run_kwargs = self.original


async def _turns(branch: Any, first: int, count: int) -> list[tuple[float, float]]:
    out = []
    for i in range(first, first + count):
        with _Timer() as timer:
            start = time.perf_counter()
            await branch.communicate(f"Step {i}: what changed in report {i}?")
            out.append((time.perf_counter() - start, timer.spent))
    return out


def measure(messages: int, turns: int, profile: bool) -> None:
    with ChatServer() as server:
        model = iModel(
            provider="openai", model="gpt-4.1-mini", api_key="x", base_url=server.base_url,
            requires_tokens=False, allow_local_network=True,
        )
        rows = {}
        for mode in ("lionagi", "installed"):
            branch = workload.build_branch(messages)
            branch.chat_model = model
            if mode == "installed":
                install()
            try:
                asyncio.run(_turns(branch, 0, 2))  # warm: caches filled, connections open
                rows[mode] = asyncio.run(_turns(branch, 2, turns))
                if profile and mode == "installed":
                    _profile_turn(branch)
            finally:
                if mode == "installed":
                    uninstall()
            del branch
            _is_coro_func_cached.cache_clear()
        print(f"\nwarm communicate turns on a {messages}-message branch, wall ms "
              "(min / median / max)")
        for mode, samples in rows.items():
            total = [t for t, _ in samples]
            prep = [p for _, p in samples]
            share = [p / t for t, p in samples]
            print(
                f"  {mode:>9}: turn {min(total) * 1e3:8.1f} {statistics.median(total) * 1e3:8.1f}"
                f" {max(total) * 1e3:8.1f} | preparation {statistics.median(prep) * 1e3:8.1f}"
                f" | share {min(share):.1%} / {statistics.median(share):.1%} / {max(share):.1%}"
            )


def _profile_turn(branch: Any) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(branch.communicate("One more: summarise everything so far."))
    profiler.disable()
    print("\none install()-on turn under cProfile, top cumulative (outside preparation too):")
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(35)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=10000)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)
    os.chdir(tempfile.mkdtemp(prefix="lionagi-turns-bench-cwd-"))
    measure(args.messages, args.turns, args.profile)
    return 0


if __name__ == "__main__":
    sys.exit(main())
