"""``benchmarks/bench_context_tiers.py --smoke`` (a short loop, not timed): it runs, prints the
five rows and the targets; by the server's own count (a tokenizer counting ~18% more than
o200k) every bounded row holds the ceiling lionagi alone passes, and compaction keeps at least
the planted facts tiers 1+2 keep (the 150-round run's figures are the benchmark's own)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_context_tiers.py"
ROW = re.compile(
    r"^\| ([^|]+?) \| (\d+) \| [\d.]+ \| [\d.]+ \| \d+/\d+ \| (\d+)/(\d+) \| (\d+) \|$", re.M)


def test_a_short_loop_prints_the_five_rows_and_holds_the_servers_ceiling(tmp_path: Path) -> None:
    env = {**os.environ, "LIONAGI_HOME": str(tmp_path / "home"), "LOG_AUTO_SAVE_ON_EXIT": "false"}
    done = subprocess.run([sys.executable, str(BENCH), "--smoke"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "by the server's count (1.18x o200k)" in done.stdout
    rows = {m.group(1): (int(m.group(2)), int(m.group(3)), int(m.group(4)))
            for m in ROW.finditer(done.stdout)}
    assert list(rows) == ["lionagi alone", "the ADR's rule", "stepped drops (today)",
                          "tiers 1+2", "tiers 1+2+3"], done.stdout
    assert rows["lionagi alone"][0] > 0
    assert all(rows[r][0] == 0 for r in rows if r != "lionagi alone"), done.stdout
    assert rows["tiers 1+2+3"][1] >= rows["tiers 1+2"][1], done.stdout
    assert rows["tiers 1+2+3"][1] == rows["tiers 1+2+3"][2], done.stdout  # every fact kept
    assert done.stdout.count("target ") == 5, done.stdout
