"""Fixtures for the CLI tests: the installed ``lionagi-turns`` run as a subprocess, isolated.

Each run gets its own LIONAGI_HOME and working directory (both temporary), no log auto-save,
a fixed terminal width and no colour, so output is stable and nothing lands in the checkout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lionagi import Branch

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Run:
    args: tuple[str, ...]
    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)


@pytest.fixture
def run_cli(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Run]:
    """``run_cli(*args, cwd=None, env=None, module=False)`` runs the installed console script
    (``python -m lionagi_turns`` when ``module``) and returns its exit code and output. An
    ``env`` value of None removes that variable."""

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
