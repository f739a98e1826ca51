"""``compile``'s sections partition the request: every character counted once, in every
profile, the total the sum of its rows, the text view's table the JSON's rows."""

from __future__ import annotations

import json
import re
from itertools import product
from pathlib import Path
from typing import Any

import pytest

from .conftest import EXAMPLES

PROFILES = ("default", "prompt-cache", "amendment1")
ROWS = ("system", "tools", "context_blocks", "guidance", "history", "current_turn")
GOOD = ("support", "tools", "images")


def _request_characters(out: dict[str, Any]) -> int:
    """The exact characters the request sends: its system blocks' and messages' text."""
    total = sum(len(b["text"]) for b in out.get("system", []))
    for message in out["messages"]:
        content = message["content"]
        if isinstance(content, str):
            total += len(content)
        else:
            total += sum(len(p["text"]) for p in content if p["type"] == "text")
    return total


def _images(out: dict[str, Any]) -> int:
    return sum(
        1
        for m in out["messages"]
        if not isinstance(m["content"], str)
        for p in m["content"]
        if p["type"] == "image_url"
    )


@pytest.mark.parametrize(
    ("name", "profile", "context"),
    list(product(GOOD, PROFILES, (False, True))),
)
def test_sections_add_up_in_every_profile(run_cli, name: str, profile: str, context: bool) -> None:
    args = ["compile", str(EXAMPLES / f"{name}.json"), "--profile", profile, "-f", "json"]
    if context:
        args += ["-c", 'kb={"carrier": null, "note": "a, b"}', "-c", "faq=Refunds take 5 days."]
    run = run_cli(*args)
    assert run.code == 0, run.stderr
    out = run.json()
    sections = out["sections"]
    assert tuple(sections) == (*ROWS, "total")
    for key in ("characters", "tokens", "images"):
        assert sections["total"][key] == sum(sections[row][key] for row in ROWS), key
    assert sections["total"]["characters"] == _request_characters(out)
    assert sections["total"]["images"] == _images(out)
    if context:
        assert sections["context_blocks"]["characters"] > 0
    if name == "support":  # a system message, folded or as the stable segment
        assert sections["system"]["characters"] == 181


def test_support_sections_before_and_after(run_cli) -> None:
    """The issue's figures: history no longer holds the folded system and guidance, and the
    total is the sum of the rows."""
    out = run_cli("compile", str(EXAMPLES / "support.json"), "-f", "json").json()
    got = {name: (row["characters"], row["tokens"]) for name, row in out["sections"].items()}
    assert got == {
        "system": (181, 35),
        "tools": (0, 0),
        "context_blocks": (0, 0),
        "guidance": (79, 16),
        "history": (741, 211),
        "current_turn": (31, 6),
        "total": (1032, 268),
    }


def _table(stdout: str) -> dict[str, tuple[int, int]]:
    rows = {}
    for line in stdout.splitlines():
        match = re.match(r"^(\w+)\s+│\s+([\d,]+) │\s+([\d,]+) │", line)
        if match and match.group(1) in (*ROWS, "total"):
            rows[match.group(1)] = (
                int(match.group(2).replace(",", "")),
                int(match.group(3).replace(",", "")),
            )
    return rows


@pytest.mark.parametrize("profile", PROFILES)
def test_text_table_has_the_json_rows(run_cli, profile: str) -> None:
    path = str(EXAMPLES / "tools.json")
    text = run_cli("compile", path, "--profile", profile, "-c", "kb=fact")
    out = run_cli("compile", path, "--profile", profile, "-c", "kb=fact", "-f", "json").json()
    assert text.code == 0, text.stderr
    assert _table(text.stdout) == {
        name: (row["characters"], row["tokens"]) for name, row in out["sections"].items()
    }
    assert "counted offline, each section on its own;\na provider counting" in text.stdout


def test_prompt_cache_view_counts_tokens_per_row(run_cli) -> None:
    run = run_cli("compile", str(EXAMPLES / "support.json"), "--profile", "prompt-cache")
    assert run.code == 0, run.stderr
    assert "181 chars · 35 tokens" in run.stdout  # system[0], the stable segment
    assert "31 chars · 6 tokens" in run.stdout  # the current turn
    out = run_cli(
        "compile", str(EXAMPLES / "support.json"), "--profile", "prompt-cache", "-f", "json"
    ).json()
    assert out["segments"]["stable"] == {"blocks": 1, "characters": 181, "tokens": 35}


def test_prompt_cache_tools_and_conversation_rows(run_cli, tmp_path: Path) -> None:
    from .test_compile_prompt_cache import saved_conversation

    out = run_cli(
        "compile", str(saved_conversation(tmp_path)), "--profile", "prompt-cache", "-f", "json"
    ).json()
    system, tools, conversation = (b["text"] for b in out["system"])
    sections = out["sections"]
    assert sections["system"]["characters"] == len(system) == len("You are terse.")
    assert tools.startswith("Tools:") and sections["tools"]["characters"] == len(tools)
    assert sections["context_blocks"]["characters"] == len(conversation)


def test_amendment1_view_never_breaks_json_inside_a_value(run_cli) -> None:
    """At 80 columns the tool results' JSON lines break only between tokens, each piece on a
    ``┆`` row of the message's frame: the pieces, rejoined, load to the same value (a break
    inside ``null`` or a string would not)."""
    path = str(EXAMPLES / "tools.json")
    out = run_cli("compile", path, "--profile", "amendment1", "-f", "json").json()
    sent = [
        line
        for m in out["messages"]
        for line in m["content"].split("\n")
        if line.startswith("[{")
    ]
    assert sent and any(len(line) > 80 for line in sent)
    run = run_cli("compile", path, "--profile", "amendment1", env={"COLUMNS": "80"})
    assert run.code == 0, run.stderr
    lines = run.stdout.splitlines()
    for line in sent:
        start = next(i for i, shown in enumerate(lines)
                     if shown.startswith("│          │ [{") and line.startswith(shown[13:]))
        pieces = [lines[start][13:]]
        for shown in lines[start + 1 :]:
            if not shown.startswith("│          ┆ "):
                break
            pieces.append(shown[13:])
        assert all(len(p) <= 80 - 13 for p in pieces) and len(pieces) > 1
        assert "".join(pieces) == line
        assert json.loads("\n  ".join(pieces)) == json.loads(line)
    assert '"carrier":nul\n' not in run.stdout
