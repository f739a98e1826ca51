"""The benchmark's smoke mode (what CI runs) works, and fails when the fast path is wrong."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from lionagi_turns.core import render as render
from lionagi_turns.memo.switch import fast_path_enabled

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_compile.py"


@pytest.mark.slow
def test_smoke_mode_runs_and_prints_ratios(tmp_path: Path) -> None:
    env = {**os.environ, "LIONAGI_HOME": str(tmp_path / "home"), "LOG_AUTO_SAVE_ON_EXIT": "false"}
    env.pop("LIONAGI_TURNS_NO_FAST_PATH", None)
    done = subprocess.run(
        [sys.executable, str(BENCH), "--smoke"], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "compiled / legacy ratio" in done.stdout
    assert "peak traced memory" in done.stdout
    assert list(tmp_path.iterdir()) == [tmp_path / "home"] or not list(tmp_path.iterdir())


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCH.parent))
    spec = importlib.util.spec_from_file_location("bench_compile_under_test", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_output_check_reports_a_wrong_fast_path(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert bench.check_outputs(12) == []
    real = render.instruction_text

    def broken(content: Any) -> str:  # a fast path that adds a trailing space
        return real(content) + (" " if fast_path_enabled() else "")

    monkeypatch.setattr(render, "instruction_text", broken)
    problems = bench.check_outputs(12)
    assert problems and "fast path differs" in problems[0]
    assert bench.main(["--sizes", "12", "--runs", "1", "--no-memory"]) == 1
