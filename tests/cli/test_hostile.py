"""Hostile saved branches (issue 11, CLI part): every input-caused failure exits 2 with exactly one
line on stderr and no traceback, nothing blocks or reads unbounded, the human output shows
input text inert and bounded, and no command starts a process or touches the network (the
``run_cli`` fixture fails a run that does)."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lionagi import Branch

from lionagi_turns.cli._load import DEFAULT_MAX_BYTES, MAX_DEPTH
from lionagi_turns.cli._views import LINE_HEAD, LINE_TAIL, MAX_BODY_LINES

from .conftest import EXAMPLES, Run, assert_bad_input, save

SUPPORT = EXAMPLES / "support.json"
COMMANDS = ("compile", "check", "diff")


def with_raw(tmp_path: Path, where: Callable[[dict[str, Any]], None], raw: str) -> Path:
    """support.json with the value ``where`` sets to the placeholder replaced by ``raw`` JSON
    text (for values ``json.dumps`` cannot write: deep nesting, NaN, repeated keys)."""
    data = json.loads(SUPPORT.read_text(encoding="utf-8"))
    where(data)
    text = json.dumps(data, indent=2).replace('"@@RAW@@"', raw, 1)
    path = tmp_path / "hostile.json"
    path.write_text(text, encoding="utf-8")
    return path


def _in_context(data: dict[str, Any]) -> None:
    data["messages"]["collections"][3]["content"]["prompt_context"] = ["@@RAW@@"]


def _as_assistant_content(data: dict[str, Any]) -> None:
    data["messages"]["collections"][2]["content"] = "@@RAW@@"


# --------------------------------------------------------------------------- JSON


@pytest.mark.parametrize("depth", [MAX_DEPTH + 10, 5_000, 200_000])
@pytest.mark.parametrize("command", COMMANDS)
def test_deep_nesting_exits_2(run_cli, tmp_path: Path, depth: int, command: str) -> None:
    path = with_raw(tmp_path, _in_context, "[" * depth + "]" * depth)
    assert_bad_input(run_cli(command, str(path)), str(path), f"more than {MAX_DEPTH} levels")


def test_nesting_within_the_limit_reaches_the_compiler(run_cli, tmp_path: Path) -> None:
    """Under the loader's limit the compiler decides: it renders 50 levels and refuses, by
    name, a value nested past its own limit (exit 1, one line, never a RecursionError)."""
    path = with_raw(tmp_path, _in_context, "[" * 50 + "1" + "]" * 50)
    run = run_cli("compile", str(path), "--format", "json")
    assert run.code == 0, run.stderr
    depth = MAX_DEPTH - 10  # the context list sits 6 levels down
    path = with_raw(tmp_path, _in_context, "[" * depth + "1" + "]" * depth)
    run = run_cli("compile", str(path))
    assert run.code == 1, run.stderr
    assert len(run.stderr.splitlines()) == 1 and "prompt_context" in run.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_integer_of_5000_digits_exits_2(run_cli, tmp_path: Path, command: str) -> None:
    path = with_raw(tmp_path, _in_context, "9" * 5000)
    assert_bad_input(
        run_cli(command, str(path)),
        "messages.collections[3].content.prompt_context[0]",
        "5,000 digits",
    )


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ("NaN", "NaN is not a JSON number"),
        ("Infinity", "Infinity is not a JSON number"),
        ("-Infinity", "-Infinity is not a JSON number"),
        ("1e400", "overflows a float"),
    ],
)
def test_non_finite_numbers_exit_2(run_cli, tmp_path: Path, raw: str, needle: str) -> None:
    path = with_raw(tmp_path, _in_context, raw)
    for command in COMMANDS:
        assert_bad_input(
            run_cli(command, str(path)),
            "messages.collections[3].content.prompt_context[0]",
            needle,
        )


def test_duplicate_key_exits_2_naming_key_and_path(run_cli, tmp_path: Path) -> None:
    raw = '{"assistant_response": "what the reviewer sees", "assistant_response": "sent"}'
    path = with_raw(tmp_path, _as_assistant_content, raw)
    for command in COMMANDS:
        assert_bad_input(
            run_cli(command, str(path)),
            "messages.collections[2].content",
            "repeats the key 'assistant_response'",
        )


def test_lone_surrogate_check_and_compile_agree(run_cli, tmp_path: Path) -> None:
    data = json.loads(SUPPORT.read_text(encoding="utf-8"))
    data["messages"]["collections"][2]["content"]["assistant_response"] = "ok \udfff"
    path = tmp_path / "surrogate.json"
    path.write_text(json.dumps(data), encoding="ascii")  # written as the escape \udfff
    assert "\\udfff" in path.read_text(encoding="ascii")
    lines = {
        command: assert_bad_input(
            run_cli(command, str(path)),
            "messages.collections[2].content.assistant_response",
            "lone surrogate",
        )
        for command in COMMANDS
    }
    assert len(set(lines.values())) == 1  # the same refusal, whatever the command
    json_run = run_cli("compile", str(path), "--format", "json")
    assert json_run.stderr.splitlines()[0] == lines["compile"]


# --------------------------------------------------------------------------- files


def _in_thread(run: Callable[[], Run]) -> Run:
    """``run()`` in a thread; fails (instead of hanging) if it blocks for 20 s."""
    box: list[Run] = []
    worker = threading.Thread(target=lambda: box.append(run()), daemon=True)
    worker.start()
    worker.join(20)
    assert box, "the CLI blocked"
    return box[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
@pytest.mark.parametrize("command", COMMANDS)
def test_fifo_without_writer_is_refused_without_blocking(
    run_cli, tmp_path: Path, command: str
) -> None:
    fifo = tmp_path / "branch.json"
    os.mkfifo(fifo)
    run = _in_thread(lambda: run_cli(command, str(fifo)))
    assert_bad_input(run, str(fifo), "a FIFO (named pipe), not a regular file")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_devices_and_symlinks_to_them_are_refused(run_cli, tmp_path: Path, device: str) -> None:
    if not Path(device).exists():
        pytest.skip(f"no {device}")
    link = tmp_path / "branch.json"
    link.symlink_to(device)
    for path in (device, str(link)):
        run = _in_thread(lambda path=path: run_cli("check", path))
        assert_bad_input(run, path, "a character device, not a regular file")


def _padded(tmp_path: Path, size: int) -> Path:
    text = SUPPORT.read_text(encoding="utf-8")
    path = tmp_path / "padded.json"
    path.write_text(text + " " * (size - len(text.encode("utf-8"))), encoding="utf-8")
    assert path.stat().st_size == size
    return path


def test_size_limit_option_and_env(run_cli, tmp_path: Path) -> None:
    path = _padded(tmp_path, 20_000)
    assert_bad_input(
        run_cli("check", str(path), "--max-bytes", "19999"),
        "is 20,000 bytes, over the limit of 19,999 bytes",
        "--max-bytes",
    )
    assert run_cli("check", str(path), "--max-bytes", "20000").code == 0
    over = {"LIONAGI_TURNS_MAX_BYTES": "19999"}
    for command in COMMANDS:
        assert_bad_input(run_cli(command, str(path), env=over), "over the limit of 19,999")
    assert run_cli("compile", str(path), env={"LIONAGI_TURNS_MAX_BYTES": "20000"}).code == 0
    # The option wins over the environment.
    assert run_cli("check", str(path), "--max-bytes", "20000", env=over).code == 0


@pytest.mark.parametrize(
    ("args", "env"),
    [
        (("--max-bytes", "0"), {}),
        (("--max-bytes", "lots"), {}),
        ((), {"LIONAGI_TURNS_MAX_BYTES": "lots"}),
    ],
)
def test_bad_size_limit_exits_2(run_cli, args: tuple[str, ...], env: dict[str, str]) -> None:
    assert_bad_input(run_cli("check", str(SUPPORT), *args, env=env), "--max-bytes")


def test_default_size_limit_is_documented() -> None:
    assert DEFAULT_MAX_BYTES == 64 * 1024 * 1024
    readme = (EXAMPLES.parent / "README.md").read_text(encoding="utf-8")
    assert "LIONAGI_TURNS_MAX_BYTES" in readme and "64 MiB" in readme


# --------------------------------------------------------------------------- display


def test_long_line_is_elided_with_its_size(run_cli, tmp_path: Path) -> None:
    branch = Branch()
    body = "a" * 300_000 + "THE-END"
    branch.msgs.add_message(instruction=body)
    branch.msgs.add_message(assistant_response="noted")
    path = save(branch, tmp_path / "long.json")
    run = run_cli("compile", str(path))
    assert run.code == 0, run.stderr
    hidden = len("Instruction: " + body) - LINE_HEAD - LINE_TAIL
    squeezed = "".join(run.stdout.replace("│          ┆ ", "").split())  # rows rejoined
    assert f"[{hidden:,}charactersnotshown;--formatjsonprintsthem]" in squeezed
    assert "THE-END" in run.stdout  # the line's tail is shown
    assert len(run.stdout) < 20_000
    assert f"{len('Instruction: ' + body):,} chars" in run.stdout  # the size is of everything
    whole = run_cli("compile", str(path), "--format", "json").json()
    assert whole["messages"][0]["content"] == "Instruction: " + body


def test_many_lines_are_elided_with_their_count(run_cli, tmp_path: Path) -> None:
    branch = Branch()
    branch.msgs.add_message(instruction="\n".join(f"line {i}" for i in range(5_000)))
    branch.msgs.add_message(assistant_response="noted")
    path = save(branch, tmp_path / "tall.json")
    run = run_cli("compile", str(path))
    assert run.code == 0, run.stderr
    assert "lines (" in run.stdout and "characters) not shown" in run.stdout
    assert "line 4999" in run.stdout and "line 2500" not in run.stdout
    assert run.stdout.count("\n") < MAX_BODY_LINES + 100


ESCAPES = {
    "\x1b]0;pwned\x07": "\\x1b]0;pwned\\x07",  # OSC 0: window title
    "\x1b]52;c;ZXZpbA==\x07": "\\x1b]52;c;ZXZpbA==\\x07",  # OSC 52: clipboard
    "\x1b[2J\x1b[H": "\\x1b[2J\\x1b[H",  # clear screen, cursor home
    "\x1b[1A\x1b[2K": "\\x1b[1A\\x1b[2K",  # cursor up, erase line
    "hidden\rcover": "hidden\\x0dcover",  # carriage return over the line
    "\u202eevil": "\\u202eevil",  # right-to-left override
    "\x9b31m": "\\x9b31m",  # C1 control sequence introducer
}


def _controls(tmp_path: Path, name: str = "controls.json") -> Path:
    hostile = " | ".join(ESCAPES)
    branch = Branch(system=f"system {hostile}")
    branch.msgs.add_message(instruction=f"question {hostile}", guidance=f"guide {hostile}")
    branch.msgs.add_message(assistant_response=f"answer {hostile}")
    return save(branch, tmp_path / name)


def _assert_no_raw_controls(output: str) -> None:
    assert "\x1b" not in output and "\r" not in output and "\x07" not in output
    assert "\u202e" not in output and "\x9b" not in output


def _assert_inert(output: str) -> None:
    _assert_no_raw_controls(output)
    for shown in ESCAPES.values():
        assert shown in output, shown


def test_control_characters_are_inert_in_every_human_output(run_cli, tmp_path: Path) -> None:
    path = _controls(tmp_path)
    compiled = run_cli("compile", str(path), "-c", f"kb=context {' | '.join(ESCAPES)}")
    assert compiled.code == 0, compiled.stderr
    _assert_inert(compiled.stdout)
    # diff shows the fold target, where YAML already escaped them (\e, \a, \r, \u202E):
    # the compiled and legacy lines must stay as escaped, and nothing raw may appear.
    differences = run_cli("diff", str(path), "-c", f"kb=context {' | '.join(ESCAPES)}")
    assert differences.code == 0, differences.stderr
    _assert_no_raw_controls(differences.stdout)
    assert "LIONAGI_CONTEXT_BLOCKS_JSON" in differences.stdout


def test_control_characters_in_paths_and_errors_are_inert(run_cli, tmp_path: Path) -> None:
    name = "evil\x1b]0;title\x07\x1b[2J.json"
    path = _controls(tmp_path, name)
    for command in COMMANDS:
        run = run_cli(command, str(path))
        assert run.code == 0, run.stderr
        assert "\x1b" not in run.stdout and "\x07" not in run.stdout
        assert "evil\\x1b]0" in run.stdout  # the header may shorten the path to fit
    missing = str(tmp_path / "gone\x1b[1A\x1b[2K.json")
    line = assert_bad_input(run_cli("check", missing), "no such file")
    assert "\x1b" not in line and "gone\\x1b[1A\\x1b[2K.json" in line


def test_check_warnings_are_inert(run_cli, tmp_path: Path) -> None:
    """A warning and the report around it stay inert. ``empty_instruction`` quotes only a
    position, an id and what is sent (``'{}'``), so the hostile text goes where it can: an
    instruction of control characters Python counts as whitespace (it triggers the warning)
    and the path the report names."""
    controls = " \x0b\x0c\x1c\x1d\x1e\x1f\x85\u2028\u2029 "
    branch = Branch()
    blank = branch.msgs.add_message(instruction="x")
    branch.msgs.add_message(assistant_response="x")
    data = branch.to_dict(mode="json")
    data["messages"]["collections"][0]["content"]["instruction"] = controls
    path = tmp_path / "ws\x1b[2J\x1b]0;t\x07.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    report = run_cli("check", str(path), "--format", "json").json()
    assert [(w["kind"], w["ids"]) for w in report["warnings"]] == [
        ("empty_instruction", [str(blank.id)])
    ]
    assert report["warnings"][0]["message"].endswith("is sent as the user message '{}'")
    run = run_cli("check", str(path))
    assert run.code == 0, run.stderr
    assert "1 warning(s)" in run.stdout and "empty_instruction" in run.stdout
    assert "ws\\x1b[2J\\x1b]0;t\\x07.json" in run.stdout
    assert not any(c in run.stdout for c in "\x1b\x07" + controls.strip()), run.stdout


def test_json_output_stays_exact(run_cli, tmp_path: Path) -> None:
    path = _controls(tmp_path)
    run = run_cli("compile", str(path), "--format", "json")
    out = run.json()
    for raw in ESCAPES:
        assert raw in out["messages"][1]["content"], raw
    assert "\\u001b" in run.stdout and "\x1b" not in run.stdout


# --------------------------------------------------------------------------- no model, no I/O


def test_unknown_provider_runs_no_subprocess(run_cli, tmp_path: Path) -> None:
    data = json.loads(SUPPORT.read_text(encoding="utf-8"))
    data["chat_model"]["endpoint"]["config"]["provider"] = "no-such-provider"
    path = tmp_path / "unknown-provider.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    for command in COMMANDS:
        run = run_cli(command, str(path), allow_io=True)
        assert run.code == 0, run.stderr
        assert run.events == ()  # no `git rev-parse`, no socket, no DNS


def test_every_command_on_every_example_makes_no_io(run_cli) -> None:
    for name in ("support", "tools", "images", "broken"):
        for command in COMMANDS:
            for fmt in (() if command == "diff" else ("--format", "json"), ()):
                run = run_cli(command, str(EXAMPLES / f"{name}.json"), *fmt, allow_io=True)
                assert run.events == (), (name, command, run.events)


# --------------------------------------------------------------------------- check


def test_history_image_detail_follows_the_current_instruction_rule(
    run_cli, tmp_path: Path
) -> None:
    data = json.loads(SUPPORT.read_text(encoding="utf-8"))
    content = data["messages"]["collections"][1]["content"]
    content["images"] = ["https://example.com/receipt.png"]
    content["image_detail"] = "ultra"
    path = tmp_path / "ultra.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    uid = data["messages"]["collections"][1]["id"]
    position = data["messages"]["progression"]["order"].index(uid)

    check = run_cli("check", str(path), "--format", "json")
    assert check.code == 1, check.stderr
    report = check.json()
    named = [d for d in report["defects"] if uid in d["ids"]]
    assert len(named) == 1 and named[0]["positions"] == [position]
    assert "'ultra'" in named[0]["message"]
    compiled = run_cli("compile", str(path))
    assert compiled.code == 1  # the compiler refuses it too: check and compile agree
    assert "ultra" in compiled.stderr and len(compiled.stderr.splitlines()) == 1


def test_whitespace_instruction_is_a_warning(run_cli, tmp_path: Path) -> None:
    branch = Branch()
    blank = branch.msgs.add_message(instruction="   ")
    branch.msgs.add_message(assistant_response="ok")
    path = save(branch, tmp_path / "blank.json")
    run = run_cli("check", str(path), "--format", "json")
    assert run.code == 0, run.stderr
    report = run.json()
    assert report["ok"] is True and report["defects"] == []
    assert [(w["kind"], w["positions"], w["ids"]) for w in report["warnings"]] == [
        ("empty_instruction", [0], [str(blank.id)])
    ]
    assert "'{}'" in report["warnings"][0]["message"]
    sent = run_cli("compile", str(path), "--format", "json").json()["messages"]
    assert sent[0] == {"role": "user", "content": "{}"}
    text = run_cli("check", str(path))
    assert text.code == 0 and "1 warning(s)" in text.stdout and "empty_instruction" in text.stdout


def test_empty_assistant_is_a_warning(run_cli, tmp_path: Path) -> None:
    branch = Branch()
    branch.msgs.add_message(instruction="first")
    silent = branch.msgs.add_message(assistant_response="placeholder")
    data = branch.to_dict(mode="json")
    data["messages"]["collections"][1]["content"]["assistant_response"] = ""
    path = tmp_path / "silent.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    run = run_cli("check", str(path), "--format", "json")
    assert run.code == 0, run.stderr
    report = run.json()
    assert [(w["kind"], w["positions"], w["ids"]) for w in report["warnings"]] == [
        ("empty_assistant", [1], [str(silent.id)])
    ]
    sent = run_cli("compile", str(path), "--format", "json").json()["messages"]
    assert [m["role"] for m in sent] == ["user", "user"]  # what the warning says


@pytest.mark.parametrize(
    "args", [("-i", "caf\udce9"), ("-c", "kb=caf\udce9"), ("-i", "ok", "-c", "kb=\udcff")]
)
def test_options_that_are_not_utf8_exit_2(run_cli, args: tuple[str, ...]) -> None:
    """Bytes that are not UTF-8 in argv reach Python as lone surrogates (surrogateescape)."""
    for command in ("compile", "diff"):
        assert_bad_input(run_cli(command, str(SUPPORT), *args), "not UTF-8 text")


def test_a_file_name_that_is_not_utf8_is_shown_escaped(run_cli, tmp_path: Path) -> None:
    path = tmp_path / os.fsdecode(b"branch-\xff.json")
    path.write_bytes(SUPPORT.read_bytes())
    for command in COMMANDS:
        run = run_cli(command, str(path))
        assert run.code == 0, run.stderr
        assert "branch-\\ud" in run.stdout  # the header may shorten the path to fit
    assert "branch-\\udcff.json" in run_cli("check", str(path)).stdout
    out = run_cli("compile", str(path), "--format", "json")
    assert out.code == 0, out.stderr
    assert out.stdout.isascii() and out.json()["path"] == str(path)  # the same value, escaped
    missing = assert_bad_input(run_cli("check", str(tmp_path / os.fsdecode(b"gone-\xfe.json"))))
    assert "gone-\\udcfe.json" in missing


# --------------------------------------------------------------------------- mutated branches

_MUTATIONS = [None, True, 0, -1, 1.5, 10**20, "", "x", "\x1b[2J", [], {}, [1, "a"], {"a": None},
              "00000000-0000-0000-0000-000000000000", "not-a-uuid", {"instruction": None},
              "lionagi.protocols.messages.instruction.Instruction", {"lion_class": "x"}]
_DELETE = object()


def _paths(value: Any, trail: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [trail] if trail else []
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(
        value, list
    ) else ()
    for key, item in items:
        out.extend(_paths(item, (*trail, key)))
    return out


_SUPPORT_DATA = json.loads(SUPPORT.read_text(encoding="utf-8"))
_SUPPORT_PATHS = _paths(_SUPPORT_DATA)


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    edits=st.lists(
        st.tuples(
            st.integers(0, len(_SUPPORT_PATHS) - 1),
            st.sampled_from([*_MUTATIONS, _DELETE]),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_mutated_branch_never_fails_internally(run_cli, tmp_path_factory, edits) -> None:
    """Any value of a saved branch replaced or deleted: every command exits 0, 1 or 2, with at
    most one stderr line (exactly one for 1 and 2), never an internal error."""
    data = json.loads(json.dumps(_SUPPORT_DATA))
    for index, value in edits:
        *parents, last = _SUPPORT_PATHS[index]
        target: Any = data
        try:
            for key in parents:
                target = target[key]
            if value is _DELETE:
                del target[last]
            else:  # a copy: a shared [] or {} edited by a later path would outlive the example
                target[last] = json.loads(json.dumps(value))
        except (KeyError, IndexError, TypeError):
            continue
    path = tmp_path_factory.mktemp("mutated") / "branch.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    for args in (("compile", "--format", "json"), ("check", "--format", "json"), ("diff",)):
        run = run_cli(args[0], str(path), *args[1:])
        lines = run.stderr.splitlines()
        assert run.code in (0, 1, 2), (args, run.code, run.stderr)
        assert len(lines) <= 1, (args, run.stderr)
        assert len(lines) == {0: 0, 2: 1}.get(run.code, len(lines)), (args, run.stderr)
        assert "internal error" not in run.stderr and "Traceback" not in run.stderr


def test_system_that_lionagi_cannot_render_is_rejected_by_every_command(
    run_cli, tmp_path: Path
) -> None:
    """Found by the mutation test: a stored system whose text is null makes lionagi's own
    ``System.rendered`` raise TypeError; compile and diff exit 1 with one line, check lists it."""
    data = json.loads(SUPPORT.read_text(encoding="utf-8"))
    data["messages"]["collections"][0]["content"]["system_message"] = None
    data["system"]["content"]["system_message"] = None
    path = tmp_path / "null-system.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    for command in ("compile", "diff"):
        run = run_cli(command, str(path))
        assert run.code == 1, run.stderr
        assert len(run.stderr.splitlines()) == 1 and "TypeError" in run.stderr
    check = run_cli("check", str(path), "--format", "json")
    assert check.code == 1
    assert [d["kind"] for d in check.json()["defects"]] == ["compile_error"]


def test_quoted_stored_text_and_error_lines_are_bounded(run_cli, tmp_path: Path) -> None:
    """Text a view quotes from the input (a warning's quote, an error line) is bounded like a
    body line: a 1 MB whitespace instruction, a 5,000-character path."""
    branch = Branch()
    branch.msgs.add_message(instruction=" " * 1_000_000)
    branch.msgs.add_message(assistant_response="ok")
    path = save(branch, tmp_path / "spaces.json")
    run = run_cli("check", str(path))
    assert run.code == 0, run.stderr
    assert "empty_instruction" in run.stdout and len(run.stdout) < 20_000
    line = assert_bad_input(run_cli("check", "x" * 5_000), "characters not shown")
    assert len(line) < 2 * LINE_HEAD
