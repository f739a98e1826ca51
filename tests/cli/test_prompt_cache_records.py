"""``compile --profile prompt-cache`` and ``check`` on saved branches whose prompt-cache records
were edited: each bad record is ignored and reported (exit 0, the next request exactly the
clean file's, ``check`` warns naming its position), never sent as content, never dropping a
message; the stable segment shown is the branch's system text."""

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from prompt_cache._records import (
    SAVED_RECORD_SHAPES,
    TEXT_SHAPES,
    conversation,
    next_view,
    sent,
    well_formed,
)

from lionagi_turns.cli._load import load_branch
from lionagi_turns.profiles.prompt_cache._compile import RECORD_KEY

Edit = Callable[[dict[str, Any]], None]


def saved(tmp_path: Path, edit: Edit | None = None, name: str = "cached.json") -> Path:
    data = json.loads(json.dumps(conversation().to_dict(), default=str))
    if edit is not None:
        edit(data)
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def records(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The saved instructions, in order."""
    return [m for m in data["messages"]["collections"]
            if m["metadata"].get("lion_class", "").endswith("Instruction")]


def compiled(run_cli: Any, path: Path) -> dict[str, Any]:
    run = run_cli("compile", str(path), "--profile", "prompt-cache", "--format", "json")
    assert run.code == 0, run.stderr
    out: dict[str, Any] = run.json()
    return out


def warned(run_cli: Any, path: Path) -> list[dict[str, Any]]:
    run = run_cli("check", str(path), "--format", "json")
    assert run.code == 0, run.stderr
    return [w for w in run.json()["warnings"] if w["kind"] == "prompt_cache_record"]


@pytest.mark.parametrize("name", list(TEXT_SHAPES))
def test_a_saved_text_that_is_not_a_text(run_cli: Any, tmp_path: Path, name: str) -> None:
    def edit(data: dict[str, Any]) -> None:
        records(data)[0]["metadata"][RECORD_KEY]["text"] = copy.deepcopy(TEXT_SHAPES[name])

    clean = compiled(run_cli, saved(tmp_path))
    out = compiled(run_cli, saved(tmp_path, edit, "edited.json"))
    assert sent(out) == sent(clean)
    assert out["messages"][0]["role"] == "user"  # the first instruction is still sent
    well_formed(out)
    assert [i["position"] for i in out["ignored_records"]] == [1]
    assert [w["positions"] for w in warned(run_cli, tmp_path / "edited.json")] == [[1]]
    assert not warned(run_cli, tmp_path / "cached.json")


@pytest.mark.parametrize("name", list(SAVED_RECORD_SHAPES))
def test_a_saved_record_that_is_not_a_record(run_cli: Any, tmp_path: Path, name: str) -> None:
    def edit(data: dict[str, Any]) -> None:
        metadata = records(data)[-1]["metadata"]
        metadata[RECORD_KEY] = SAVED_RECORD_SHAPES[name](metadata[RECORD_KEY])

    clean = compiled(run_cli, saved(tmp_path))
    out = compiled(run_cli, saved(tmp_path, edit, "edited.json"))
    assert sent(out) == sent(clean)
    well_formed(out)
    assert [i["position"] for i in out["ignored_records"]] == [5]
    assert [w["positions"] for w in warned(run_cli, tmp_path / "edited.json")] == [[5]]


def test_a_saved_forged_text_is_not_sent_and_check_reports_it(
    run_cli: Any, tmp_path: Path
) -> None:
    def edit(data: dict[str, Any]) -> None:
        records(data)[1]["metadata"][RECORD_KEY]["text"] = "Instruction: forged"

    path = saved(tmp_path, edit)
    out = compiled(run_cli, path)
    assert "forged" not in json.dumps(out["messages"])
    assert out["messages"][2]["content"] in ("Instruction: q1",
                                             [{"type": "text", "text": "Instruction: q1"}])
    assert out["changes"]["history_rewrite"]
    (warning,) = warned(run_cli, path)
    assert warning["positions"] == [3] and "durable view is sent instead" in warning["message"]


def test_the_view_shows_the_saved_branchs_system(run_cli: Any, tmp_path: Path) -> None:
    branch = conversation()
    branch.msgs.add_message(system="SYSTEM-TWO")
    path = tmp_path / "two.json"
    path.write_text(json.dumps(branch.to_dict(), default=str), encoding="utf-8")
    out = compiled(run_cli, path)
    assert out["system"][0]["text"] == "SYSTEM-TWO"
    assert out["changes"]["stable"]
    live = next_view(branch)  # what the next call on the live branch sends
    # (the CLI's next instruction is its placeholder; everything before it is the same)
    assert out["system"] == live["system"] and out["messages"][:-1] == live["messages"][:-1]
    assert sent(next_view(load_branch(path).branch, tools=False)) == sent(live)


def test_forged_stable_blocks_show_neither_a_system_nor_eight_megabytes(
    run_cli: Any, tmp_path: Path
) -> None:
    def forged(data: dict[str, Any]) -> None:
        records(data)[0]["metadata"][RECORD_KEY]["stable_blocks"][0] = "FORGED SYSTEM"

    def many(data: dict[str, Any]) -> None:
        records(data)[0]["metadata"][RECORD_KEY]["stable_blocks"] = ["x" * 80] * 100_000

    clean = compiled(run_cli, saved(tmp_path))
    out = compiled(run_cli, saved(tmp_path, forged, "forged.json"))
    assert sent(out) == sent(clean) and out["system"][0]["text"] == "SYSTEM-ONE"
    run = run_cli("compile", str(saved(tmp_path, many, "many.json")), "--profile",
                  "prompt-cache", "--format", "json")
    assert run.code == 0, run.stderr
    assert len(run.stdout) < 20_000
    assert "FORGED" not in run.stdout
    assert [i["position"] for i in run.json()["ignored_records"]] == [1]


def test_the_text_view_prints_one_line_per_ignored_record(run_cli: Any, tmp_path: Path) -> None:
    def edit(data: dict[str, Any]) -> None:
        records(data)[0]["metadata"][RECORD_KEY]["text"] = None

    run = run_cli("compile", str(saved(tmp_path, edit)), "--profile", "prompt-cache")
    assert run.code == 0, run.stderr
    lines = [line for line in run.stdout.splitlines() if line.startswith("ignored record")]
    assert len(lines) == 1 and "position 1" in lines[0]
