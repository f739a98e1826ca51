"""Loading saved branches: the system comes back, stored views are kept as stored, no writes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lionagi import Branch
from lionagi.protocols.generic.log import Log
from lionagi.protocols.generic.progression import Progression

from lionagi_turns import TurnRequest, compile_chat_request, to_provider_messages
from lionagi_turns.characterize.legacy import legacy_messages
from lionagi_turns.cli._load import load_branch

from .conftest import EXAMPLES, save


def _messages(branch: Branch, text: str = "next") -> list[dict]:
    request = TurnRequest(instruction=branch.msgs.create_instruction(instruction=text))
    return to_provider_messages(compile_chat_request(branch, request))


def test_system_is_restored_and_the_fold_survives(tmp_path: Path) -> None:
    branch = Branch(system="Policy: never share secrets.")
    branch.msgs.add_message(instruction="hi", guidance="be brief")
    branch.msgs.add_message(assistant_response="hello")
    path = save(branch, tmp_path / "b.json")
    data = json.loads(path.read_text())

    # lionagi 0.36's from_dict leaves msgs.system None (lionagi then sends no system); the
    # compiler folds the System record at the pile's head (intended-differences §4.13):
    plain = Branch.from_dict(data)
    assert plain.msgs.system is None
    request = TurnRequest(instruction=plain.msgs.create_instruction(instruction="next"))
    assert "Policy" not in json.dumps(legacy_messages(plain, request))
    assert _messages(plain) == _messages(branch)

    loaded = load_branch(path)
    assert loaded.branch.msgs.system is not None
    assert loaded.branch.msgs.system.id == branch.msgs.system.id
    assert loaded.branch.msgs.system is loaded.branch.msgs.messages[branch.msgs.system.id]
    assert _messages(loaded.branch) == _messages(branch)


def test_current_progression_is_the_view(tmp_path: Path) -> None:
    branch = Branch(system="S")
    old = branch.msgs.add_message(instruction="old question")
    branch.msgs.add_message(assistant_response="old answer")
    new = branch.msgs.add_message(instruction="new question")
    answer = branch.msgs.add_message(assistant_response="new answer")
    branch.metadata["current_progression"] = Progression(order=[new.id, answer.id])
    loaded = load_branch(save(branch, tmp_path / "b.json"))
    assert loaded.view_name == "metadata.current_progression"
    assert loaded.view == (new.id, answer.id)
    sent = json.dumps(_messages(loaded.branch))
    assert "new question" in sent and "old question" not in sent
    assert old.id in loaded.branch.msgs.messages  # evicted from the view, not deleted


def test_examples_load_with_their_system(tmp_path: Path) -> None:
    for name in ("support", "tools", "images", "broken"):
        data = json.loads((EXAMPLES / f"{name}.json").read_text())
        loaded = load_branch(EXAMPLES / f"{name}.json")
        assert str(loaded.branch.msgs.system.id) == data["system"]["id"]
        assert loaded.notes == ()


@pytest.mark.slow
def test_loading_writes_no_logs_even_when_asked(run_cli_process, tmp_path: Path) -> None:
    """Smoke test of the installed console script. A saved branch with logs and a log config
    that auto-saves on exit, plus a .env turning auto-save on: plain lionagi writes a log file
    at exit; the CLI process writes nothing."""
    branch = Branch(system="S", log_config={"auto_save_on_exit": False})
    branch.msgs.add_message(instruction="hi")
    branch.msgs.add_message(assistant_response="hello")
    branch.logs.include(Log.create({"event": "call"}))
    data = branch.to_dict(mode="json", include_log_config=True)
    assert data["logs"]["collections"]
    data["log_config"].update(auto_save_on_exit=True, persist_dir="./saved-logs")
    path = tmp_path / "with-logs.json"
    path.write_text(json.dumps(data))
    env: dict[str, str | None] = {"LOG_AUTO_SAVE_ON_EXIT": None}

    def workdir(name: str) -> Path:
        directory = tmp_path / name
        directory.mkdir()
        (directory / ".env").write_text("LOG_AUTO_SAVE_ON_EXIT=true\nLOG_PERSIST_DIR=./dotenv\n")
        return directory

    control = workdir("control")
    loader = (
        "import json, sys; from lionagi import Branch; "
        "Branch.from_dict(json.load(open(sys.argv[1])))"
    )
    subprocess.run(
        [sys.executable, "-c", loader, str(path)],
        cwd=control,
        env={**{k: v for k, v in os.environ.items() if k != "LOG_AUTO_SAVE_ON_EXIT"}},
        capture_output=True,
        check=True,
        timeout=120,
    )
    assert len(list(control.rglob("*.json"))) == 1  # plain lionagi saved the logs

    quiet = workdir("quiet")
    run = run_cli_process("compile", str(path), "--format", "json", cwd=quiet, env=env)
    assert run.code == 0, run.stderr
    assert sorted(p.name for p in quiet.rglob("*")) == [".env"]
