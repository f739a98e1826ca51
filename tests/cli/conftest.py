"""Fixtures for the CLI tests: ``lionagi-turns`` run in process through ``main(argv)``.

``run_cli`` captures standard output, standard error and the exit code of ``main(argv)``, with a
fixed terminal width and no colour, in a temporary working directory. While it runs, an audit
hook records every subprocess, ``exec``, socket connection and DNS lookup; a run that made one
fails the test (the CLI makes none). ``run_cli_process`` runs the installed console script (or
``python -m lionagi_turns``) as a real subprocess, for the smoke tests only.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lionagi import Branch

from lionagi_turns.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
BIN = Path(sys.executable).parent

_WATCHED = (
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "socket.connect",
    "socket.getaddrinfo",
    "socket.gethostbyname",
)
_seen: list[tuple[str, str]] | None = None


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _seen is not None and event.startswith(_WATCHED):
        _seen.append((event, repr(args)[:200]))


sys.addaudithook(_audit)  # audit hooks cannot be removed; it records only while armed


@contextlib.contextmanager
def watched() -> Iterator[list[tuple[str, str]]]:
    """Record the watched events (see the module docstring) raised inside the block."""
    global _seen
    _seen = events = []
    try:
        yield events
    finally:
        _seen = None


@dataclass(frozen=True)
class Run:
    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str
    events: tuple[tuple[str, str], ...] = ()

    def json(self) -> Any:
        return json.loads(self.stdout)


@pytest.fixture
def tmp_path() -> Iterator[Path]:
    """A short temporary directory for the files the CLI reads: the CLI prints their paths at a
    fixed width, so how a path wraps or is shortened must not depend on pytest's base directory
    or on the xdist worker's (``popen-gw0/``) added to it."""
    path = Path(tempfile.mkdtemp(prefix="lt-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def run_cli(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory):
    """``run_cli(*args, cwd=None, env=None, allow_io=False)``: ``main(list(args))`` in process.
    An ``env`` value of None removes that variable."""

    def run(
        *args: str,
        cwd: Path | None = None,
        env: dict[str, str | None] | None = None,
        allow_io: bool = False,
    ) -> Run:
        out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
        err = io.StringIO()
        with monkeypatch.context() as mp:
            mp.chdir(cwd if cwd is not None else tmp_path_factory.mktemp("cli-cwd"))
            mp.setenv("COLUMNS", "100")
            mp.setenv("NO_COLOR", "1")
            mp.delenv("LIONAGI_TURNS_MAX_BYTES", raising=False)
            for key, value in (env or {}).items():
                if value is None:
                    mp.delenv(key, raising=False)
                else:
                    mp.setenv(key, value)
            mp.setattr(sys, "stdout", out)
            mp.setattr(sys, "stderr", err)
            code: Any = 0
            with watched() as events:
                try:
                    main(list(args))
                except SystemExit as exc:
                    code = exc.code
        stdout = out.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]
        result = Run(tuple(args), int(code or 0), stdout, err.getvalue(), tuple(events))
        if not allow_io:
            assert result.events == (), f"the CLI started a process or used the network: {events}"
        return result

    return run


@pytest.fixture
def run_cli_process(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Run]:
    """``run_cli_process(*args, cwd=None, env=None, module=False)`` runs the installed console
    script (``python -m lionagi_turns`` when ``module``) as a subprocess, isolated: its own
    LIONAGI_HOME and working directory, no log auto-save, fixed width, no colour."""

    def run(
        *args: str,
        cwd: Path | None = None,
        env: dict[str, str | None] | None = None,
        module: bool = False,
    ) -> Run:
        home = tmp_path_factory.mktemp("lionagi-home")
        workdir = cwd if cwd is not None else tmp_path_factory.mktemp("cli-cwd")
        full_env = {
            **os.environ,
            "LIONAGI_HOME": str(home),
            "LOG_AUTO_SAVE_ON_EXIT": "false",
            "COLUMNS": "100",
            "NO_COLOR": "1",
            "PYTHONIOENCODING": "utf-8",
        }
        for key, value in (env or {}).items():
            if value is None:
                full_env.pop(key, None)
            else:
                full_env[key] = value
        command: Sequence[str] = (
            [sys.executable, "-m", "lionagi_turns", *args]
            if module
            else [str(BIN / "lionagi-turns"), *args]
        )
        done = subprocess.run(
            command,
            cwd=workdir,
            env=full_env,
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=120,
            check=False,
        )
        return Run(tuple(args), done.returncode, done.stdout, done.stderr)

    return run


def save(branch: Branch, path: Path) -> Path:
    """Write ``branch`` as lionagi saves it: ``Branch.to_dict(mode="json")``."""
    path.write_text(json.dumps(branch.to_dict(mode="json"), indent=2), encoding="utf-8")
    return path


def edit(source: Path, target: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """Copy a saved branch with ``change`` applied to its JSON."""
    data = json.loads(source.read_text(encoding="utf-8"))
    change(data)
    target.write_text(json.dumps(data, indent=2), encoding="utf-8")
    return target


@pytest.fixture
def conversation(tmp_path: Path) -> Path:
    """A saved branch with a system message, guidance, a tool round and a multi-line system."""
    branch = Branch(system="You are terse.\nAnswer in English.")
    branch.msgs.add_message(instruction="What is 2+2?", guidance="Show your work.")
    branch.msgs.add_message(assistant_response="4, because 2+2=4.")
    request = branch.msgs.add_message(action_function="add", action_arguments={"a": 2, "b": 3})
    branch.msgs.add_message(action_request=request, action_output=5)
    branch.msgs.add_message(instruction="And 2+3?")
    branch.msgs.add_message(assistant_response="5.")
    return save(branch, tmp_path / "conversation.json")


def assert_bad_input(run: Run, *needles: str) -> str:
    """Exit 2, nothing on stdout, one stderr line without a traceback; returns the line."""
    assert run.code == 2, (run.code, run.stderr)
    assert run.stdout == ""
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("lionagi-turns: ")
    assert "Traceback" not in run.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]
