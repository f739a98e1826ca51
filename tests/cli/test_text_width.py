"""One text view for every profile: the same frame, never a line wider than the console (80
columns in a pipe), and a shortened text saying how much it leaves out."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from lionagi import Branch
from rich.cells import cell_len

from lionagi_turns.cli._wrap import fit, preview, shown_width

from .conftest import EXAMPLES, save

PROFILES = ("default", "amendment1", "prompt-cache", "amendment1+prompt-cache")
TESTS = Path(__file__).resolve().parents[1]
WIDTHS = ("40", "60", "80", "120", "200")
URL = "https://example.com/orders/" + "a1b2c3d4" * 40 + "?q=" + "x" * 60
BLOB = json.dumps({"items": [{"id": f"item-{i}", "note": "n" * 90} for i in range(6)]},
                  separators=(",", ":"))


def _hard_branch(tmp_path: Path) -> Path:
    """A branch whose text has long unbroken runs: a URL, compact JSON, wide characters, a tab
    and a control character, an image given by a long data URL."""
    branch = Branch(system="Answer from the order records. " + URL)
    branch.msgs.add_message(instruction=f"Open {URL} and summarise it", context=[BLOB])
    branch.msgs.add_message(assistant_response="注文" * 70 + "\tdone\x1b[2J " + BLOB)
    branch.msgs.add_message(
        instruction="And this picture?",
        images=["data:image/png;base64," + "iVBORw0KGgo" * 60],
    )
    return save(branch, tmp_path / "hard.json")


def _too_wide(text: str, width: int) -> list[str]:
    return [line for line in text.splitlines() if cell_len(line) > width]


@pytest.mark.parametrize("profile", PROFILES)
def test_no_line_is_wider_than_the_console_in_any_profile(
    run_cli, tmp_path: Path, profile: str
) -> None:
    path = str(_hard_branch(tmp_path))
    for width in WIDTHS:
        run = run_cli("compile", path, "--profile", profile, env={"COLUMNS": width})
        assert run.code == 0, (width, run.stderr)
        assert _too_wide(run.stdout, int(width)) == [], (profile, width)
        assert "╭─ [0] user" in run.stdout and "Sections" in run.stdout
    for example in ("tools.json", "support.json", "images.json"):
        run = run_cli("compile", str(EXAMPLES / example), "--profile", profile,
                      env={"COLUMNS": "80"})
        assert run.code == 0 and _too_wide(run.stdout, 80) == [], (profile, example)


@pytest.mark.parametrize(("profile", "width"), [("reminder", 60), ("reminder+prompt-cache", 120)])
def test_a_registered_stage_profile_fits_too(
    run_cli_process, tmp_path: Path, profile: str, width: int
) -> None:
    """A stage profile registered through ``LIONAGI_TURNS_STAGES`` (tests/stages) is shown
    by the same view, within the width."""
    path = str(_hard_branch(tmp_path))
    run = run_cli_process("compile", path, "--profile", profile, env={
        "COLUMNS": str(width), "LIONAGI_TURNS_STAGES": "stages.reminder_profile",
        "PYTHONPATH": str(TESTS)})
    assert run.code == 0, run.stderr
    assert _too_wide(run.stdout, width) == [], profile
    assert "stages: reminder" in run.stdout and "╭─ [0] user" in run.stdout


def test_every_profile_frames_its_messages_the_same_way(run_cli) -> None:
    """The same rule over the view, the same frame per message and the same sections table in
    each profile; the profiles differ only in their facts."""
    path = str(EXAMPLES / "tools.json")
    frames = {}
    for profile in PROFILES[:4]:
        out = run_cli("compile", path, "--profile", profile).stdout
        lines = out.splitlines()
        assert re.fullmatch(r"─+ lionagi-turns compile .*tools\.json ─+", lines[0]), profile
        frames[profile] = re.findall(r"^╭─ \[(\d+)\] (\w+)  (.*?) ─", out, re.M)
        assert all(t.startswith(("│ ", "╰─", "╭─")) for t in _framed(lines)), profile
        assert out.count("\nSections\n") == 1
    assert len({tuple(f) for f in frames.values()}) <= 2  # fold tags differ with the layout
    assert [f[:2] for f in frames["default"]] == [f[:2] for f in frames["prompt-cache"]]
    cached = run_cli("compile", path, "--profile", "prompt-cache").stdout
    assert "│ cache    │ 1h (stable) mark at system[0]" in cached
    assert re.search(r"│ cache    │ 5m \(turn\) mark at messages\[6\]\.content\[0\]", cached)


def _framed(lines: list[str]) -> list[str]:
    """The lines between a frame's first and last line, both included."""
    inside, out = False, []
    for line in lines:
        inside = inside or line.startswith("╭─")
        if inside:
            out.append(line)
        if line.startswith("╰─"):
            inside = False
    return out


def test_a_pipe_is_80_columns(run_cli_process, tmp_path: Path) -> None:
    path = str(_hard_branch(tmp_path))
    run = run_cli_process("compile", path, "--profile", "prompt-cache", env={"COLUMNS": None})
    assert run.code == 0, run.stderr
    assert _too_wide(run.stdout, 80) == []
    assert max(cell_len(line) for line in run.stdout.splitlines()) == 80


def test_an_image_url_preview_says_how_much_it_leaves_out(run_cli, tmp_path: Path) -> None:
    run = run_cli("compile", str(_hard_branch(tmp_path)), "-i", "next")
    (row,) = [line for line in run.stdout.splitlines() if "[image 1]" in line]
    url = "data:image/png;base64," + "iVBORw0KGgo" * 60
    shown = re.search(r"\[image 1\] (\S+) … \(\+([\d,]+) chars\)", row)
    assert shown is not None, row
    assert url.startswith(shown[1]) and len(shown[1]) + int(shown[2].replace(",", "")) == len(url)


def test_fit_keeps_every_character_and_prefers_breaks_between_json_values() -> None:
    for line, width in ((BLOB, 37), (URL, 20), ("注文" * 30 + " ok", 9), ("a\x1bb" * 9, 7),
                        ("short", 80), ("x", 1)):
        pieces = fit(line, width)
        assert "".join(pieces) == line
        assert all(shown_width(p) <= width for p in pieces), (line[:20], width)
    pieces = fit('{"a":"one two","b":"three"}', 12)
    assert pieces == ['{"a":', '"one two",', '"b":"three"}']
    assert fit("see https://example.com/a/b/c", 15) == ["see ", "https://", "example.com/a/", "b/c"]


def test_preview_cuts_at_a_word_and_counts_what_is_left() -> None:
    text = "The parcel left the Louisville hub this morning and arrives on Thursday."
    shown = preview(text, 40)
    assert shown == "The parcel left the … (+53 chars)" and shown_width(shown) <= 40
    assert preview(text, 200) == text
    unbroken = "x" * 100
    assert preview(unbroken, 30) == "x" * 15 + " … (+85 chars)"


@pytest.mark.parametrize("width", ["40", "80", "120"])
def test_diff_and_check_fit_the_console_and_leave_nothing_out(
    run_cli, tmp_path: Path, width: str
) -> None:
    """``diff`` (against lionagi, and between two branches) and ``check`` wrap a long line
    onto ``┆`` continuation lines instead of running past the width, and every word of the
    line is still shown."""
    hard = str(_hard_branch(tmp_path))
    support = str(EXAMPLES / "support.json")
    runs = [("diff", support), ("diff", hard), ("diff", support, str(EXAMPLES / "tools.json")),
            ("check", str(EXAMPLES / "broken.json")), ("check", hard)]
    for args in runs:
        run = run_cli(*args, env={"COLUMNS": width})
        assert run.code in (0, 1), (args, run.stderr)
        assert _too_wide(run.stdout, int(width)) == [], (args, width)
    words = run_cli("diff", support, env={"COLUMNS": width}).stdout
    joined = " ".join(line.lstrip("│┆ +-") for line in words.splitlines())
    for word in ("disputes", "ticket.Answer", "three", "sentences.", "invoice", "missing."):
        assert word in joined, word
