"""Bad input: one line on stderr naming the file and the problem, exit 2, never a traceback."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import EXAMPLES, assert_bad_input, edit


def _write(text: str | bytes) -> Callable[[Path], Path]:
    def make(directory: Path) -> Path:
        path = directory / "input.json"
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
        return path

    return make


def _edited(change: Callable[[dict], None]) -> Callable[[Path], Path]:
    return lambda directory: edit(EXAMPLES / "support.json", directory / "input.json", change)


def _set_lion_class(value: str) -> Callable[[dict], None]:
    def change(data: dict) -> None:
        data["metadata"]["lion_class"] = value

    return change


def _message_class(data: dict) -> None:
    data["messages"]["collections"][1]["metadata"]["lion_class"] = (
        "lionagi.core.message.legacy.LegacyInstruction"
    )


def _old_pile(data: dict) -> None:
    data["messages"] = {"pile": data["messages"]["collections"]}


def _bad_id(data: dict) -> None:
    data["messages"]["progression"]["order"][2] = "not-a-uuid"


CASES = {
    "missing file": (lambda d: d / "nope.json", ["no such file"]),
    "directory": (lambda d: d, ["is a directory"]),
    "not JSON": (_write("{'messages': oops"), ["is not JSON", "line 1"]),
    "not UTF-8": (_write(b"\xff\xfe{}"), ["not UTF-8"]),
    "JSON array": (_write("[1, 2]"), ["not a lionagi branch", "an array"]),
    "JSON object, not a branch": (_write('{"name": "x"}'), ["not a lionagi branch"]),
    "a saved Pile": (
        _edited(_set_lion_class("lionagi.protocols.generic.pile.Pile")),
        ["not a lionagi branch", "Pile"],
    ),
    "another version's Branch class": (
        _edited(_set_lion_class("lionagi.core.session.branch.Branch")),
        ["another lionagi version"],
    ),
    "another version's message class": (
        _edited(_message_class),
        ["does not load with lionagi", "another lionagi version"],
    ),
    "another version's message layout": (_edited(_old_pile), ["another lionagi version"]),
    "progression id not a UUID": (
        _edited(_bad_id),
        ["messages.progression[2]", "not-a-uuid", "not a message id"],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_check_bad_input(run_cli, tmp_path: Path, case: str) -> None:
    make, needles = CASES[case]
    path = make(tmp_path)
    assert_bad_input(run_cli("check", str(path)), str(path), *needles)


@pytest.mark.parametrize("command", ["compile", "diff"])
def test_compile_and_diff_bad_input(run_cli, tmp_path: Path, command: str) -> None:
    path = tmp_path / "input.json"
    path.write_text(json.dumps({"metadata": {"lion_class": "lionagi.core.session.branch.Branch"}}))
    assert_bad_input(run_cli(command, str(path)), str(path), "another lionagi version")
    missing = tmp_path / "gone.json"
    assert_bad_input(run_cli(command, str(missing)), str(missing), "no such file")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("compile", "EXAMPLE", "--context", "no-equals-sign"), "NAME=TEXT"),
        (("compile", "EXAMPLE", "--format", "xml"), "--format"),
        (("compile", "EXAMPLE", "--instruction", "   "), "--instruction"),
        (("frobnicate",), "frobnicate"),
    ],
)
def test_bad_options_exit_2(run_cli, args: tuple[str, ...], needle: str) -> None:
    resolved = [str(EXAMPLES / "support.json") if a == "EXAMPLE" else a for a in args]
    assert_bad_input(run_cli(*resolved), needle)


@pytest.mark.parametrize("section", ["history", "tool_results"])
def test_a_budget_the_ceiling_sets_itself_is_an_option_conflict(run_cli, section: str) -> None:
    """``--ceiling`` with ``--budget history=N`` (or ``tool_results=N``) is refused as options
    are, like ``--low-water`` without ``--ceiling``: exit 2, one line naming both options."""
    run = run_cli(
        "compile", str(EXAMPLES / "support.json"), "--profile", "amendment1",
        "--ceiling", "100", "--budget", f"{section}=5",
    )
    line = assert_bad_input(run, f"--budget {section}=N", "--ceiling")
    assert "ValueError" not in line and "cannot compile" not in line


def test_standard_input_is_read_once(run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """``diff - -``: the second read of standard input would find it exhausted, so it is
    refused in words instead of being called not JSON."""
    data = (EXAMPLES / "support.json").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    line = assert_bad_input(run_cli("diff", "-", "-"))
    assert line == (
        "lionagi-turns: -: standard input can be read once; give at most one branch as -"
    )
