"""``lionagi-turns compile --profile amendment1 --ceiling N [--low-water N]``: the ceiling, how
full each section is, the truncation point and how many turns of typical size fit before the
next drop step; bad values exit 2 naming them, a system over the ceiling exits 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_ceiling import SYSTEM, branch, loop
from .test_cli import _run, _saved


@pytest.fixture
def saved(tmp_path: Path) -> str:
    b = branch(system=SYSTEM)
    loop(b, 20, None)
    return _saved(tmp_path, b)


def test_json_reports_the_ceiling_per_section_and_the_turns_left(
    capsys: pytest.CaptureFixture[str], saved: str
) -> None:
    code, out, _ = _run(capsys, "compile", saved, "--profile", "amendment1", "--ceiling", "900",
                        "--low-water", "500", "--format", "json")
    assert code == 0
    report = json.loads(out)
    ceiling = report["ceiling"]
    assert ceiling["ceiling"] == 900 and ceiling["low_water"] == 500
    assert ceiling["used"] <= 500  # a saved branch without a record: this request steps
    assert ceiling["stepped"] is True
    assert sum(ceiling["sections"].values()) == ceiling["used"]
    history = next(b for b in report["bounds"] if b["section"] == "history")
    assert history["left_out"] and ceiling["first"] in history["kept"]
    assert ceiling["turns_before_next_step"] == (900 - ceiling["used"]) // ceiling["typical_turn"]


def test_text_shows_the_ceiling_table_and_the_truncation_point(
    capsys: pytest.CaptureFixture[str], saved: str
) -> None:
    code, out, _ = _run(capsys, "compile", saved, "--profile", "amendment1", "--ceiling", "900")
    assert code == 0
    text = " ".join(out.split())  # the console wraps long lines
    assert "Input ceiling 900 tokens" in text
    assert "truncation point: history starts at" in text
    assert "more turns of that size fit before the next drop step" in text


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--ceiling", "0"], "InputCeiling.tokens must be > 0, got 0"),
        (["--ceiling", "100", "--low-water", "200"], "low_water 200 is above the ceiling"),
        (["--low-water", "5"], "--low-water needs --ceiling"),
    ],
)
def test_bad_ceiling_values_exit_2_naming_them(
    capsys: pytest.CaptureFixture[str], saved: str, argv: list[str], named: str
) -> None:
    code, _, err = _run(capsys, "compile", saved, "--profile", "amendment1", *argv)
    assert code == 2
    assert named in err


def test_a_system_over_the_ceiling_exits_1_naming_it(
    capsys: pytest.CaptureFixture[str], saved: str
) -> None:
    code, _, err = _run(capsys, "compile", saved, "--profile", "amendment1", "--ceiling", "10")
    assert code == 1
    assert "the system section measures" in err and "over its budget of 10" in err
