"""``scripts/make_examples.py`` reproduces the committed ``examples/`` byte for byte."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conftest import EXAMPLES, REPO

NAMES = ("support", "tools", "images", "broken")


def _make(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LIONAGI_HOME": str(home), "LOG_AUTO_SAVE_ON_EXIT": "false"}
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "make_examples.py"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_make_examples_reproduces_committed_files(tmp_path: Path) -> None:
    out = tmp_path / "examples"
    done = _make("--out", str(out), home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    for name in NAMES:
        assert (out / f"{name}.json").read_bytes() == (EXAMPLES / f"{name}.json").read_bytes(), (
            f"examples/{name}.json is stale: run python scripts/make_examples.py"
        )
    # --check agrees, and notices a changed file.
    assert _make("--check", "--out", str(out), home=tmp_path / "home").returncode == 0
    (out / "tools.json").write_text("{}")
    stale = _make("--check", "--out", str(out), home=tmp_path / "home")
    assert stale.returncode == 1 and "tools.json" in stale.stderr
