"""benchmarks/bench_prompt_cache.py: the goal of issue 10 holds, measured the benchmark's way."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_prompt_cache.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_prompt_cache_under_test", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.filterwarnings(
    # The seed profile is forced on purpose (the "before" figures); that it warns is tested in
    # tests/integration/test_chat_paths.py.
    "ignore::lionagi_turns.TurnsCompatibilityWarning"
)
def test_the_cache_profile_keeps_every_prefix_and_beats_lionagi(bench: ModuleType) -> None:
    import lionagi_turns

    lionagi_turns.uninstall()
    lionagi, seed, cache = (bench.measure(mode) for mode in bench.MODES)
    assert len(cache.bodies) == len(lionagi.bodies) == len(seed.bodies) == bench.ROUNDS + 1
    assert all(p.ok for p in cache.pairs)
    assert cache.fraction <= bench.GOAL < lionagi.fraction < seed.fraction
    assert sum(p.ok for p in lionagi.pairs) == len(lionagi.pairs) - 1  # ADR-0127 P3
    assert not lionagi_turns.is_installed()


def test_check_mode_exits_zero_when_the_goal_is_met(
    bench: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    assert bench.main(["--check", "--modes", "cache"]) == 0
    out = capsys.readouterr().out
    assert "goal met" in out and "cache" in out
