"""``scripts/make_examples.py`` reproduces the committed ``examples/`` byte for byte (run in
process through its ``main(argv)``)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from .conftest import EXAMPLES, REPO

NAMES = ("support", "tools", "images", "broken")


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_examples", REPO / "scripts" / "make_examples.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_make_examples_reproduces_committed_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = _script()
    out = tmp_path / "examples"
    assert script.main(["--out", str(out)]) == 0
    for name in NAMES:
        assert (out / f"{name}.json").read_bytes() == (EXAMPLES / f"{name}.json").read_bytes(), (
            f"examples/{name}.json is stale: run python scripts/make_examples.py"
        )
    # --check agrees, and notices a changed file.
    assert script.main(["--check", "--out", str(out)]) == 0
    (out / "tools.json").write_text("{}")
    capsys.readouterr()
    assert script.main(["--check", "--out", str(out)]) == 1
    assert "tools.json" in capsys.readouterr().err
