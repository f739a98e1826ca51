"""``benchmarks/bench_context_tiers.py`` on a short loop (not timed): it runs, prints the four
rows, every bounded row holds the ceiling lionagi alone passes, and tiers 1+2 keep at least
as many planted facts and turns as stepped drops alone (the 150-round run's gap is the
benchmark's own figure)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_context_tiers.py"
ROW = re.compile(r"^\| ([^|]+?) \| (\d+) \| [\d.]+ \| [\d.]+ \| \d+/\d+ \| (\d+)/40 \| (\d+) \|$",
                 re.M)


@pytest.mark.slow
def test_a_short_loop_prints_the_four_rows_and_the_tiers_keep_more(tmp_path: Path) -> None:
    env = {**os.environ, "LIONAGI_HOME": str(tmp_path / "home"), "LOG_AUTO_SAVE_ON_EXIT": "false"}
    done = subprocess.run(
        [sys.executable, str(BENCH), "--rounds", "16", "--ceiling-round", "6"], cwd=tmp_path,
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = {m.group(1): (int(m.group(2)), int(m.group(3)), int(m.group(4)))
            for m in ROW.finditer(done.stdout)}
    assert set(rows) == {"lionagi alone", "the ADR's rule", "stepped drops (today)",
                         "tiers 1+2"}, done.stdout
    assert rows["lionagi alone"][0] > 0
    assert all(rows[r][0] == 0 for r in rows if r != "lionagi alone")
    tiers, stepped = rows["tiers 1+2"], rows["stepped drops (today)"]
    assert tiers[1] >= stepped[1] and tiers[2] >= stepped[2], done.stdout
