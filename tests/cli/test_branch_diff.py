"""``lionagi-turns diff A.json B.json``: how the next request differs between two saved
branches, labelled by message and section; ``diff PATH --format json``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .conftest import EXAMPLES, assert_bad_input, edit


def _fork(tmp_path: Path) -> tuple[Path, Path]:
    """support.json and a copy whose system (two lines, as before, so the fold's framing is
    unchanged) and second answer were edited."""
    source = EXAMPLES / "support.json"

    def change(data: dict[str, Any]) -> None:
        data["system"]["content"]["system_message"] = "You are Bea.\nBe brief."
        for message in data["messages"]["collections"]:
            content = message.get("content", {})
            if "system_message" in content:  # the stored system is also a record
                content["system_message"] = "You are Bea.\nBe brief."
            if "assistant_response" in content and "BL-7731" in str(content):
                content["assistant_response"] = "Ticket BL-9000 is open."

    return source, edit(source, tmp_path / "fork.json", change)


def test_json_labels_each_message_by_the_sections_that_changed(run_cli, tmp_path: Path) -> None:
    a, b = _fork(tmp_path)
    run = run_cli("diff", str(a), str(b), "--format", "json")
    assert run.code == 1, run.stderr  # they differ
    out = run.json()
    status = [(m["index"], m["status"], m["sections"]) for m in out["messages"]]
    assert status == [
        (0, "changed", ["system"]),
        (1, "identical", []),
        (2, "identical", []),
        (3, "changed", ["history"]),
        (4, "identical", []),
    ]
    assert out["a"]["path"] == str(a) and out["b"]["path"] == str(b)
    system_a, system_b = out["a"]["sections"]["system"], out["b"]["sections"]["system"]
    assert system_a["characters"] == 181
    assert system_b["characters"] == len("You are Bea.\nBe brief.")
    assert out["section_changes"]["system"]["characters"] == system_b["characters"] - 181
    assert out["section_changes"]["guidance"] == {"characters": 0, "tokens": 0, "images": 0}
    assert "+Ticket BL-9000 is open." in out["messages"][3]["diff"]
    assert out["identical"] is False


def test_text_view_titles_each_differing_message(run_cli, tmp_path: Path) -> None:
    a, b = _fork(tmp_path)
    run = run_cli("diff", str(a), str(b))
    assert run.code == 1, run.stderr
    assert "messages[0] user · changed: system" in run.stdout
    assert "messages[3] assistant · changed: history" in run.stdout
    assert "Sections (a → b)" in run.stdout
    assert "2 message(s) differ" in run.stdout


def test_text_view_prints_only_the_differing_messages_and_counts_the_rest(
    run_cli, tmp_path: Path
) -> None:
    """One change among many identical messages: a line for each differing message and one
    line counting the identical ones, never a line per identical message."""
    a, b = _fork(tmp_path)
    run = run_cli("diff", str(a), str(b))
    statuses = [m["status"] for m in run_cli("diff", str(a), str(b), "-f", "json").json()[
        "messages"]]
    same = statuses.count("identical")
    assert same >= 2
    assert ": identical" not in run.stdout
    assert f"{same} identical messages, not shown" in run.stdout


def test_the_same_branch_twice_is_identical_exit_0(run_cli) -> None:
    path = str(EXAMPLES / "tools.json")
    run = run_cli("diff", path, path, "-i", "Thanks.")
    assert run.code == 0, run.stderr
    assert "the two branches send the same next request" in run.stdout


def test_a_longer_branch_shows_the_messages_only_one_sends(run_cli) -> None:
    out = run_cli(
        "diff", str(EXAMPLES / "support.json"), str(EXAMPLES / "tools.json"), "-f", "json"
    ).json()
    assert [m["status"] for m in out["messages"][5:]] == ["only_b", "only_b"]
    assert out["messages"][6]["sections"] == ["current_turn"]


def test_a_rejected_branch_exits_1_naming_it(run_cli) -> None:
    run = run_cli("diff", str(EXAMPLES / "support.json"), str(EXAMPLES / "broken.json"))
    assert run.code == 1 and run.stdout == ""
    assert "broken.json: the compiler rejects this history" in run.stderr


def test_one_branch_diff_has_json_with_sections(run_cli) -> None:
    path = str(EXAMPLES / "support.json")
    run = run_cli("diff", path, "-c", "kb=Refunds take 5 days.", "--format", "json")
    assert run.code == 0, run.stderr
    out = run.json()
    compiled = run_cli("compile", path, "-c", "kb=Refunds take 5 days.", "-f", "json").json()
    assert out["schema"] == "lionagi-turns/diff@1" and out["ok"] is True
    assert out["sections"] == compiled["sections"]
    legacy = out["lionagi_sections"]
    assert legacy["system"]["characters"] == 0  # lionagi keeps no fold plan: in its message
    assert legacy["total"]["characters"] == legacy["history"]["characters"] + legacy[
        "current_turn"]["characters"]
    assert {label for m in out["messages"] for label in m["labels"]} >= {"context-envelope"}


def test_an_unusable_second_branch_exits_2_naming_it(run_cli, tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    run = run_cli("diff", str(EXAMPLES / "support.json"), str(missing))
    assert_bad_input(run, str(missing))
