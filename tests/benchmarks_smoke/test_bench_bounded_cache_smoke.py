"""``benchmarks/bench_bounded_cache.py`` in smoke mode (a few rounds, not timed): it runs, prints
the table with the three modes, and the stepped mode holds the ceiling lionagi alone passes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_bounded_cache.py"


def test_smoke_mode_prints_the_three_modes_and_holds_the_ceiling(tmp_path: Path) -> None:
    env = {**os.environ, "LIONAGI_HOME": str(tmp_path / "home"), "LOG_AUTO_SAVE_ON_EXIT": "false"}
    done = subprocess.run(
        [sys.executable, str(BENCH), "--rounds", "6", "--smoke"], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = {m.group(1): m.group(2) for m in re.finditer(
        r"^\| (lionagi|adr|stepped)\s+\|\s+(yes|no) ", done.stdout, re.M)}
    assert rows == {"lionagi": "no", "adr": "yes", "stepped": "yes"}, done.stdout
    assert list(tmp_path.iterdir()) == [tmp_path / "home"] or not list(tmp_path.iterdir())
