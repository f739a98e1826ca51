"""``lionagi-turns compile --profile amendment1`` (authority, posture, budget, kept, left-out
per section) and ``lionagi-turns check``'s view exclusions, in process through ``main``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lionagi import Branch

from lionagi_turns.amendment1 import EXCLUSIONS_KEY, marker
from lionagi_turns.cli import main

from ._support import (
    add_action_pair,
    add_assistant,
    add_instruction,
    after_fold,
    set_current_progression,
)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        main(list(argv))
    except SystemExit as exc:
        code = int(exc.code or 0)
    else:  # pragma: no cover - main always exits
        code = 0
    out = capsys.readouterr()
    return code, out.out, out.err


def _saved(tmp_path: Path, b: Branch) -> str:
    path = tmp_path / "branch.json"
    path.write_text(json.dumps(b.to_dict(mode="json")), encoding="utf-8")
    return str(path)


def _branch() -> tuple[Branch, list[Any]]:
    b = Branch(system="policy")
    msgs = [add_instruction(b, "q1"), add_assistant(b, "a1")]
    msgs += list(add_action_pair(b, "lookup", {"q": 1}, "found"))
    msgs += [add_instruction(b, "q2"), add_assistant(b, "a2")]
    return b, msgs


def test_json_report_has_every_section_record(tmp_path: Path, capsys) -> None:
    b, msgs = _branch()
    code, out, err = _run(capsys, "compile", _saved(tmp_path, b), "--profile", "amendment1",
                          "--format", "json", "-c", "catalog=row")
    assert code == 0, err
    report = json.loads(out)
    rows = {r["section"]: r for r in report["bounds"]}
    assert list(rows) == ["system", "instruction", "history", "context", "tool_results"]
    assert rows["system"]["authority"] == "operator"
    assert rows["instruction"]["authority"] == "run_instruction"
    assert rows["context"] == {"section": "context", "authority": "material", "posture": "skip",
                               "budget": None, "kept": ["catalog"], "left_out": []}
    assert rows["tool_results"]["kept"] == [str(msgs[3].id)]
    assert "LIONAGI_TOOL_RESULTS_JSON" in report["messages"][2]["content"]


def test_budgets_truncate_and_the_text_view_shows_them(tmp_path: Path, capsys) -> None:
    b, _ = _branch()
    path = _saved(tmp_path, b)
    code, out, err = _run(capsys, "compile", path, "--profile", "amendment1", "--format",
                          "json", "--budget", "history=0")
    assert code == 0, err
    report = json.loads(out)
    history = report["bounds"][2]
    assert history["budget"] == 0 and len(history["left_out"]) == 6
    assert after_fold(report["messages"][0]["content"]).startswith(
        marker("history", 6, "truncated"))
    code, out, _ = _run(capsys, "compile", path, "--profile", "amendment1", "--budget",
                        "history=0")
    assert code == 0
    assert "Sections (ADR-0007 Amendment 1)" in out and "6 truncated" in out
    assert "material" in out and "operator" in out


def test_a_refused_section_exits_1_naming_the_records(tmp_path: Path, capsys) -> None:
    b, _ = _branch()
    code, _, err = _run(capsys, "compile", _saved(tmp_path, b), "--profile", "amendment1",
                        "--budget", "system=0")
    assert code == 1
    assert "refused" in err and "system section measures" in err
    assert "tool_results(material, truncate" in err


@pytest.mark.parametrize("bad", ["history", "nope=3", "history=-1", "history=x"])
def test_bad_budget_options_exit_2(tmp_path: Path, capsys, bad: str) -> None:
    b, _ = _branch()
    code, _, err = _run(capsys, "compile", _saved(tmp_path, b), "--profile", "amendment1",
                        "--budget", bad)
    assert code == 2 and "--budget" in err


def test_budget_without_the_profile_is_refused(tmp_path: Path, capsys) -> None:
    b, _ = _branch()
    code, _, err = _run(capsys, "compile", _saved(tmp_path, b), "--budget", "history=1")
    assert code == 2 and "--profile amendment1" in err


def test_the_default_compile_is_unchanged_by_the_option(tmp_path: Path, capsys) -> None:
    b, _ = _branch()
    path = _saved(tmp_path, b)
    _, default_out, _ = _run(capsys, "compile", path, "--format", "json")
    _, explicit_out, _ = _run(capsys, "compile", path, "--format", "json", "--profile",
                              "default")
    assert default_out == explicit_out
    assert "bounds" not in json.loads(default_out)


def test_check_reports_view_exclusions_recorded_or_not(tmp_path: Path, capsys) -> None:
    b, msgs = _branch()
    keep = [m for m in b.msgs.progression if m not in (msgs[2].id, msgs[3].id)]
    set_current_progression(b, keep)
    b.metadata[EXCLUSIONS_KEY] = {str(msgs[3].id): "compacted"}
    path = _saved(tmp_path, b)
    code, out, err = _run(capsys, "check", path, "--format", "json")
    assert code == 0, err
    rows = json.loads(out)["view_exclusions"]
    assert rows == [
        {"id": str(msgs[2].id), "kind": "ActionRequest", "reason": "evicted", "recorded": False},
        {"id": str(msgs[3].id), "kind": "ActionResponse", "reason": "compacted",
         "recorded": True},
    ]
    code, out, _ = _run(capsys, "check", path)
    flat = " ".join(out.split())
    assert "view exclusions (2)" in flat and "unrecorded" in flat and "compacted" in flat


def test_json_has_the_shared_shape_and_sections_that_add_up(tmp_path: Path, capsys) -> None:
    """The amendment1 report has the fields of every compile report (``view``, ``records``,
    ``sections``, ``schema``); its sections count the truncation marker and the tool results
    once each, and total the request's characters."""
    b, msgs = _branch()
    path = _saved(tmp_path, b)
    code, out, err = _run(capsys, "compile", path, "--profile", "amendment1", "--format",
                          "json", "--budget", "history=0", "-c", "catalog=row")
    assert code == 0, err
    report = json.loads(out)
    assert report["schema"] == "lionagi-turns/compile@1" and report["profile"] == "amendment1"
    assert report["view"] == "messages.progression" and report["records"] == len(msgs) + 1
    sections = report["sections"]
    rows = [name for name in sections if name != "total"]
    assert sections["total"]["characters"] == sum(sections[n]["characters"] for n in rows)
    assert sections["total"]["tokens"] == sum(sections[n]["tokens"] for n in rows)
    assert sections["total"]["characters"] == sum(len(m["content"]) for m in report["messages"])
    assert sections["system"]["characters"] == len("policy")
    assert sections["context_blocks"]["characters"] > len("row")
    code, text, _ = _run(capsys, "compile", path, "--profile", "amendment1", "--budget",
                         "history=0", "-c", "catalog=row")
    assert code == 0
    assert f"{sections['total']['characters']:,}" in text and "the sum of the rows" in text
