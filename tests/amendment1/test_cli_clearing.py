"""``lionagi-turns compile --profile amendment1 --ceiling N --clear-results KEEP``: the text and
JSON views list each cleared tool result (which, why, its size); bad values exit 2 naming
them; without ``--clear-results`` the report is the ceiling's as before."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from .test_clearing import SYSTEM, branch, loop
from .test_cli import _run, _saved


@pytest.fixture
def saved(tmp_path: Path) -> str:
    b = branch(system=SYSTEM)
    loop(b, 12, None)  # results of 600 to 1,800 characters, no ceiling record
    return _saved(tmp_path, b)


ARGS = ("--profile", "amendment1", "--ceiling", "2000", "--low-water", "1500")


def test_json_lists_each_cleared_result_in_the_record_and_in_left_out(
    capsys: pytest.CaptureFixture[str], saved: str
) -> None:
    code, out, _ = _run(capsys, "compile", saved, *ARGS, "--clear-results", "1",
                        "--format", "json")
    assert code == 0
    report = json.loads(out)
    ceiling = report["ceiling"]
    results = next(b for b in report["bounds"] if b["section"] == "tool_results")
    cleared = [e for e in results["left_out"] if e["reason"] == "cleared"]
    assert cleared and [e["name"] for e in cleared] == ceiling["cleared"]
    assert ceiling["cleared_tokens"] == sum(e["tokens"] for e in cleared)
    assert not set(ceiling["cleared"]) & set(results["kept"])
    sent = "\n".join(m["content"] for m in report["messages"] if isinstance(m["content"], str))
    for entry in cleared:
        assert f"id={entry['name']} tokens={entry['tokens']}]" in sent
    # clearing first: fewer history records are dropped than by the ceiling alone
    code, plain_out, _ = _run(capsys, "compile", saved, *ARGS, "--format", "json")
    plain = json.loads(plain_out)
    assert "cleared" not in plain["ceiling"]

    def dropped(r: dict) -> int:
        return len(next(b for b in r["bounds"] if b["section"] == "history")["left_out"])

    assert dropped(report) < dropped(plain)


def test_text_names_the_cleared_results_and_their_size(
    capsys: pytest.CaptureFixture[str], saved: str
) -> None:
    code, out, _ = _run(capsys, "compile", saved, *ARGS, "--clear-results", "1")
    assert code == 0
    text = " ".join(out.split())
    assert "tool results cleared:" in text
    assert "tool_results: left out" in text and "[cleared]" in text


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--ceiling", "2000", "--clear-results", "-1"], "ToolResultClearing.keep must be >= 0"),
        (["--clear-results", "2"], "--clear-results needs --ceiling"),
    ],
)
def test_bad_clearing_values_exit_2_naming_them(
    capsys: pytest.CaptureFixture[str], saved: str, argv: list[str], named: str
) -> None:
    code, _, err = _run(capsys, "compile", saved, "--profile", "amendment1", *argv)
    assert code == 2
    assert named in err and len(err.strip().splitlines()) == 1


def test_the_html_page_says_how_many_results_are_cleared(
    capsys: pytest.CaptureFixture[str], saved: str
) -> None:
    code, out, _ = _run(capsys, "compile", saved, *ARGS, "--clear-results", "1",
                        "--format", "html")
    assert code == 0
    assert re.search(r"<li>\d+ older tool result\(s\) cleared, [\d,]+ tokens", out)
    # each cleared result in the tool_results row: its id, why, its size
    assert re.search(r'<li class="left">[0-9a-f-]{36}: cleared \([\d,]+ tokens\)</li>', out)
