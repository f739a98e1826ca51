"""benchmarks/bench_workflows.py --smoke runs and prints its figures (in process: the module's
global settings are restored afterwards)."""

from __future__ import annotations

import importlib.util
import logging
import os
import sys
import warnings
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_workflows.py"

pytestmark = pytest.mark.e2e


@pytest.mark.slow
def test_smoke_mode_prints_the_figures(monkeypatch, capsys) -> None:
    from lionagi.providers.anthropic import claude_code
    from lionagi.service.token_calculator import TokenCalculator

    # Everything the benchmark sets process-wide, recorded so monkeypatch restores it.
    monkeypatch.setattr(claude_code, "CLAUDE_CLI", claude_code.CLAUDE_CLI)
    monkeypatch.setattr(claude_code, "HAS_CLAUDE_CODE_CLI", claude_code.HAS_CLAUDE_CODE_CLI)
    monkeypatch.setattr(TokenCalculator, "tokenize", TokenCalculator.tokenize)
    monkeypatch.setenv("FAKE_CLAUDE_LOG", "")
    monkeypatch.setenv("FAKE_CLAUDE_SCRIPT", "")
    monkeypatch.setenv("PATH", os.environ["PATH"])
    monkeypatch.setattr(sys, "path", list(sys.path))
    spec = importlib.util.spec_from_file_location("bench_workflows_under_test", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        with warnings.catch_warnings():
            assert module.main(["--smoke"]) == 0
    finally:
        logging.disable(logging.NOTSET)
    out = capsys.readouterr().out
    assert "characters sent per call" in out
    assert "  HTTP " in out and "  CLI " in out
    assert out.count("mean error") == 6
    assert "token_budget.used after 3 operate(actions=True) rounds" in out
