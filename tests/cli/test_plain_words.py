"""The text views in plain words, readable at 80 columns: ``check`` with whole ids and kinds
and a next step per defect, ``compile``'s header and fold tag in words, the glossary naming
every JSON field, and docs that stand alone."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from lionagi import Branch

from lionagi_turns.core.errors import DEFECT_RULES

from .conftest import EXAMPLES, REPO, save
from .test_json_schema import EXAMPLE_FILES, shaped_outputs

UUID_TEXT = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def _three_adjacent(tmp_path: Path) -> Path:
    branch = Branch(system="S")
    branch.msgs.add_message(instruction="one")
    branch.msgs.add_message(instruction="two")
    branch.msgs.add_message(instruction="three")
    branch.msgs.add_message(assistant_response="answer")
    return save(branch, tmp_path / "adjacent.json")


def test_a_third_adjacent_instruction_follows_the_second(run_cli, tmp_path: Path) -> None:
    run = run_cli("check", str(_three_adjacent(tmp_path)), "--format", "json")
    assert run.code == 1
    ids = [r["id"] for r in run.json()["view_records"]]
    defects = [(d["positions"], d["ids"], d["message"]) for d in run.json()["defects"]]
    # Position 0 is the system record; the instructions are at 1, 2 and 3.
    assert defects == [
        (
            [1, 2],
            ids[1:3],
            f"instruction at position 2 (id {ids[2]}) directly follows the instruction at "
            f"position 1 (id {ids[1]})",
        ),
        (
            [2, 3],
            ids[2:4],
            f"instruction at position 3 (id {ids[3]}) directly follows the instruction at "
            f"position 2 (id {ids[2]})",
        ),
    ]


def _check_80(run_cli, path: Path) -> tuple[str, dict[str, Any]]:
    text = run_cli("check", str(path), env={"COLUMNS": "80"})
    report = run_cli("check", str(path), "--format", "json")
    assert text.code == report.code == 1
    return text.stdout, report.json()


def test_check_at_80_columns_keeps_ids_and_kinds_whole(run_cli, tmp_path: Path) -> None:
    for path in (EXAMPLES / "broken.json", _three_adjacent(tmp_path)):
        out, report = _check_80(run_cli, path)
        lines = [line.rstrip() for line in out.splitlines()]
        assert max(len(line) for line in lines) <= 80
        for defect in report["defects"]:
            assert defect["kind"] in DEFECT_RULES
            assert re.search(rf"^\d+\. {defect['kind']} at position", out, re.M), defect
            for uid in defect["ids"]:
                assert f"   id {uid}" in lines, uid  # whole, on its own line
        # Every id-like run of text in the output is a whole id or a short id of the view.
        shown = set(UUID_TEXT.findall(out))
        assert shown == {uid for d in report["defects"] for uid in d["ids"]}
        assert not re.search(r"[0-9a-f]{8}-[0-9a-f]{0,3}\s*$", out, re.M)  # no id cut at a line end


def test_check_gives_a_next_step_per_defect(run_cli) -> None:
    out, report = _check_80(run_cli, EXAMPLES / "broken.json")
    flat = " ".join(out.split())
    steps = [f"next step: {DEFECT_RULES[d['kind']].hint}" for d in report["defects"]]
    assert flat.count("next step: ") == len(report["defects"]) == 4
    for step in steps:
        assert step in flat, step


def test_checks_view_table_shows_short_unique_ids(run_cli) -> None:
    out, report = _check_80(run_cli, EXAMPLES / "broken.json")
    table = out.split("View (short ids; --format json has them whole)", 1)[1]
    for record in report["view_records"]:
        row = re.search(rf"^\s*{record['position']} │ (\S+) +│ (\S.*?) +│", table, re.M)
        assert row is not None, record
        assert row.group(1) == record["id"][:8]
        assert row.group(2) == (record["kind"] or "— missing —")


def test_short_ids_grow_until_unique() -> None:
    from lionagi_turns.cli._check import short_ids

    a = "12345678-aaaa-4aaa-8aaa-aaaaaaaaaaaa"
    b = "12345678-abbb-4bbb-8bbb-bbbbbbbbbbbb"
    c = "87654321-cccc-4ccc-8ccc-cccccccccccc"
    assert short_ids([a, b, c, a]) == {a: a[:11], b: b[:11], c: c[:11]}
    assert short_ids([c]) == {c: c[:8]}


def test_a_warning_gets_a_next_step(run_cli, tmp_path: Path) -> None:
    branch = Branch()
    branch.msgs.add_message(instruction="first")
    branch.msgs.add_message(assistant_response="placeholder")
    data = branch.to_dict(mode="json")
    data["messages"]["collections"][1]["content"]["assistant_response"] = ""
    path = tmp_path / "silent.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    run = run_cli("check", str(path), env={"COLUMNS": "80"})
    assert run.code == 0, run.stderr
    flat = " ".join(run.stdout.split())
    assert "1. empty_assistant at position 1" in flat
    assert (
        "next step: Record the response's text, or leave it out of the progression, unless the "
        "user messages should reach the model adjacent." in flat
    )


def test_compile_says_what_is_sent_in_words(run_cli) -> None:
    run = run_cli("compile", str(EXAMPLES / "support.json"), "-c", "kb=Refunds take 5 days.")
    assert run.code == 0, run.stderr
    flat = " ".join(run.stdout.split())
    assert (
        "messages sent: 5 (4 from the history, read from the 5 record(s) listed in "
        "messages.progression, then the current turn) · system text: yes · context blocks: 1"
    ) in flat
    assert "system text + context blocks + guidance placed in message [0] (the fold)" in flat
    assert "[0] user carries system text + context blocks + guidance · history" in flat
    assert "view: messages.progression" not in flat and "fold: system" not in flat


def _keys(value: Any) -> set[str]:
    """Every field name in ``value``; the registry's entry ids (the keys of ``entries``) are
    data, not field names, so only their fields count."""
    if isinstance(value, dict):
        children = [*value["entries"].values()] if "entries" in value else []
        rest = {k: v for k, v in value.items() if k != "entries"}
        names = set(value) | {k for v in rest.values() for k in _keys(v)}
        return names | {k for v in children for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def test_the_glossary_names_every_json_field(run_cli) -> None:
    glossary = (REPO / "docs" / "glossary.md").read_text(encoding="utf-8")
    runs = [
        ("compile", "support.json", "-c", "kb=x"),
        ("compile", "images.json"),
        ("compile", "tools.json", "--profile", "amendment1", "--budget", "history=50"),
        ("compile", "tools.json", "--profile", "prompt-cache", "--at", "2"),
        ("check", "broken.json"),
        ("diff", "support.json", "-c", "kb=x"),
        ("diff", "broken.json"),
        ("diff", "support.json", str(EXAMPLES / "tools.json")),
    ]
    fields: set[str] = set()
    for command, name, *rest in runs:
        run = run_cli(command, str(EXAMPLES / name), *rest, "--format", "json")
        fields |= _keys(json.loads(run.stdout))
    for path in EXAMPLE_FILES:  # every shape-changing option the schema test runs
        for out in shaped_outputs(run_cli, path):
            fields |= _keys(out)
    assert {"ceiling", "turns_before_next_step"} <= fields
    assert len(fields) > 50
    missing = sorted(f for f in fields if f"`{f}`" not in glossary)
    assert missing == []


def test_the_glossary_explains_the_words_of_the_output() -> None:
    glossary = (REPO / "docs" / "glossary.md").read_text(encoding="utf-8")
    for term in (
        "**View**", "**Fold**", "**Guidance**", "**Context block**", "**envelope**",
        "**Durable**", "`operator`", "`material`", "`refuse`", "`truncate`", "`skip`",
        "`left_out`", "`emitter`", "`literal`", "`fold-first`", "`plain`", "**Marker**",
        "**Intended difference**", "**IntegrationError**",
    ):
        assert term in glossary, term
    for kind in DEFECT_RULES:
        assert f"`{kind}`" in glossary, kind


def test_the_docs_point_to_no_file_users_do_not_have() -> None:
    docs = [REPO / "README.md", REPO / "CHANGELOG.md", *sorted((REPO / "docs").glob("*.md"))]
    for doc in docs:
        text = doc.read_text(encoding="utf-8")
        assert "shared/" not in text, doc.name
        assert "steering repo" not in text, doc.name
        for target in re.findall(r"`((?:docs|examples|benchmarks|scripts)/[\w./-]+)`", text):
            assert (REPO / target).exists(), (doc.name, target)
