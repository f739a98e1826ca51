"""The command line's basics, as a user meets them: help, version, completion, standard input,
a closed pipe, repeated options and values outside an option's choices, colour.

Where the behaviour is the process's (exit code, what reaches stderr, a closed pipe), the test
runs the installed console script as a real subprocess."""

from __future__ import annotations

import importlib.metadata
import io
import os
import re
import shlex
import subprocess
import sys

import lionagi
import pytest

import lionagi_turns

from .conftest import BIN, EXAMPLES, REPO, assert_bad_input


def test_the_bare_command_prints_the_help_and_exits_0(run_cli_process) -> None:
    run = run_cli_process()
    assert run.code == 0, run.stderr
    assert run.stderr == ""
    assert "Usage: lionagi-turns [OPTIONS] COMMAND [ARGS]..." in run.stdout
    for command in ("compile", "check", "diff"):
        assert re.search(rf"^  {command} ", run.stdout, re.MULTILINE), command


def test_the_root_help_explains_its_terms_and_exit_codes(run_cli) -> None:
    run = run_cli("--help")
    assert run.code == 0
    text = " ".join(run.stdout.split())  # rewrapped to the terminal width
    assert "docs/glossary.md" in text
    assert "the view is the stored messages lionagi sends, in order" in text
    assert "the fold is the system text, context blocks and guidance, placed at the top" in text
    assert "Exit codes: 0 ok; 1 the compiler rejects the history" in text
    assert "NO_COLOR=1 turns colour off" in text


COMMANDS = [(), ("compile",), ("check",), ("diff",), ("show",)]


@pytest.mark.parametrize("command", COMMANDS[1:])
def test_each_commands_help_gives_exit_codes_and_points_to_the_words(
    run_cli, command: tuple[str, ...]
) -> None:
    text = " ".join(run_cli(*command, "--help").stdout.split())
    assert "Exit codes: 0 ok; 1 the compiler rejects the history" in text
    assert "lionagi-turns --help, docs/glossary.md" in text
    assert "docs/usage.md" in text


@pytest.mark.parametrize("command", COMMANDS)
def test_the_help_is_short_plain_and_never_breaks_an_option_name(
    run_cli_process, command: tuple[str, ...]
) -> None:
    """At most 40 lines of 80 columns (in a pipe), plain metavars (no ``<int range>``,
    ``<bool>`` or ``[x>=1]``), no box drawing, and no option name split across two lines."""
    run = run_cli_process(*command, "--help", env={"COLUMNS": None})  # a pipe: 80 columns
    assert run.code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) <= 40, len(lines)
    assert max(len(line) for line in lines) <= 80
    for bad in ("<int", "<bool>", "range>", "x>=", "│", "╭"):
        assert bad not in run.stdout, bad
    for line in lines:
        assert not re.search(r"(^|\s)--?[a-z-]*-$", line.rstrip()), line  # "--low-" + "water"


def test_compile_help_says_what_each_profile_does(run_cli) -> None:
    text = " ".join(run_cli("compile", "--help").stdout.split())
    for words in (
        "amendment1 (token budgets, saying what is left out)",
        "prompt-cache (stable parts first, with cache marks)",
        "amendment1+prompt-cache (both;",
        "system, instruction, history, context or tool_results",
    ):
        assert words.replace(" ", "") in text.replace(" ", "").replace("│", ""), words


def test_version_names_both_versions(run_cli_process) -> None:
    run = run_cli_process("--version")
    assert run.code == 0, run.stderr
    assert run.stdout == (
        f"lionagi-turns {importlib.metadata.version('lionagi-turns')} "
        f"(lionagi {lionagi.__version__})\n"
    )
    assert lionagi_turns.__version__ == importlib.metadata.version("lionagi-turns")


def test_shell_completion_is_offered_and_completes(run_cli_process) -> None:
    script = run_cli_process("--show-completion", "bash")
    assert script.code == 0, script.stderr
    assert "_LIONAGI_TURNS_COMPLETE=complete_bash" in script.stdout
    done = run_cli_process(
        env={
            "_LIONAGI_TURNS_COMPLETE": "complete_bash",
            "COMP_WORDS": "lionagi-turns ch",
            "COMP_CWORD": "1",
        }
    )
    assert done.code == 0, done.stderr
    assert done.stdout.split() == ["check"]


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


@pytest.mark.parametrize("command", ["compile", "check"])
def test_dash_reads_the_saved_branch_from_standard_input(
    run_cli, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    path = EXAMPLES / "support.json"
    want = run_cli(command, str(path), "-f", "json")
    _stdin(monkeypatch, path.read_bytes())
    got = run_cli(command, "-", "-f", "json")
    assert got.code == want.code == 0, got.stderr
    assert got.json()["path"] == "-"
    assert {**got.json(), "path": str(path)} == want.json()


def test_dash_on_a_rejected_branch_exits_1(run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    _stdin(monkeypatch, (EXAMPLES / "broken.json").read_bytes())
    run = run_cli("check", "-")
    assert run.code == 1, run.stderr
    assert run.stdout.startswith("✗ -: 4 defect(s) in metadata.current_progression")


@pytest.mark.parametrize(
    ("data", "args", "problem"),
    [
        (b"", (), "-: is not JSON (line 1, column 1: Expecting value)"),
        (
            (EXAMPLES / "broken.json").read_bytes(),
            ("--max-bytes", "100"),
            "-: grew past 100 bytes while being read, over the limit of 100 bytes",
        ),
    ],
)
def test_unusable_standard_input_exits_2(
    run_cli, monkeypatch: pytest.MonkeyPatch, data: bytes, args: tuple[str, ...], problem: str
) -> None:
    _stdin(monkeypatch, data)
    line = assert_bad_input(run_cli("compile", "-", *args))
    assert line.startswith(f"lionagi-turns: {problem}"), line


_PIPE_CASES = [
    (["compile", str(EXAMPLES / "support.json")], 0),  # Rich's console
    (["check", str(EXAMPLES / "broken.json")], 1),  # defects: the verdict survives
    (["check", str(EXAMPLES / "broken.json"), "--format", "json"], 1),  # the JSON writer
    (["check", str(EXAMPLES / "support.json")], 0),
    (["diff", str(EXAMPLES / "broken.json")], 1),  # differences from lionagi
    (["diff", str(EXAMPLES / "support.json"), str(EXAMPLES / "tools.json")], 1),  # two branches
]


def _quiet_env() -> dict[str, str]:
    return {**os.environ, "LOG_AUTO_SAVE_ON_EXIT": "false", "NO_COLOR": "1"}


@pytest.mark.parametrize(("args", "verdict"), _PIPE_CASES)
def test_a_closed_pipe_ends_quietly_with_the_commands_verdict(
    args: list[str], verdict: int
) -> None:
    """The reader is gone before the first write: no message, and the exit code the command
    reaches with a reader (1 for a check with defects or a diff with differences)."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [str(BIN / "lionagi-turns"), *args],
            stdout=write, stderr=subprocess.PIPE, env=_quiet_env(), timeout=60, check=False,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (verdict, b"")


# One command per writer (Rich's console, the JSON writer) and per verdict: the closed-pipe
# test above runs every case, and a reader leaving after one line takes the same write path.
@pytest.mark.parametrize(("args", "verdict"), [_PIPE_CASES[0], _PIPE_CASES[2], _PIPE_CASES[4]])
def test_head_1_under_pipefail_keeps_the_verdict(args: list[str], verdict: int) -> None:
    """``set -o pipefail; lionagi-turns ... | head -1``: the pipeline fails exactly when the
    command does, and nothing reaches stderr."""
    line = " ".join(shlex.quote(a) for a in [str(BIN / "lionagi-turns"), *args])
    done = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {line} | head -1"],
        capture_output=True, env=_quiet_env(), timeout=60, check=False,
    )
    assert (done.returncode, done.stderr) == (verdict, b"")
    assert done.stdout.count(b"\n") == 1


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["compile", "-i", "a", "--instruction", "b"], "--instruction/-i"),
        (["compile", "-f", "json", "-f", "text"], "--format/-f"),
        (["compile", "--profile", "amendment1", "--profile", "default"], "--profile"),
        (["check", "--max-bytes", "10", "--max-bytes", "20"], "--max-bytes"),
        (["diff", "-i", "a", "-i", "a"], "--instruction/-i"),
    ],
)
def test_an_option_given_twice_is_refused(run_cli, args: list[str], option: str) -> None:
    run = run_cli(args[0], str(EXAMPLES / "support.json"), *args[1:])
    line = assert_bad_input(run)
    assert line == f"lionagi-turns: bad option: {option} is given more than once; give it once"


def test_an_option_given_twice_is_one_line_from_the_process(run_cli_process) -> None:
    run = run_cli_process("compile", str(EXAMPLES / "support.json"), "-f", "json", "-f", "json")
    assert run.code == 2
    assert run.stdout == ""
    assert run.stderr == (
        "lionagi-turns: bad option: --format/-f is given more than once; give it once\n"
    )


def test_a_budget_section_given_twice_is_refused(run_cli) -> None:
    """A repeatable option stays repeatable (two --budget sections, two --context blocks of
    one provider); the same section twice is refused instead of the last one kept."""
    path = str(EXAMPLES / "support.json")
    args = ("--profile", "amendment1", "-c", "a=1", "-c", "a=2", "-f", "json")
    two = run_cli("compile", path, *args, "--budget", "history=5", "--budget", "system=900")
    assert two.code == 0, two.stderr
    budgets = {b["section"]: b["budget"] for b in two.json()["bounds"]}
    assert (budgets["history"], budgets["system"]) == (5, 900)
    run = run_cli(
        "compile", path, *args,
        "--budget", "history=5", "--budget", "system=900", "--budget", "history=9",
    )
    line = assert_bad_input(run)
    assert line == (
        "lionagi-turns: bad option: --budget #3 sets history again; give each section's "
        "budget once"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["compile", "--profile", "nope"],
            "--profile takes one of: default, amendment1, prompt-cache, amendment1+prompt-cache",
        ),
        (["compile", "--format", "yaml"], "--format/-f takes one of: text, json, html"),
        (["check", "-f", "xml"], "--format/-f takes one of: text, json"),
    ],
)
def test_a_value_outside_the_choices_names_them(run_cli, args: list[str], message: str) -> None:
    run = run_cli(args[0], str(EXAMPLES / "support.json"), *args[1:])
    assert assert_bad_input(run) == f"lionagi-turns: bad option: {message}"


_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def _colours(text: str) -> set[int]:
    """The colour parameters (foreground and background) of the SGR sequences in ``text``."""
    found = set()
    for match in _SGR.finditer(text):
        for param in filter(None, match.group(1).split(";")):
            code = int(param)
            if 30 <= code <= 48 or 90 <= code <= 107:
                found.add(code)
    return found


@pytest.mark.slow
def test_no_color_turns_colour_off_even_when_colour_is_forced(run_cli_process) -> None:
    """As documented (the usage doc and --help name NO_COLOR)."""
    usage = " ".join((REPO / "docs" / "usage.md").read_text(encoding="utf-8").split())
    assert "`NO_COLOR` set to any non-empty value turns colour off" in usage
    path = str(EXAMPLES / "broken.json")
    coloured = run_cli_process("check", path, env={"FORCE_COLOR": "1", "NO_COLOR": None})
    plain = run_cli_process("check", path, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert coloured.code == plain.code == 1
    assert _colours(coloured.stdout)
    assert _colours(plain.stdout) == set()
    assert _SGR.sub("", coloured.stdout) == _SGR.sub("", plain.stdout)


def test_python_m_runs_the_same_command(run_cli_process) -> None:
    run = run_cli_process("--version", module=True)
    assert run.code == 0, run.stderr
    assert run.stdout.startswith(f"lionagi-turns {lionagi_turns.__version__} ")
