"""Cost of marking unanswered turns: ``mark_unanswered_turns`` and the installed repair.

Run from the repository root, in the project's virtualenv::

    python benchmarks/bench_unanswered.py                 # 1,000, 10,000 and 100,000 messages
    python benchmarks/bench_unanswered.py --smoke         # CI: 200 and 2,000 messages, checks only
    python benchmarks/bench_unanswered.py --check         # exit 1 if a target is missed

Each branch holds turns of one instruction and one assistant response, except that every 20th
turn has no answer (a turn that failed without ``install()``). For each size this prints, in
seconds of process CPU time: ``mark_unanswered_turns`` on it (``mark``), the same call again
with nothing left to mark (``again``), ``repair_before_call`` (the installed repair) on a fresh
copy (``repair``), the markers recorded, and each time's ratio to the previous size's.

Targets (``--check``): from 10,000 to 100,000 messages each time grows at most ``RATIO_TARGET``
times, and ``mark`` at 100,000 messages takes at most ``LARGEST_TARGET`` seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Callable

from lionagi import Branch

from lionagi_turns.integration._repair import repair_before_call
from lionagi_turns.integration._unanswered import mark_unanswered_turns

RATIO_TARGET = 15.0
LARGEST_TARGET = 10.0
SIZES = (1_000, 10_000, 100_000)
SMOKE_SIZES = (200, 2_000)


def build_branch(messages: int) -> Branch:
    """About ``messages`` records: turns of instruction + answer, every 20th one unanswered."""
    branch = Branch()
    turn = 0
    while len(branch.msgs.progression) < messages:
        branch.msgs.add_message(instruction=f"question {turn}")
        if turn % 20 != 19:
            branch.msgs.add_message(assistant_response=f"answer {turn}")
        turn += 1
    return branch


def _cpu(step: Callable[[], object]) -> tuple[float, object]:
    start = time.process_time()
    result = step()
    return time.process_time() - start, result


def measure(messages: int) -> dict[str, float]:
    """CPU seconds of ``mark``, ``again`` and ``repair`` on a branch of ``messages`` records."""
    branch = build_branch(messages)
    mark, markers = _cpu(lambda: asyncio.run(mark_unanswered_turns(branch)))
    again, none = _cpu(lambda: asyncio.run(mark_unanswered_turns(branch)))
    fresh = build_branch(messages)
    repair, repaired = _cpu(lambda: asyncio.run(repair_before_call(fresh)))
    assert isinstance(markers, list) and isinstance(repaired, list) and none == []
    if len(markers) != len(repaired) or not markers:
        raise SystemExit(
            f"{messages} messages: mark recorded {len(markers)}, repair {len(repaired)}"
        )
    return {"mark": mark, "again": again, "repair": repair, "markers": float(len(markers))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    sizes = SMOKE_SIZES if args.smoke else SIZES
    rows: list[tuple[int, dict[str, float]]] = []
    print(f"{'messages':>9} {'markers':>8} {'mark s':>9} {'again s':>9} {'repair s':>9}"
          f" {'mark ×':>7} {'again ×':>8} {'repair ×':>9}")
    for size in sizes:
        row = measure(size)
        prev = rows[-1][1] if rows else None
        ratios = ["" if prev is None else f"{row[k] / max(prev[k], 1e-6):.1f}"
                  for k in ("mark", "again", "repair")]
        print(f"{size:>9,} {int(row['markers']):>8,} {row['mark']:>9.3f} {row['again']:>9.3f}"
              f" {row['repair']:>9.3f} {ratios[0]:>7} {ratios[1]:>8} {ratios[2]:>9}")
        rows.append((size, row))
    print(f"targets: {sizes[-2]:,} -> {sizes[-1]:,} messages at most {RATIO_TARGET:g}x;"
          f" mark at {sizes[-1]:,} within {LARGEST_TARGET:g} s")
    if not args.check:
        return 0
    (_, before), (_, last) = rows[-2], rows[-1]
    missed = [k for k in ("mark", "again", "repair")
              if last[k] / max(before[k], 1e-3) > RATIO_TARGET]
    if last["mark"] > LARGEST_TARGET:
        missed.append("largest")
    print("targets met" if not missed else f"targets missed: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
