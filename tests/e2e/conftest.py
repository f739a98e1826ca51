"""Fixtures for the end-to-end tests: a real 127.0.0.1 chat server and fake CLI executables.

At import time (before any e2e test module imports lionagi) executables named ``claude``,
``codex``, ``agy`` and ``pi`` are written to a private temporary directory that is put FIRST on
``PATH``; each runs its ``fake_<name>.py`` with this interpreter. lionagi resolves each binary
when its provider module is imported and keeps the result, so the ``fake_claude`` and
``fake_clis`` fixtures also pin lionagi's resolved paths to these binaries for the test
(restored afterwards).
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


def _fake_executable(name: str, script: str) -> Path:
    path = _FAKE_BIN_DIR / name
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{_E2E_DIR / script}" "$@"\n',
                    encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


#: The other CLIs lionagi 0.36 drives (``fake_codex.py``, ``fake_agy.py``, ``fake_pi.py``).
FAKE_CODEX = _fake_executable("codex", "fake_codex.py")
FAKE_AGY = _fake_executable("agy", "fake_agy.py")
FAKE_PI = _fake_executable("pi", "fake_pi.py")
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


@dataclass
class FakeCLIs:
    """The per-test view of the fake ``codex``, ``agy`` and ``pi``: one shared call log."""

    log: Path
    replies_file: Path

    def replies(self, *texts: str) -> None:
        """Call N of each program answers ``texts[N]`` (see fake_cli_log.py)."""
        self.replies_file.write_text(json.dumps(list(texts)), encoding="utf-8")

    def calls(self, program: str) -> list[dict[str, Any]]:
        """One record per spawned ``program``: ``argv``, ``stdin``, ``cwd``."""
        if not self.log.exists():
            return []
        lines = self.log.read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines if line.strip()]
        return [r for r in records if r["program"] == program]

    def reset(self) -> None:
        """Forget every call (the next call of each program is call 0 again)."""
        self.log.unlink(missing_ok=True)


@pytest.fixture
def fake_clis(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> FakeCLIs:
    """The fakes logged to a fresh file, and lionagi's resolved binaries pinned to them."""
    from lionagi.providers.google import gemini_code
    from lionagi.providers.openai import codex
    from lionagi.providers.pi import cli as pi_cli

    state = tmp_path_factory.mktemp("fake-clis")
    fake = FakeCLIs(log=state / "calls.jsonl", replies_file=state / "replies.json")
    fake.replies()
    monkeypatch.setenv("FAKE_CLI_LOG", str(fake.log))
    monkeypatch.setenv("FAKE_CLI_REPLIES", str(fake.replies_file))
    for module, path_name, has_name, path in (
        (codex, "CODEX_CLI", "HAS_CODEX_CLI", FAKE_CODEX),
        (gemini_code, "AGY_CLI", "HAS_AGY", FAKE_AGY),
        (pi_cli, "PI_CLI", "HAS_PI_CLI", FAKE_PI),
    ):
        monkeypatch.setattr(module, path_name, str(path))
        monkeypatch.setattr(module, has_name, True)
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
