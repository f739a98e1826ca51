"""Every text view a person reads, on every example, command and profile: no Python internals
(``None``, a dict/list/tuple repr), no trailing whitespace, and every count of four digits or
more written with a thousands separator."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import EXAMPLES
from .test_json_schema import EXAMPLE_FILES, PROFILES

# A count is a number followed by a unit word; ids, dates, digests and years are not counts.
UNITS = r"(?:tokens?|chars?|characters?|bytes?|messages?|records?|turns?|used|more|results?)"
UNSEPARATED = re.compile(rf"(?<![\w.,:/-])\d{{4,}}(?![\w.,:/-])\s+{UNITS}\b")
PYTHON_REPR = re.compile(r"\{'\w+': |\['[^']*', '|\(\d+, \d+\)|\bNone\b")

RUNS: list[tuple[str, ...]] = [
    *[("compile", "--profile", p) for p in PROFILES],
    ("compile", "--profile", "amendment1", "--ceiling", "100000"),
    ("compile", "--profile", "amendment1", "--ceiling", "100"),
    ("compile", "--profile", "amendment1", "--budget", "history=20"),
    ("compile", "--profile", "amendment1", "--budget", "system=1"),  # a refusal line
    ("check",),
    ("diff",),
    ("diff", str(EXAMPLES / "support.json")),
]


def readability_problems(text: str) -> list[str]:
    """Each line of ``text`` that shows a Python internal, ends in whitespace, or writes a
    count of four digits or more without a thousands separator."""
    problems = []
    for n, line in enumerate(text.splitlines(), 1):
        if line != line.rstrip():
            problems.append(f"{n}: trailing whitespace: {line!r}")
        if PYTHON_REPR.search(line):
            problems.append(f"{n}: Python internals: {line!r}")
        if UNSEPARATED.search(line):
            problems.append(f"{n}: a count without a thousands separator: {line!r}")
    return problems


def test_the_check_finds_each_case_seen_before() -> None:
    """The four cases the check is for, in the forms the views printed them."""
    for seen in (
        "  0 turns kept, typical None tokens; no kept turn to size the next step by",
        "refused: history(material, truncate, budget None, kept 0, left out 0)",
        "Input ceiling 19986 tokens (low-water 9993): 268 used",
        "│ messages[1] │ ",
        "turn {'messages': 7, 'previous_request_end': None}",
    ):
        assert readability_problems(seen), seen
    for fine in (
        "total          │   1,032 │     924",
        "ticket BL-7731 opened on 2026-12-03 (digest 8cef3d3b1234)",
        "Input ceiling 19,986 tokens (low-water 9,993): 268 used, 1% full",
    ):
        assert readability_problems(fine) == [], fine


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_every_text_view_is_readable(run_cli, path: Path) -> None:
    seen = 0
    for command, *options in RUNS:
        run = run_cli(command, str(path), *options)
        assert run.code in (0, 1), (command, options, run.stderr)
        for text in (run.stdout, run.stderr):
            assert readability_problems(text) == [], (command, options)
        seen += len(run.stdout.splitlines())
    assert seen > 20


def test_zero_kept_turns_say_it_in_words(run_cli) -> None:
    """A ceiling so low that no turn of history fits: the truncation point and the turn
    figures say no turn is kept, with no id of a turn that is not sent and no ``None``."""
    run = run_cli("compile", str(EXAMPLES / "support.json"), "--profile", "amendment1",
                  "--ceiling", "100")
    assert run.code == 0, run.stderr
    text = " ".join(run.stdout.split())
    assert "truncation point: no turn of history is kept" in text
    assert "no turn kept, so no typical turn to size the next drop step by" in text
    assert "history starts at" not in text
