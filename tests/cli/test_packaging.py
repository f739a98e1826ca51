"""The package as a user installs it: one version, its license, its metadata, and a wheel that
installs into a fresh virtual environment where the command runs.

``test_the_wheel_installs_and_runs_in_a_fresh_venv`` (marked ``wheel``) builds the wheel with
``pip wheel --no-deps`` and installs it with its dependencies from the package index (or pip's
cache) into a new venv without pip of its own (``pip --python``): about 12 s."""

from __future__ import annotations

import email
import importlib.metadata
import os
import re
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

import lionagi_turns

from .conftest import EXAMPLES, REPO

APACHE_FIRST_LINES = ("Apache License", "Version 2.0, January 2004")


def test_the_version_has_one_source() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert "version" not in project
    assert "version" in project["dynamic"]
    assert importlib.metadata.version("lionagi-turns") == lionagi_turns.__version__


def test_the_changelog_has_this_release_and_the_earlier_ones() -> None:
    headings = re.findall(
        r"^## (\d+\.\d+\.\d+) \(\d{4}-\d\d-\d\d\)$",
        (REPO / "CHANGELOG.md").read_text(encoding="utf-8"),
        re.M,
    )
    assert headings == [lionagi_turns.__version__, "0.2.0", "0.1.0"]


def test_the_metadata_names_license_authors_and_classifiers() -> None:
    meta = importlib.metadata.metadata("lionagi-turns")
    assert meta["License-Expression"] == "Apache-2.0"
    assert meta.get_all("License-File") == ["LICENSE"]
    assert meta["Author"]
    classifiers = meta.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert "Typing :: Typed" in classifiers
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert [line.strip() for line in text.strip().splitlines()[:2]] == list(APACHE_FIRST_LINES)
    assert "END OF TERMS AND CONDITIONS" in text


def _run(command: list[str], **kwargs: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, check=False, **kwargs
    )
    assert done.returncode == 0, (command, done.stdout[-2000:], done.stderr[-2000:])
    return done


@pytest.mark.slow
@pytest.mark.wheel
def test_the_wheel_installs_and_runs_in_a_fresh_venv(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(REPO)])
    (wheel,) = dist.glob("lionagi_turns-*.whl")
    assert wheel.name == f"lionagi_turns-{lionagi_turns.__version__}-py3-none-any.whl"
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = f"lionagi_turns-{lionagi_turns.__version__}.dist-info"
        assert f"{info}/licenses/LICENSE" in names
        meta = email.message_from_bytes(archive.read(f"{info}/METADATA"))
    assert meta["Version"] == lionagi_turns.__version__
    assert meta["License-Expression"] == "Apache-2.0"
    assert not any(n.startswith(("tests/", "docs/")) for n in names)

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)  # this pip installs into it: no ensurepip run
    python = env_dir / "bin" / "python"
    # --no-compile: no byte-compiling of every installed file (the run below compiles what
    # it imports); the install, dependencies included, is otherwise pip's ordinary one.
    pip = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-compile"]
    _run([*pip, str(wheel)])
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "PATH": os.environ.get("PATH", ""),
        "LIONAGI_HOME": str(home),
        "LOG_AUTO_SAVE_ON_EXIT": "false",
        "NO_COLOR": "1",
        "COLUMNS": "100",
    }
    cli = str(env_dir / "bin" / "lionagi-turns")
    version = _run([cli, "--version"], env=env, cwd=tmp_path)
    assert version.stdout.startswith(f"lionagi-turns {lionagi_turns.__version__} (lionagi 0.36.")
    shown = _run([cli, "compile", str(EXAMPLES / "support.json")], env=env, cwd=tmp_path)
    assert "messages sent: 5" in shown.stdout
    where = _run([str(python), "-c", "import lionagi_turns; print(lionagi_turns.__file__)"],
                 env=env, cwd=tmp_path)
    assert where.stdout.startswith(str(env_dir))  # the installed copy, not the checkout
    assert not (tmp_path / "data").exists()  # lionagi wrote no logs where it ran
