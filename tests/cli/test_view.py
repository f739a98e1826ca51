"""The text views as plain lines, ``--last N``, and progress on a terminal's standard error."""

from __future__ import annotations

import gc
import io
import os
import re
import select
import threading
import time
from pathlib import Path

import pytest
from lionagi import Branch
from rich.console import Console

from lionagi_turns.cli import _progress
from lionagi_turns.cli._lines import Lines, sgr

from .conftest import EXAMPLES, save
from .test_compile_prompt_cache import saved_conversation

SUPPORT = str(EXAMPLES / "support.json")


def test_a_long_line_wraps_within_the_width_and_loses_nothing(run_cli, tmp_path: Path) -> None:
    """A message line wider than the console continues on ``┆`` rows of its frame, each
    within the width (100 columns here), broken after a space; joined, they are the line."""
    line = " ".join(f"word{i}" for i in range(150))  # about 1,000 characters
    branch = Branch()
    branch.msgs.add_message(instruction=line)
    path = save(branch, tmp_path / "long.json")
    run = run_cli("compile", str(path), "-i", "next")
    assert run.code == 0, run.stderr
    lines = run.stdout.splitlines()
    start = lines.index(next(t for t in lines if t.startswith("│          │ Instruction: word0")))
    end = next(k for k in range(start + 1, len(lines)) if not lines[k].startswith("│          ┆"))
    rows = lines[start:end]
    assert len(rows) > 10 and all(len(t) <= 100 for t in lines)
    assert " ".join(t[13:] for t in rows) == f"Instruction: {line}"
    frames = [text for text in lines if text.startswith(("╭─ [", "╰─"))]
    assert [f[:8] for f in frames] == ["╭─ [0] u", "╰───────", "╭─ [1] u", "╰───────"]
    assert "\x1b" not in run.stdout


def test_diff_lines_are_whole_and_framed(run_cli) -> None:
    """A diff line wider than the console continues on ``│ ┆`` lines: read back together
    they are the whole line."""
    run = run_cli("diff", SUPPORT)
    assert run.code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert any(text.startswith("╭─ messages[0] ") for text in lines)
    starts = [n for n, text in enumerate(lines) if text.startswith("│ -  Be accurate")]
    assert len(starts) == 1
    n = starts[0]
    whole = [lines[n][2:]]
    while lines[n + 1].startswith("│ ┆ "):
        n += 1
        whole.append(lines[n][4:])
    assert " ".join(whole).endswith("if they are missing.")
    assert "".join(whole).replace(" ", "") == (
        "-  Be accurate and kind. Never promise refunds yourself: billing disputes go to the "
        "human billing team through a ticket.Answer in at most three sentences. Ask for "
        "invoice numbers if they are missing.").replace(" ", "")


def test_last_shows_the_last_messages_and_says_how_many_are_left_out(run_cli) -> None:
    full = run_cli("compile", SUPPORT)
    run = run_cli("compile", SUPPORT, "--last", "2")
    assert run.code == full.code == 0, run.stderr
    assert "… 3 earlier message(s) of 5 not shown (--last 2); --format json prints them all" \
        in run.stdout
    assert re.findall(r"^╭─ \[(\d+)\]", run.stdout, re.M) == ["3", "4"]
    assert re.findall(r"^╭─ \[(\d+)\]", full.stdout, re.M) == ["0", "1", "2", "3", "4"]
    assert "not shown (--last" not in full.stdout
    assert full.stdout.split("Sections")[1] == run.stdout.split("Sections")[1]  # all counted
    none = run_cli("compile", SUPPORT, "--last", "0")
    assert "… 5 earlier message(s) of 5 not shown (--last 0)" in none.stdout
    assert "╭─ [" not in none.stdout
    assert run_cli("compile", SUPPORT, "--last", "5").stdout == full.stdout


def test_last_leaves_the_json_complete(run_cli) -> None:
    args = ("compile", SUPPORT, "-f", "json")
    assert run_cli(*args, "--last", "1").stdout == run_cli(*args).stdout
    args = ("diff", SUPPORT, "-f", "json")
    assert run_cli(*args, "--last", "1").stdout == run_cli(*args).stdout


def test_last_in_every_view(run_cli, tmp_path: Path) -> None:
    diff = run_cli("diff", SUPPORT, "--last", "1")
    assert diff.code == 0 and "… 4 earlier message(s) of 5 not shown" in diff.stdout
    assert "messages[4]: identical" in diff.stdout and "messages[0]" not in diff.stdout
    amended = run_cli("compile", SUPPORT, "--profile", "amendment1", "--last", "1")
    assert amended.code == 0 and "… 4 earlier message(s)" in amended.stdout
    assert re.findall(r"^╭─ \[(\d+)\] ", amended.stdout, re.M) == ["4"]
    path = saved_conversation(tmp_path)
    cached = run_cli("compile", str(path), "--profile", "prompt-cache", "--last", "2")
    assert cached.code == 0 and "… 3 earlier message(s) of 5 not shown" in cached.stdout
    assert re.findall(r"^╭─ \[(\d+)\]", cached.stdout, re.M) == ["3", "4"]
    assert "1h (stable)" in cached.stdout  # the system blocks stay
    other = save(Branch(), tmp_path / "empty.json")
    pair = run_cli("diff", SUPPORT, str(other), "--last", "1")
    assert pair.code == 1 and "… 4 earlier message(s) of 5 not shown" in pair.stdout


def test_html_is_for_compile_only(run_cli) -> None:
    for command in ("check", "diff"):
        run = run_cli(command, SUPPORT, "--format", "html")
        assert run.code == 2 and run.stdout == ""
        assert run.stderr.strip() == (
            "lionagi-turns: bad option: --format/-f takes one of: text, json"
        )


def test_styles_only_on_a_colour_terminal() -> None:
    plain = io.StringIO()
    out = Lines(Console(file=plain, width=60, color_system=None))
    out.write(out.styled("ok", "bold green") + " " + out.inert("a\x1b]0;t\x07b", "red"))
    assert plain.getvalue() == "ok a\\x1b]0;t\\x07b\n"
    coloured = io.StringIO()
    out = Lines(Console(file=coloured, width=60, force_terminal=True, color_system="standard"))
    assert out.colour
    out.write(out.inert("a\x1bb", "red"))
    assert coloured.getvalue() == "\x1b[31ma\x1b[0m\x1b[7m\\x1b\x1b[0m\x1b[31mb\x1b[0m\n"
    assert sgr("bold magenta") == "1;35" and sgr("bold magenta", colour=False) == "1"
    hueless = io.StringIO()
    out = Lines(Console(file=hueless, force_terminal=True, color_system="standard", no_color=True))
    out.write(out.styled("x", "bold red") + out.styled("y", "green"))
    assert hueless.getvalue() == "\x1b[1mx\x1b[0my\n"  # NO_COLOR: bold stays, as Rich does
    with pytest.raises(ValueError, match="unknown style 'blink'"):
        sgr("blink")


def test_nothing_reaches_a_stderr_that_is_not_a_terminal(
    run_cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_progress, "DELAY", 0.0)
    threads = threading.active_count()
    with _progress.progress() as step:
        step("working")
        time.sleep(0.05)
    assert threading.active_count() == threads  # no timer was started
    for args in (("compile", SUPPORT), ("check", SUPPORT), ("diff", SUPPORT)):
        run = run_cli(*args)
        assert run.code == 0 and run.stderr == "" and run.stdout, args


def _pty_stderr(monkeypatch: pytest.MonkeyPatch) -> int:
    """Standard error on a pseudo-terminal; returns the side that reads what was written."""
    reader, writer = os.openpty()
    stream = open(writer, "w", encoding="utf-8", closefd=True)  # noqa: SIM115
    monkeypatch.setattr("sys.stderr", stream)
    monkeypatch.setenv("TERM", "xterm")
    monkeypatch.delenv("NO_COLOR", raising=False)
    return reader


def _read(fd: int) -> str:
    chunks = []
    while select.select([fd], [], [], 0.2)[0]:
        chunks.append(os.read(fd, 65536))
    return b"".join(chunks).decode("utf-8", "replace")


def test_a_terminal_sees_progress_only_after_the_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    reader = _pty_stderr(monkeypatch)
    monkeypatch.setattr(_progress, "DELAY", 0.05)
    with _progress.progress() as step:
        step("parsing")
        time.sleep(0.4)
        step("compiling the request")
        time.sleep(0.2)
    shown = _read(reader)
    assert "lionagi-turns: compiling the request" in shown
    monkeypatch.setattr(_progress, "DELAY", 5.0)
    with _progress.progress() as step:
        step("quick")
    assert "quick" not in _read(reader)  # ended before the delay: nothing shown
    os.close(reader)


def test_no_cyclic_collection_runs_during_a_command(
    run_cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The collector is paused while the command runs (each pass would walk the loaded branch
    again) and enabled again after it."""
    from lionagi_turns.cli import _app

    branch = Branch()
    for i in range(60):
        branch.msgs.add_message(instruction=f"q{i}")
        branch.msgs.add_message(assistant_response=f"a{i}")
    path = save(branch, tmp_path / "sixty.json")
    inside: list[bool] = []
    passes: list[int] = []
    real = _app._run

    def watched(argv: list[str] | None) -> None:
        inside.append(gc.isenabled())
        try:
            real(argv)
        finally:
            inside.append(False)

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and len(inside) == 1:
            passes.append(info["generation"])

    monkeypatch.setattr(_app, "_run", watched)
    assert gc.isenabled()
    gc.callbacks.append(count)
    try:
        run = run_cli("compile", str(path), "-f", "json")
    finally:
        gc.callbacks.remove(count)
    assert run.code == 0 and inside == [False, False] and passes == []
    assert gc.isenabled()
