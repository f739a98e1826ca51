"""compile says in one line when plain lionagi's own reload of the file would send no system."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lionagi import Branch

from lionagi_turns.cli._compile_view import RELOAD_NOTE

PROFILES = ("default", "amendment1", "prompt-cache")


def saved(tmp_path: Path, system: str | None) -> Path:
    branch = Branch(system=system) if system is not None else Branch()
    branch.msgs.add_message(instruction="first question")
    branch.msgs.add_message(assistant_response="first answer")
    path = tmp_path / f"saved-{system is not None}.json"
    path.write_text(json.dumps(branch.to_dict(mode="json")), encoding="utf-8")
    reloaded = Branch.from_dict(json.loads(path.read_text(encoding="utf-8")))
    assert reloaded.msgs.system is None  # what plain lionagi's reload keeps
    return path


@pytest.mark.parametrize("profile", PROFILES)
def test_a_saved_branch_with_a_system_says_plain_lionagi_would_lose_it(
    run_cli, tmp_path: Path, profile: str
) -> None:
    path = str(saved(tmp_path, "You answer for the depot."))
    text = run_cli("compile", path, "--profile", profile)
    assert text.code == 0, text.stderr
    assert text.stdout.splitlines().count(RELOAD_NOTE) == 1
    shown = run_cli("compile", path, "--profile", profile, "--format", "json")
    assert shown.json()["lionagi_reload_sends_no_system"] is True


@pytest.mark.parametrize("profile", PROFILES)
def test_a_saved_branch_without_a_system_says_nothing_of_it(
    run_cli, tmp_path: Path, profile: str
) -> None:
    path = str(saved(tmp_path, None))
    text = run_cli("compile", path, "--profile", profile)
    assert text.code == 0, text.stderr
    assert "Branch.from_dict" not in text.stdout
    shown = run_cli("compile", path, "--profile", profile, "--format", "json")
    assert shown.json()["lionagi_reload_sends_no_system"] is False
