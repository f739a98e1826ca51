"""``lionagi-turns show`` on a capture file written by installed calls (real subprocess)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from lionagi import Branch, iModel
from rich.cells import cell_len

import lionagi_turns

from .http_server import ChatServer

pytestmark = pytest.mark.usefixtures("offline_tokens")


def _cli(*args: str, columns: str = "120") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lionagi_turns", *args],
                          capture_output=True, text=True, timeout=60, env={**os.environ,
                                                                             "COLUMNS": columns})


@pytest.fixture
def capture_file(tmp_path: Path) -> Path:
    lionagi_turns.uninstall()
    lionagi_turns.install(capture_dir=tmp_path)
    try:
        with ChatServer() as server:
            server.script("one", "two")
            model = iModel(provider="openai", model="gpt-4.1-mini", api_key="sk-x",
                           base_url=server.base_url, requires_tokens=False,
                           allow_local_network=True)
            branch = Branch(system="be brief", chat_model=model)
            asyncio.run(branch.communicate("first question"))
            asyncio.run(branch.communicate("second question"))
    finally:
        lionagi_turns.uninstall()
    (found,) = tmp_path.iterdir()
    return found


def test_show_lists_every_call(capture_file: Path) -> None:
    done = _cli("show", str(capture_file), "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)["calls"]
    lines = [json.loads(x) for x in capture_file.read_text().splitlines()]
    assert [r["branch"] for r in rows] == [x["branch"] for x in lines]
    assert [r["call"] for r in rows] == [1, 2]
    assert rows[1]["tokens"]["total"] > rows[0]["tokens"]["total"] > 0
    text = _cli("show", str(capture_file))
    assert text.returncode == 0 and "gpt-4.1-mini" in text.stdout


def test_show_one_call_as_compile_shows_it(capture_file: Path) -> None:
    done = _cli("show", str(capture_file), "--call", "2")
    assert done.returncode == 0, done.stderr
    assert "second question" in done.stdout and "Sections" in done.stdout
    page = _cli("show", str(capture_file), "--call", "2", "--format", "html")
    assert page.returncode == 0 and page.stdout.startswith("<!DOCTYPE html>")
    assert "second question" in page.stdout
    line = _cli("show", str(capture_file), "--call", "1", "--format", "json")
    assert json.loads(line.stdout) == json.loads(capture_file.read_text().splitlines()[0])


def test_a_call_is_framed_as_compile_frames_a_request_within_the_width(
    capture_file: Path,
) -> None:
    """``show --call N`` is the one request view: the rule, a frame per message (``[i] role``,
    its place and size, its rows), the sections table; no line wider than the console."""
    done = _cli("show", str(capture_file), "--call", "2", columns="60")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "─" * 60 and "lionagi-turns show" in lines[1]  # a long path: wrapped
    assert all(cell_len(line) <= 60 for line in lines)
    frames = re.findall(r"^╭─ \[(\d+)\] (\w+)  (history|current turn) ─", done.stdout, re.M)
    assert frames == [("0", "user", "history"), ("1", "assistant", "history"),
                      ("2", "user", "current turn")]
    assert "│          │ Instruction: second question" in lines
    assert lines.count("╰" + "─" * 59) == 3 and "Sections" in lines


def test_call_out_of_range_exits_2_naming_the_range(capture_file: Path) -> None:
    done = _cli("show", str(capture_file), "--call", "3")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "(1..2)" in done.stderr


def test_a_corrupt_line_exits_2_naming_it(capture_file: Path) -> None:
    with capture_file.open("a") as out:
        out.write("{not json\n")
    done = _cli("show", str(capture_file))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "line 3" in done.stderr


def test_diff_two_captured_calls(capture_file: Path) -> None:
    done = _cli("show", str(capture_file), "--call", "1", "--diff", "2", "--format", "json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["identical"] is False
    statuses = [m["status"] for m in report["messages"]]
    assert statuses[-1] == "only_b" and report["b"]["path"].endswith("#2")
    same = _cli("show", str(capture_file), "--call", "2", "--diff", f"{capture_file}#2")
    assert same.returncode == 0, same.stderr
    bad = _cli("show", str(capture_file), "--call", "1", "--diff", "x")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
