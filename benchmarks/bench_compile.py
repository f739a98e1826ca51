"""Compile cost: lionagi 0.36's ``_prepare_run_kwargs`` against ``compile_chat_request``.

Run from the repository root, in the project's virtualenv::

    python benchmarks/bench_compile.py            # full: 100 .. 100,000 messages, memory pass
    python benchmarks/bench_compile.py --smoke    # CI: tiny branches, 1 run, checks only
    python benchmarks/bench_compile.py --check    # full, and exit 1 if a target is missed

Everything runs in this one process. Per size and run, one branch is freshly built
(``workload.build_branch``) and both paths run on it, the first path alternating between runs:

- cold: each path's first call on that branch (neither path reads the other's cache);
- warm: each path's call after the next turn is recorded on the branch (instruction, tool call
  on odd turns, assistant answer), compiling the turn after it.

Timed calls run with the cyclic garbage collector paused, as ``timeit`` does, and are timed
in process CPU time (``time.process_time``; ``--wall`` for wall time), which other processes on
a shared machine disturb far less.

Printed: min/median/max milliseconds per path, the compiled/legacy ratios (min/median/max over
the paired runs), microseconds per message (linear growth shows as a flat column), peak
traced memory of one cold and one warm call per path (a separate, untimed pass under
tracemalloc), and the render cache's memory over many branches created and dropped
(``--branches``, 1,000 branches of 100 messages by default). Before timing, every size checks
that the compiled messages equal those compiled with the fast path off and equal legacy's
after the first message (the fold target, whose separators differ by design): any difference
exits with status 1, as does any exception.

The other profiles are timed the same way, each on the render cache, compile memory and ceiling
record its own last call left: ``cache`` (the prompt-cache layout), ``amend1`` (Amendment 1),
``ceiling`` (Amendment 1 under an ``InputCeiling`` no request reaches, so nothing changes tier)
and ``tiers`` (the same with tier 1, tool-result clearing, on). Before timing, each profile's
output with its memory equals its output with the fast path off.

Targets (``--check``): at 1,000 and 10,000 messages the median compiled/legacy ratio is at most
0.15 cold and 0.015 warm (the next turn); every other profile's median ratio to the default
profile is at most ``PROFILE_SLACK`` (``ceiling`` and ``tiers``: on the next turn; their first
compile measures the whole history); compiled cost per message grows at most
``LINEAR_SLACK`` times from 1,000 messages to the largest size measured; after the branch
churn the cache holds no entry and at most one entry per live instruction was ever held.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

os.environ.setdefault("LIONAGI_HOME", tempfile.mkdtemp(prefix="lionagi-turns-bench-"))
os.environ.setdefault("LOG_AUTO_SAVE_ON_EXIT", "false")

import workload
from lionagi import Branch
from lionagi.ln.concurrency.utils import _is_coro_func_cached
from lionagi.operations.chat._prepare import _prepare_run_kwargs
from lionagi.operations.types import ChatParam
from lionagi.protocols.messages import Instruction

from lionagi_turns import TurnRequest, compile_chat_request, to_provider_messages
from lionagi_turns.memo import renders as _cache
from lionagi_turns.memo import resume as _resume
from lionagi_turns.memo.branch_memory import SLOTS
from lionagi_turns.memo.switch import no_fast_path

TARGETS = {"cold": 0.15, "warm": 0.015}
TARGET_SIZES = (1000, 10000)
LINEAR_FROM = 1000
LINEAR_SLACK = 2.0
LARGE = 100_000  # sizes from here on run --large-runs times (legacy takes seconds per call)

Messages = list[dict[str, Any]]
Call = Callable[[Branch, Instruction], Messages]


def legacy_call(branch: Branch, instruction: Instruction) -> Messages:
    param = ChatParam.from_branch(branch)
    _, kwargs = _prepare_run_kwargs(branch, None, param, ins=instruction)
    messages: Messages = kwargs["messages"]
    return messages


def compiled_call(branch: Branch, instruction: Instruction) -> Messages:
    compiled = compile_chat_request(branch, TurnRequest(instruction=instruction))
    return to_provider_messages(compiled)


PATHS: dict[str, Call] = {"legacy": legacy_call, "compiled": compiled_call}

# The other profiles on main, each timed like "compiled" and held to PROFILE_SLACK times it.
PROFILE_SLACK = 1.5
CEILING_TOKENS = 10**9  # a ceiling no benchmark request reaches
# Held to PROFILE_SLACK on the next turn only: a first compile under a ceiling measures every
# turn of the history in the profile's tokens, which the default profile never does.
CEILING_PATHS = ("ceiling", "tiers")
try:
    from lionagi_turns.profiles.prompt_cache._compile import compile_cached

    def cache_call(branch: Branch, instruction: Instruction) -> Messages:
        compiled = compile_cached(branch, TurnRequest(instruction=instruction), None).compiled
        return to_provider_messages(compiled)

    PATHS["cache"] = cache_call
except ImportError:  # pragma: no cover - the profile is not on this checkout
    pass
try:
    from lionagi_turns import amendment1

    def amendment1_call(branch: Branch, instruction: Instruction) -> Messages:
        request = amendment1.TurnRequest(instruction=instruction)
        return to_provider_messages(amendment1.compile_chat_request(branch, request))

    PATHS["amend1"] = amendment1_call

    # A ceiling no request reaches (nothing changes tier), without and with tier 1 (clearing).
    # Like ``install()``, each call leaves the ceiling record on the instruction it was given,
    # which the branch then records: the next turn reads it.
    def _ceiling_call(ceiling: amendment1.InputCeiling) -> Call:
        def call(branch: Branch, instruction: Instruction) -> Messages:
            request = amendment1.TurnRequest(instruction=instruction)
            compiled = amendment1.compile_chat_request(branch, request, ceiling=ceiling)
            key = amendment1.CEILING_KEY
            instruction.metadata[key] = compiled.instruction.metadata[key]
            return to_provider_messages(compiled)

        return call

    PATHS["ceiling"] = _ceiling_call(amendment1.InputCeiling(CEILING_TOKENS))
    PATHS["tiers"] = _ceiling_call(
        amendment1.InputCeiling(CEILING_TOKENS, clear_tool_results=True)
    )
except ImportError:  # pragma: no cover
    pass
PROFILES = tuple(name for name in PATHS if name not in ("legacy", "compiled"))


@dataclass
class Sample:
    cold: list[float] = field(default_factory=list)
    warm: list[float] = field(default_factory=list)
    peak_cold: int = 0
    peak_warm: int = 0


# CPU time of this process by default: on a shared machine it is far less disturbed by other
# processes than wall time (``--wall`` switches to ``time.perf_counter``).
_clock: Callable[[], float] = time.process_time


def _timed(call: Call, branch: Branch, instruction: Instruction) -> float:
    """Seconds for one call, with the cyclic GC paused as ``timeit`` does (a collection
    triggered mid-call would bill one path for the other's garbage)."""
    gc.collect()
    gc.disable()
    try:
        start = _clock()
        call(branch, instruction)
        return _clock() - start
    finally:
        gc.enable()


def _traced(call: Call, branch: Branch, instruction: Instruction) -> int:
    """Peak bytes traced during one call, above what was allocated before it."""
    gc.collect()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    call(branch, instruction)
    return tracemalloc.get_traced_memory()[1] - base


def _release(branch: Branch | None) -> None:
    """Let ``branch`` be freed. lionagi 0.36 keeps every Branch alive through an unbounded
    ``functools.cache`` on ``is_coro_func`` (it caches the branch's bound hook methods); clearing
    it here keeps old branches from piling up and slowing later measurements."""
    del branch
    _is_coro_func_cached.cache_clear()
    gc.collect()


def _one_run(
    size: int, order: list[str], measure: Callable[[Call, Branch, Instruction], Any]
) -> dict[str, tuple[Any, Any]]:
    """Every path on one fresh branch: each path's cold call (no path reads another's cache:
    legacy keeps its renders in the messages, and the render cache is emptied before each of
    the compiler's profiles), then one more turn is recorded and each path's warm call.
    ``order`` says which path goes first."""
    branch = workload.build_branch(size)
    turn = workload.turns_recorded(branch)
    first = workload.next_instruction(branch, turn)
    cold, warm, caches = {}, {}, {}
    memory = SLOTS.setdefault(branch, dict)  # the branch's compile memory, one slot per stage
    assert memory is not None
    record = dict(first.metadata)
    for name in order:
        if name != "legacy":
            _cache.clear()  # each profile's cold call starts from an empty render cache
        memory.clear()  # and from no compile memory
        first.metadata.clear()
        first.metadata.update(record)
        cold[name] = measure(PATHS[name], branch, first)
        caches[name] = (_cache.snapshot(), dict(memory), dict(first.metadata))
    workload.append_turn(branch, first, turn)
    second = workload.next_instruction(branch, turn + 1)
    for name in order:
        # the render cache, the compile memory and the recorded instruction as this path's own
        # last call left them
        renders, kept, metadata = caches[name]
        _cache.restore(renders)
        memory.clear()
        memory.update(kept)
        first.metadata.clear()
        first.metadata.update(metadata)
        warm[name] = measure(PATHS[name], branch, second)
    caches.clear()
    memory.clear()
    _cache.clear()
    _release(branch)
    return {name: (cold[name], warm[name]) for name in order}


def check_outputs(size: int) -> list[str]:
    """Differences between compiled (fast path on/off) and legacy output; empty when none."""
    problems: list[str] = []
    branch = workload.build_branch(size)
    turn = workload.turns_recorded(branch)
    for step in range(2):  # cold, then warm after one more turn
        instruction = workload.next_instruction(branch, turn + step)
        fast = compiled_call(branch, instruction)
        with no_fast_path():
            slow = compiled_call(branch, instruction)
        legacy = legacy_call(branch, instruction)
        label = f"{size} messages, {'cold' if step == 0 else 'warm'}"
        if fast != slow:
            first = next(i for i, (a, b) in enumerate(zip(fast, slow, strict=False)) if a != b)
            problems.append(f"{label}: fast path differs from no-fast-path at message {first}")
        if len(fast) != len(legacy) or fast[1:] != legacy[1:]:
            problems.append(f"{label}: compiled differs from legacy beyond the fold target")
        for name in PROFILES:  # each profile's memory changes nothing it sends
            kept = PATHS[name](branch, instruction)
            with no_fast_path():
                walked = PATHS[name](branch, instruction)
            if kept != walked:
                problems.append(f"{label}: {name} differs from itself with the fast path off")
        if step == 0:
            workload.append_turn(branch, instruction, turn)
    _release(branch)
    return problems


def _mmm(values: list[float], scale: float = 1.0) -> str:
    lo, mid, hi = min(values), statistics.median(values), max(values)
    return f"{lo * scale:9.1f} {mid * scale:9.1f} {hi * scale:9.1f}"


def run(
    sizes: list[int], runs: int, large_runs: int, memory: bool
) -> tuple[dict[int, dict[str, Sample]], list[str]]:
    results: dict[int, dict[str, Sample]] = {}
    problems: list[str] = []
    for size in sizes:
        problems.extend(check_outputs(size))
        samples = {name: Sample() for name in PATHS}
        for index in range(large_runs if size >= LARGE else runs):
            order = list(PATHS) if index % 2 == 0 else list(PATHS)[::-1]  # alternate who's first
            for name, (cold, warm) in _one_run(size, order, _timed).items():
                samples[name].cold.append(cold)
                samples[name].warm.append(warm)
        if memory and size < LARGE:
            tracemalloc.start()
            for name, (cold, warm) in _one_run(size, list(PATHS), _traced).items():
                samples[name].peak_cold, samples[name].peak_warm = cold, warm
            tracemalloc.stop()
        results[size] = samples
        print(f"  measured {size} messages", file=sys.stderr, flush=True)
    return results, problems


@dataclass
class Churn:
    """The render cache over many branches created, compiled (cold and next turn), dropped."""

    branches: int
    size: int
    most_entries: int = 0  # largest cache size seen while a branch was live
    live_instructions: int = 0  # instructions of that live branch
    entries_after: int = 0  # cache size after the last branch was dropped and one collection
    walks_after: int = 0  # kept walks (_fast.resume) after the last drop and one collection
    retained_next_kib: float = 0.0  # traced memory above the start after one more collection
    retained_kib: float = 0.0  # traced memory after the churn, above the start
    per_branch_kib: float = 0.0  # peak traced memory above the start, while a branch was live


def churn(branches: int, size: int) -> Churn:
    """Create, compile and drop ``branches`` branches of ``size`` messages, one at a time,
    under tracemalloc; one collection after each drop."""
    result = Churn(branches, size)
    _release(None)
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    peak = 0
    for _ in range(branches):
        branch = workload.build_branch(size)
        turn = workload.turns_recorded(branch)
        first = workload.next_instruction(branch, turn)
        compiled_call(branch, first)
        workload.append_turn(branch, first, turn)
        compiled_call(branch, workload.next_instruction(branch, turn + 1))
        entries = _cache.cache_size()
        if entries > result.most_entries:
            result.most_entries = entries
            result.live_instructions = workload.turns_recorded(branch)
        peak = max(peak, tracemalloc.get_traced_memory()[0] - base)
        del branch, first
        _release(None)
    result.entries_after = _cache.cache_size()
    result.walks_after = _resume.walk_count()
    result.retained_kib = (tracemalloc.get_traced_memory()[0] - base) / 1024
    gc.collect()  # a kept walk's records' self-cyclic contents go one collection later
    result.retained_next_kib = (tracemalloc.get_traced_memory()[0] - base) / 1024
    result.per_branch_kib = peak / 1024
    tracemalloc.stop()
    return result


def _ratios(samples: dict[str, Sample], phase: str) -> list[float]:
    legacy = getattr(samples["legacy"], phase)
    compiled = getattr(samples["compiled"], phase)
    return [c / lg for c, lg in zip(compiled, legacy, strict=True)]


def report(
    results: dict[int, dict[str, Sample]], memory: bool, churned: Churn | None
) -> list[str]:
    """Print the tables; return the targets missed."""
    missed: list[str] = []
    print(f"\n{_clock.__name__} per call in ms (min / median / max)")
    print(f"{'messages':>8} {'path':>8} | {'cold':^29} | {'warm':^29} | us/msg cold  warm")
    for size, samples in results.items():
        for name, s in samples.items():
            cold_us = statistics.median(s.cold) / size * 1e6
            per = f"{cold_us:8.2f} {statistics.median(s.warm) / size * 1e6:6.2f}"
            print(f"{size:>8} {name:>8} | {_mmm(s.cold, 1e3)} | {_mmm(s.warm, 1e3)} | {per}")
    print(
        "\ncompiled / legacy ratio per paired run (min / median / max); "
        f"target at {', '.join(map(str, TARGET_SIZES))} messages: "
        f"cold <= {TARGETS['cold']}, warm <= {TARGETS['warm']} (median)"
    )
    for size, samples in results.items():
        row = []
        for phase in ("cold", "warm"):
            ratios = _ratios(samples, phase)
            mid = statistics.median(ratios)
            row.append(f"{phase} {min(ratios):.4f} / {mid:.4f} / {max(ratios):.4f}")
            if size in TARGET_SIZES and mid > TARGETS[phase]:
                missed.append(f"{size} messages {phase}: median ratio {mid:.4f} > {TARGETS[phase]}")
        print(f"{size:>8}  " + "   ".join(row))
    if PROFILES:
        print(
            f"\nother profiles / default profile (compiled), per run (min / median / max); "
            f"target median <= {PROFILE_SLACK}"
        )
        for size, samples in results.items():
            row = []
            for name in PROFILES:
                for phase in ("cold", "warm"):
                    base = getattr(samples["compiled"], phase)
                    other = getattr(samples[name], phase)
                    ratios = [o / b for o, b in zip(other, base, strict=True)]
                    mid = statistics.median(ratios)
                    row.append(f"{name} {phase} {min(ratios):.2f}/{mid:.2f}/{max(ratios):.2f}")
                    held = phase == "warm" or name not in CEILING_PATHS
                    if size in TARGET_SIZES and held and mid > PROFILE_SLACK:
                        missed.append(
                            f"{size} messages {name} {phase}: {mid:.2f}x the default profile"
                        )
            print(f"{size:>8}  " + "  ".join(row))
    missed.extend(_linearity(results))
    if memory:
        print("\npeak traced memory of one call, KiB (cold / warm)")
        for size, samples in results.items():
            if not samples["legacy"].peak_cold:
                continue
            cells = "   ".join(
                f"{name} {s.peak_cold / 1024:9.0f} / {s.peak_warm / 1024:8.0f}"
                for name, s in samples.items()
            )
            print(f"{size:>8}  {cells}")
    if churned is not None:
        c = churned
        print(
            f"\nrender cache over {c.branches} branches of {c.size} messages, each compiled "
            "(cold + next turn) and dropped, one collection after each drop:"
        )
        print(
            f"  most entries while a branch was live {c.most_entries} "
            f"(that branch had {c.live_instructions} instructions); entries after the last "
            f"drop {c.entries_after}; kept walks after the last drop {c.walks_after}; peak "
            f"traced {c.per_branch_kib:.0f} KiB; retained after the churn {c.retained_kib:.0f} "
            f"KiB, after one more collection {c.retained_next_kib:.0f} KiB"
        )
        if c.entries_after or c.walks_after or c.most_entries > c.live_instructions:
            missed.append(
                f"render cache: {c.entries_after} entries and {c.walks_after} walks left after "
                f"the churn, at most {c.most_entries} entries for {c.live_instructions} live "
                "instructions"
            )
    return missed


def _linearity(results: dict[int, dict[str, Sample]]) -> list[str]:
    """Compiled median cost per message from LINEAR_FROM to the largest size."""
    sizes = [s for s in results if s >= LINEAR_FROM]
    if len(sizes) < 2:
        return []
    low, high = min(sizes), max(sizes)
    missed = []
    print(f"\ncompiled cost per message, {high} vs {low} messages (linear: <= {LINEAR_SLACK}x)")
    for phase in ("cold", "warm"):
        per = {
            size: statistics.median(getattr(results[size]["compiled"], phase)) / size
            for size in (low, high)
        }
        growth = per[high] / per[low]
        print(f"  {phase}: {per[low] * 1e6:.2f} -> {per[high] * 1e6:.2f} us/msg ({growth:.2f}x)")
        if growth > LINEAR_SLACK:
            missed.append(f"{phase} per-message cost grew {growth:.2f}x from {low} to {high}")
    return missed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, 1 run; checks only")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per size (default 5)")
    parser.add_argument(
        "--large-runs", type=int, default=1, help=f"runs per size >= {LARGE} (default 1)"
    )
    parser.add_argument("--sizes", default="100,1000,10000,100000", help="comma-separated sizes")
    parser.add_argument("--no-memory", action="store_true", help="skip the tracemalloc passes")
    parser.add_argument(
        "--branches", type=int, default=1000, help="branches in the cache churn (default 1000)"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    parser.add_argument("--wall", action="store_true", help="time wall clock, not CPU time")
    args = parser.parse_args(argv)
    sizes = [20, 60] if args.smoke else [int(s) for s in args.sizes.split(",") if s]
    runs = 1 if args.smoke else args.runs
    branches = 20 if args.smoke else args.branches
    if runs < 1 or args.large_runs < 1 or not sizes or min(sizes) < 2:
        parser.error("--runs/--large-runs must be >= 1 and --sizes positive (>= 2)")

    global _clock
    _clock = time.perf_counter if args.wall else time.process_time
    os.chdir(tempfile.mkdtemp(prefix="lionagi-turns-bench-cwd-"))  # lionagi reads ./.env
    started = time.perf_counter()
    results, problems = run(sizes, runs, args.large_runs, memory=not args.no_memory)
    churned = None if args.no_memory or branches < 1 else churn(branches, 100)
    missed = report(results, not args.no_memory, churned)
    print(f"\ntotal {time.perf_counter() - started:.1f} s")
    for problem in problems:
        print(f"OUTPUT MISMATCH: {problem}", file=sys.stderr)
    if problems:
        return 1
    if args.check and missed:
        for miss in missed:
            print(f"TARGET MISSED: {miss}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
