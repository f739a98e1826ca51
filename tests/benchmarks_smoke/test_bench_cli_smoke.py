"""``benchmarks/bench_cli.py --smoke`` runs every command it times and prints its table."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_cli.py"


@pytest.mark.slow
def test_smoke_mode_times_every_command(tmp_path: Path) -> None:
    env = {**os.environ, "LIONAGI_HOME": str(tmp_path / "home"), "LOG_AUTO_SAVE_ON_EXIT": "false"}
    done = subprocess.run(
        [sys.executable, str(BENCH), "--smoke"], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    for name in ("compile --format json", "compile (text)", "compile --last 20",
                 "compile --format html", "check (text)", "diff (text)"):
        assert done.stdout.count(f"\n{name} ") == 2, name  # the built branch and the example
    assert "n/a" not in done.stdout
    assert "lionagi load (json.loads + Branch.from_dict)" in done.stdout
    assert not [p for p in tmp_path.iterdir() if p.name != "home"]
