"""Fixtures for the end-to-end tests: a real 127.0.0.1 chat server and a fake ``claude`` CLI.

At import time (before any e2e test module imports lionagi) an executable named ``claude`` is
written to a private temporary directory that is put FIRST on ``PATH``; it runs
``fake_claude.py`` with this interpreter. lionagi resolves the binary lazily and caches a
successful lookup, so the ``fake_claude`` fixture also pins lionagi's cache to this binary for
the test (restored afterwards).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .http_server import ChatServer

_E2E_DIR = Path(__file__).resolve().parent
_FAKE_BIN_DIR = Path(tempfile.mkdtemp(prefix="lionagi-turns-fake-claude-"))
atexit.register(shutil.rmtree, _FAKE_BIN_DIR, ignore_errors=True)
FAKE_CLAUDE = _FAKE_BIN_DIR / "claude"
FAKE_CLAUDE.write_text(
    f'#!/bin/sh\nexec "{sys.executable}" "{_E2E_DIR / "fake_claude.py"}" "$@"\n',
    encoding="utf-8",
)
FAKE_CLAUDE.chmod(FAKE_CLAUDE.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
os.environ["PATH"] = f"{_FAKE_BIN_DIR}{os.pathsep}{os.environ.get('PATH', '')}"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def chat_server() -> Iterator[ChatServer]:
    with ChatServer() as server:
        yield server


@pytest.fixture
def openai_model(chat_server: ChatServer) -> Callable[[], Any]:
    """Factory of fresh OpenAI-style iModels pointed at ``chat_server`` (design §7 recipe)."""
    from lionagi import iModel

    def make() -> Any:
        return iModel(
            provider="openai",
            model="gpt-4.1-mini",
            api_key="x",
            base_url=chat_server.base_url,
            requires_tokens=False,
            allow_local_network=True,
        )

    return make


@dataclass
class FakeClaude:
    """The per-test view of the fake CLI: what to play and what it was asked."""

    log: Path
    script_file: Path

    def script(self, *turns: dict[str, Any]) -> None:
        """Turn N of the session plays ``turns[N]`` (see fake_claude.py for the keys)."""
        self.script_file.write_text(json.dumps(list(turns)), encoding="utf-8")

    def calls(self) -> list[dict[str, Any]]:
        """One record per spawned process: ``argv``, ``prompt``, ``resume``, ``model``, ``cwd``."""
        if not self.log.exists():
            return []
        lines = self.log.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]


@pytest.fixture
def fake_claude(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> FakeClaude:
    from lionagi.providers.anthropic import claude_code

    state = tmp_path_factory.mktemp("fake-claude")
    fake = FakeClaude(log=state / "calls.jsonl", script_file=state / "script.json")
    fake.script()
    monkeypatch.setenv("FAKE_CLAUDE_LOG", str(fake.log))
    monkeypatch.setenv("FAKE_CLAUDE_SCRIPT", str(fake.script_file))
    monkeypatch.setattr(claude_code, "CLAUDE_CLI", str(FAKE_CLAUDE))
    monkeypatch.setattr(claude_code, "HAS_CLAUDE_CODE_CLI", True)
    return fake


@pytest.fixture
def claude_model(fake_claude: FakeClaude) -> Callable[[], Any]:
    """Factory of fresh claude_code iModels; they spawn the fake CLI."""
    from lionagi import iModel

    def make() -> Any:
        return iModel(provider="claude_code", model="sonnet")

    return make


@pytest.fixture
def offline_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """lionagi's context-provider budget calls tiktoken, which cannot download here: count
    whitespace-separated words instead (deterministic, positive for non-empty text)."""
    from lionagi.service.token_calculator import TokenCalculator

    def tokenize(s_: str | None = None, /, *args: Any, **kwargs: Any) -> int:
        return len(s_.split()) if s_ else 0

    monkeypatch.setattr(TokenCalculator, "tokenize", staticmethod(tokenize))


@pytest.fixture
def turns_installed() -> Iterator[None]:
    """lionagi's call surfaces routed through the compiler for the test's duration."""
    from lionagi_turns.integration import installed

    with installed():
        yield
