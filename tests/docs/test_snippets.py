"""Every Python snippet in the README and the tutorial runs as written, each in a fresh
interpreter. The one change made to a snippet: the local server's address
``http://127.0.0.1:8000/v1`` becomes a recording OpenAI-compatible server on an ephemeral port,
which must then have received the snippet's calls."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from e2e.http_server import ChatServer  # type: ignore[import-not-found]

REPO = Path(__file__).resolve().parents[2]
DOCS = (REPO / "README.md", REPO / "docs" / "tutorial.md")
LOCAL = "http://127.0.0.1:8000/v1"
FENCE = re.compile(r"^```python\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _snippets() -> list[tuple[str, int, str]]:
    found = []
    for doc in DOCS:
        if not doc.exists():
            continue
        text = doc.read_text(encoding="utf-8")
        for match in FENCE.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append((doc.name, line, match.group(1)))
    return found


SNIPPETS = _snippets()


def test_the_readme_has_snippets() -> None:
    assert sum(name == "README.md" for name, _, _ in SNIPPETS) >= 4


@pytest.mark.parametrize(
    ("doc", "line", "code"), SNIPPETS, ids=[f"{d}:{n}" for d, n, _ in SNIPPETS]
)
def test_the_snippet_runs_as_written(doc: str, line: int, code: str, tmp_path: Path) -> None:
    with ChatServer() as server:
        uses_server = LOCAL in code
        program = code.replace(LOCAL, server.base_url)
        env = {**os.environ, "LOG_AUTO_SAVE_ON_EXIT": "false"}
        done = subprocess.run(
            [sys.executable, "-c", program], cwd=tmp_path, env=env, capture_output=True,
            text=True, timeout=120, check=False,
        )
        assert done.returncode == 0, f"{doc}:{line}\n{done.stderr[-3000:]}"
        if uses_server:
            assert server.requests, f"{doc}:{line} made no call to the local server"
