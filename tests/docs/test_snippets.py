"""Every snippet in the README and the tutorial runs as written: each README Python snippet in
a fresh interpreter; the tutorial's Python and bash snippets in order, in one empty directory
(a ``console`` block, the install line, is not run). The one change made to a snippet: the
local server's address ``http://127.0.0.1:8000/v1`` becomes a recording OpenAI-compatible
server on an ephemeral port, which must then have received the snippet's calls."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from e2e.http_server import ChatServer  # type: ignore[import-not-found]

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
TUTORIAL = REPO / "docs" / "tutorial.md"
LOCAL = "http://127.0.0.1:8000/v1"
FENCE = re.compile(r"^```(python|bash)\n(.*?)^```", re.DOTALL | re.MULTILINE)
BIN = Path(sys.executable).parent


def _snippets(doc: Path, kinds: tuple[str, ...]) -> list[tuple[str, int, str, str]]:
    """``(document, line, kind, code)`` of each fenced block of one of ``kinds``, in order."""
    text = doc.read_text(encoding="utf-8")
    return [
        (doc.name, text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2))
        for m in FENCE.finditer(text)
        if m.group(1) in kinds
    ]


SNIPPETS = [(d, n, code) for d, n, _, code in _snippets(README, ("python",))]


def _run(kind: str, code: str, cwd: Path, server: ChatServer) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "LOG_AUTO_SAVE_ON_EXIT": "false",
        "NO_COLOR": "1",
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    program = code.replace(LOCAL, server.base_url)
    argv = [sys.executable, "-c", program] if kind == "python" else ["bash", "-e", "-c", program]
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_readme_has_snippets() -> None:
    assert len(SNIPPETS) >= 4


@pytest.mark.parametrize(
    ("doc", "line", "code"), SNIPPETS, ids=[f"{d}:{n}" for d, n, _ in SNIPPETS]
)
def test_the_snippet_runs_as_written(doc: str, line: int, code: str, tmp_path: Path) -> None:
    with ChatServer() as server:
        done = _run("python", code, tmp_path, server)
        assert done.returncode == 0, f"{doc}:{line}\n{done.stderr[-3000:]}"
        if LOCAL in code:
            assert server.requests, f"{doc}:{line} made no call to the local server"


@pytest.mark.slow
def test_the_tutorial_runs_as_written_in_order(tmp_path: Path) -> None:
    steps = _snippets(TUTORIAL, ("python", "bash"))
    assert {kind for _, _, kind, _ in steps} == {"python", "bash"}
    with ChatServer() as server:
        for doc, line, kind, code in steps:
            done = _run(kind, code, tmp_path, server)
            shown = f"{doc}:{line}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
            assert done.returncode == 0, shown
            assert "Traceback" not in done.stderr, f"{doc}:{line}\n{done.stderr[-3000:]}"
        assert len(server.requests) == 2  # the two calls of the capture step
    captured = list((tmp_path / "captures").glob("*.jsonl"))
    assert len(captured) == 1 and len(captured[0].read_text().splitlines()) == 2
    assert (tmp_path / "request.html").read_text().startswith("<!")
