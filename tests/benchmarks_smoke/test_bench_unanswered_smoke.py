"""``benchmarks/bench_unanswered.py --smoke`` runs its sizes and prints times and ratios."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_unanswered.py"


@pytest.mark.slow
def test_smoke_mode_marks_and_prints_ratios(tmp_path: Path) -> None:
    env = {**os.environ, "LIONAGI_HOME": str(tmp_path / "home"), "LOG_AUTO_SAVE_ON_EXIT": "false"}
    done = subprocess.run(
        [sys.executable, str(BENCH), "--smoke"], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "mark ×" in lines[0] and "repair ×" in lines[0]
    rows = {line.split()[0]: line.split() for line in lines[1:3]}
    assert set(rows) == {"200", "2,000"}
    small, large = int(rows["200"][1]), int(rows["2,000"][1].replace(",", ""))
    assert 0 < small < large and 9 * small <= large <= 11 * small  # every 20th turn unanswered
    assert len(rows["2,000"]) == 8  # three times and three ratios
    assert lines[3].startswith("targets: 200 -> 2,000 messages")
    assert not [p for p in tmp_path.iterdir() if p.name != "home"]
