"""Another lionagi than 0.36.x: one line naming the installed and the supported versions.

A real subprocess with a stand-in ``lionagi`` first on ``PYTHONPATH``: a package whose
``__version__`` is 0.35.5 and that has none of the private functions lionagi-turns calls
(``lionagi.operations.chat._prepare._tool_name`` and the rest), as lionagi 0.35.5 lacks them.
With its distribution metadata (``lionagi-0.35.5.dist-info``) the installed version is 0.35.5
too; without it only the imported module says so (the real 0.36 distribution stays
installed)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import lionagi_turns

from .conftest import BIN, EXAMPLES

SUPPORTED = "lionagi-turns {v} supports lionagi 0.36.x only; install it with: pip install "
SUPPORTED += "'lionagi>=0.36,<0.37'"


def _old_lionagi(root: Path, *, metadata: bool) -> Path:
    package = root / "lionagi"
    (package / "operations" / "chat").mkdir(parents=True)
    (package / "__init__.py").write_text('__version__ = "0.35.5"\n', encoding="utf-8")
    (package / "operations" / "__init__.py").write_text("", encoding="utf-8")
    (package / "operations" / "chat" / "__init__.py").write_text("", encoding="utf-8")
    (package / "operations" / "chat" / "_prepare.py").write_text(
        "def _prepare_run_kwargs(*args, **kwargs):\n    raise NotImplementedError\n",
        encoding="utf-8",
    )
    if metadata:
        info = root / "lionagi-0.35.5.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: lionagi\nVersion: 0.35.5\n", encoding="utf-8"
        )
    return root


def _env(root: Path, home: Path) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONPATH": str(root),
        "LIONAGI_HOME": str(home),
        "LOG_AUTO_SAVE_ON_EXIT": "false",
        "NO_COLOR": "1",
    }


def _expected(metadata: bool) -> str:
    said = "is installed" if metadata else "is imported"
    return f"lionagi 0.35.5 {said}, but {SUPPORTED.format(v=lionagi_turns.__version__)}"


@pytest.mark.parametrize("metadata", [True, False], ids=["dist-info", "module-only"])
def test_the_cli_says_one_line_and_exits_2(tmp_path: Path, metadata: bool) -> None:
    root = _old_lionagi(tmp_path / "site", metadata=metadata)
    done = subprocess.run(
        [str(BIN / "lionagi-turns"), "compile", str(EXAMPLES / "support.json")],
        capture_output=True, text=True, env=_env(root, tmp_path), cwd=tmp_path, timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == f"lionagi-turns: {_expected(metadata)}\n"


_SCRIPT = """
import lionagi_turns
from lionagi_turns.integration import IntegrationError, install as integration_install

assert IntegrationError is lionagi_turns.IntegrationError
print(lionagi_turns.__version__)
for call in (lionagi_turns.install, integration_install, lionagi_turns.uninstall):
    try:
        call()
    except IntegrationError as exc:
        print("install:", exc)
try:
    lionagi_turns.compile_chat_request
except IntegrationError as exc:
    print("compile_chat_request:", exc)
import lionagi_turns.amendment1

try:
    lionagi_turns.amendment1.SectionBudgets
except IntegrationError as exc:
    print("amendment1:", exc)
try:
    lionagi_turns.no_such_name
except AttributeError:
    print("no_such_name: AttributeError")
"""


def test_the_package_imports_and_install_raises_integration_error(tmp_path: Path) -> None:
    root = _old_lionagi(tmp_path / "site", metadata=True)
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        capture_output=True, text=True, env=_env(root, tmp_path), cwd=tmp_path, timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    problem = _expected(True)
    assert done.stdout.splitlines() == [
        lionagi_turns.__version__,
        f"install: {problem}",
        f"install: {problem}",
        f"install: {problem}",
        f"compile_chat_request: {problem}",
        f"amendment1: {problem}",
        "no_such_name: AttributeError",
    ]
    assert done.stderr == ""
