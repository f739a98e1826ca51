"""``compile --format html`` of a long branch: summary first, a bounded page of messages, and
``--last`` / ``--around`` choosing the same messages in the page and in the text view."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from lionagi import Branch

from lionagi_turns.cli._window import AROUND, PAGE

from .conftest import save


def _long_branch(pairs: int, path: Path) -> Path:
    branch = Branch(system="You are a careful assistant.")
    for i in range(pairs):
        branch.msgs.add_message(instruction=f"question {i}: " + "why is it slow? " * 10)
        branch.msgs.add_message(assistant_response=f"answer {i}: " + "check the index. " * 6)
    return save(branch, path)


@pytest.fixture(scope="module")
def branches(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    where = tmp_path_factory.mktemp("long")
    return _long_branch(150, where / "small.json"), _long_branch(1_500, where / "large.json")


def _shown(page: str) -> list[int]:
    return [int(k) for k in re.findall(r'<details class="message" id="m(\d+)"', page)]


def test_a_long_branchs_page_is_bounded_and_summary_first(run_cli, branches) -> None:
    """Ten times the messages, about the same page: what grows is the summary's numbers, not
    one row per message (a 10,000-message branch's page stays well under 1 MB)."""
    small, large = (run_cli("compile", str(p), "-f", "html").stdout for p in branches)
    assert len(large.encode()) < 1.3 * len(small.encode()) and len(large.encode()) < 1_000_000
    heads = [large.index(h) for h in ("<h2>Sections", "<h2>Current turn", "<h2>Largest 20",
                                      "<h2>Messages")]
    assert heads == sorted(heads) and large.index('<details class="message"') > heads[-1]
    assert ".seg{min-width:" in large  # a section too small for 0.01% is still drawn
    count = 2 * 1_500 + 1  # the history, then the current turn (the system text is folded)
    assert _shown(large) == list(range(count - PAGE, count))
    assert f"{count - PAGE:,} of {count:,} message(s) not shown" in large
    largest = re.search(r'<ol class="largest">(.*?)</ol>', large, re.S)
    assert largest is not None and largest.group(1).count("<li>") == 20
    assert f'<a href="#m{count - 1}">messages[{count - 1}]</a>' in large  # the current turn


def test_a_section_under_a_hundredth_of_a_percent_says_so() -> None:
    from lionagi_turns.cli._html import _share

    assert _share(0.0, {"tokens": 3}) == "&lt;0.01" and _share(0.0, {"tokens": 0}) == "0.00"
    assert _share(12.5, {"tokens": 3}) == "12.50"


def test_last_and_around_page_html_and_text_alike(run_cli, branches) -> None:
    path = str(branches[1])
    k = 1_234
    page = run_cli("compile", path, "--around", str(k), "-f", "html").stdout
    assert _shown(page) == list(range(k - AROUND, k + AROUND + 1))
    text = run_cli("compile", path, "--around", str(k)).stdout
    frames = [int(i) for i in re.findall(r"^╭─ \[(\d+)\]", text, re.M)]
    assert frames == list(range(k - AROUND, k + AROUND + 1))
    last = run_cli("compile", path, "--last", "3", "-f", "html").stdout
    assert _shown(last) == [2_998, 2_999, 3_000]
    text = run_cli("compile", path, "--last", "3").stdout
    assert [int(i) for i in re.findall(r"^╭─ \[(\d+)\]", text, re.M)] == [2_998, 2_999, 3_000]
