"""Cost of every ``lionagi-turns`` command against lionagi's own load of the same file.

Run from the repository root, in the project's virtualenv::

    python benchmarks/bench_cli.py                  # 10,000 messages and examples/support.json
    python benchmarks/bench_cli.py --messages 2000  # another size
    python benchmarks/bench_cli.py --smoke          # CI: 200 messages, 1 run, checks only
    python benchmarks/bench_cli.py --check          # exit 1 if a target is missed

For each file (a branch of ``--messages`` messages built by ``workload.build_branch`` and saved
with ``Branch.to_dict(mode="json")``, and ``examples/support.json``) this prints, in seconds
(the minimum over ``--runs`` runs, process CPU time; ``--wall`` for wall time):

- ``lionagi load``: ``json.loads`` of the file and lionagi 0.36's ``Branch.from_dict`` on it,
  the floor every command stands on; and that load plus lionagi's own payload of the next turn
  (``_prepare_run_kwargs``, through ``characterize.legacy``), the floor of ``diff``, which
  compares against it (the load is also shown with the cyclic garbage collector paused, as
  ``lionagi_turns.cli.main`` runs every command; the targets use lionagi's default);
- every command, run in this process through ``lionagi_turns.cli.main(argv)`` with standard
  output written to a temporary file (as a pipe or a redirect would receive it), with its
  ratio to ``compile --format json`` and to the lionagi load, and the bytes it printed.

Targets (``--check``, the larger file only; the example is too small to time apart from
import noise): every text view within ``TEXT_RATIO`` times ``compile --format json`` on the
same file (``diff``'s text view: times ``diff --format json``, since both run lionagi's own
payload, which alone costs more than a compile), and every command within ``LOAD_RATIO``
times its floor (the lionagi load; for ``diff``, the load plus lionagi's payload). A command
that exits with a code other than its expected one stops the run with status 1.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

os.environ.setdefault("LIONAGI_HOME", tempfile.mkdtemp(prefix="lionagi-turns-bench-"))
os.environ.setdefault("LOG_AUTO_SAVE_ON_EXIT", "false")

import workload
from lionagi import Branch

from lionagi_turns import TurnRequest
from lionagi_turns.characterize.legacy import legacy_messages
from lionagi_turns.cli import main

REPO = Path(__file__).resolve().parents[1]
TEXT_RATIO = 1.5
LOAD_RATIO = 2.0

#: (name, argv after the path, is a text view, exit codes it may end with); a ``diff`` is
#: measured against the lionagi load plus lionagi's own payload, which it must compute.
COMMANDS: tuple[tuple[str, tuple[str, ...], bool, frozenset[int]], ...] = (
    ("compile --format json", ("compile", "--format", "json"), False, frozenset({0})),
    ("compile (text)", ("compile",), True, frozenset({0})),
    ("compile --last 20", ("compile", "--last", "20"), True, frozenset({0})),
    ("compile --format html", ("compile", "--format", "html"), False, frozenset({0})),
    ("compile --profile amendment1", ("compile", "--profile", "amendment1"), True,
     frozenset({0})),
    ("compile --profile prompt-cache", ("compile", "--profile", "prompt-cache"), True,
     frozenset({0})),
    ("check (text)", ("check",), True, frozenset({0, 1})),
    ("check --format json", ("check", "--format", "json"), False, frozenset({0, 1})),
    ("diff (text)", ("diff",), True, frozenset({0, 1})),
    ("diff --format json", ("diff", "--format", "json"), False, frozenset({0, 1})),
)

Clock = Callable[[], float]


@contextlib.contextmanager
def _stdout_to(path: Path) -> Iterator[None]:
    old = sys.stdout
    with path.open("w", encoding="utf-8") as out:
        sys.stdout = out
        try:
            yield
        finally:
            sys.stdout = old


def _timed(run: Callable[[], object], clock: Clock, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        gc.collect()
        start = clock()
        run()
        best = min(best, clock() - start)
    return best


def lionagi_load(path: Path) -> Branch:
    branch: Branch = Branch.from_dict(json.loads(path.read_text(encoding="utf-8")))
    return branch


def lionagi_payload(path: Path) -> None:
    """The lionagi load, then lionagi 0.36's own payload of the next turn (what ``diff``
    must compute to compare against)."""
    branch = lionagi_load(path)
    instruction = branch.msgs.create_instruction(instruction="(next instruction)")
    legacy_messages(branch, TurnRequest(instruction=instruction))


class Unsupported(Exception):
    """The command exited 2 (a usage error): this checkout has no such option."""


def run_command(argv: list[str], out: Path, allowed: frozenset[int]) -> None:
    code: object = 0
    with _stdout_to(out):
        try:
            main(argv)
        except SystemExit as exc:
            code = exc.code or 0
    if code == 2 and 2 not in allowed:
        raise Unsupported(argv)
    if code not in allowed:
        raise SystemExit(f"bench_cli: {' '.join(argv)} exited {code}")


def bench_file(path: Path, clock: Clock, runs: int, tmp: Path) -> tuple[float, dict[str, float]]:
    """The lionagi load's time and each command's, printing the table for ``path``."""
    load = _timed(lambda: lionagi_load(path), clock, runs)
    payload = _timed(lambda: lionagi_payload(path), clock, runs)
    gc.disable()
    try:
        paused = _timed(lambda: lionagi_load(path), clock, runs)
    finally:
        gc.enable()
    size = path.stat().st_size
    print(f"\n{path.name}: {size:,} bytes; lionagi load (json.loads + Branch.from_dict) "
          f"{load:.3f} s ({paused:.3f} s with the cyclic collector paused, as the CLI runs); "
          f"with lionagi's own next payload (_prepare_run_kwargs) {payload:.3f} s")
    print(f"{'command':32} {'seconds':>8} {'/json':>6} {'/load':>6} {'printed':>12}"
          "  (/load of a diff: against load + payload)")
    times: dict[str, float] = {}
    out = tmp / "out.txt"
    for name, argv, _, allowed in COMMANDS:
        args = [argv[0], str(path), *argv[1:]]
        try:
            times[name] = _timed(lambda a=args, k=allowed: run_command(a, out, k), clock, runs)
        except Unsupported:
            print(f"{name:32} {'n/a':>8} (exits 2: not in this checkout)")
            continue
        json_time = times["compile --format json"]
        floor = payload if name.startswith("diff") else load
        print(f"{name:32} {times[name]:8.3f} {times[name] / json_time:6.2f} "
              f"{times[name] / floor:6.2f} {out.stat().st_size:12,}")
    return (load, payload), times


def missed(floors: tuple[float, float], times: dict[str, float]) -> list[str]:
    """The targets ``times`` misses (see the module docstring)."""
    problems = []
    for name, _, text, _ in COMMANDS:
        if name not in times:
            problems.append(f"{name}: not available")
            continue
        reference = "diff --format json" if name.startswith("diff") else "compile --format json"
        if text and times[name] > TEXT_RATIO * times[reference]:
            problems.append(f"{name}: {times[name] / times[reference]:.2f}x {reference}")
        load = floors[1] if name.startswith("diff") else floors[0]
        if times[name] > LOAD_RATIO * load:
            problems.append(f"{name}: {times[name] / load:.2f}x the lionagi load")
    return problems


def main_bench() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--wall", action="store_true")
    args = parser.parse_args()
    messages, runs = (200, 1) if args.smoke else (args.messages, args.runs)
    clock: Clock = time.perf_counter if args.wall else time.process_time
    with tempfile.TemporaryDirectory(prefix="bench-cli-") as name:
        tmp = Path(name)
        big = tmp / f"branch-{messages}.json"
        branch = workload.build_branch(messages)
        big.write_text(json.dumps(branch.to_dict(mode="json")), encoding="utf-8")
        del branch
        print(f"clock: {'wall' if args.wall else 'process CPU'} time, best of {runs}")
        floors, times = bench_file(big, clock, runs, tmp)
        bench_file(REPO / "examples" / "support.json", clock, runs, tmp)
    problems = missed(floors, times)
    for problem in problems:
        print(f"target missed: {problem}")
    return 1 if args.check and problems else 0


if __name__ == "__main__":
    sys.exit(main_bench())
