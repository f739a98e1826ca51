"""``lionagi-turns check``: every defect, each with its ids and positions; exit 0 / 1."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, ClassVar
from uuid import UUID, uuid4

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lionagi import Branch
from lionagi.protocols.messages import MessageRole, RoledMessage

from lionagi_turns.cli._check import check_report
from lionagi_turns.cli._load import LoadedBranch, parse_branch

from .conftest import EXAMPLES, edit

BROKEN_KINDS = {"missing_id", "duplicate_id", "consecutive_instructions", "first_not_instruction"}


@pytest.mark.parametrize("name", ["support", "tools", "images"])
def test_clean_examples_exit_0(run_cli, name: str) -> None:
    run = run_cli("check", str(EXAMPLES / f"{name}.json"), "--format", "json")
    assert run.code == 0, run.stderr
    out = run.json()
    assert out["ok"] is True and out["defects"] == []


def test_broken_example_names_every_offending_id(run_cli) -> None:
    path = EXAMPLES / "broken.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    view = data["metadata"]["current_progression"]["order"]
    stored = {m["id"]: m["metadata"]["lion_class"].rsplit(".", 1)[1]
              for m in data["messages"]["collections"]}
    missing = [uid for uid in view if uid not in stored]
    repeated = [uid for uid in set(view) if view.count(uid) > 1]
    kinds = [stored.get(uid) for uid in view]
    adjacent = [view[i] for i in range(1, len(view))
                if kinds[i] == kinds[i - 1] == "Instruction"]
    assert missing and repeated and adjacent  # the example is as broken as it claims

    run = run_cli("check", str(path), "--format", "json")
    assert run.code == 1, run.stderr
    out = run.json()
    assert {d["kind"] for d in out["defects"]} == BROKEN_KINDS
    named = {uid for d in out["defects"] for uid in d["ids"]}
    assert set(missing) | set(repeated) | set(adjacent) <= named
    assert out["records"] == len(view)  # an integer, as in every shape (schema check@1)
    assert [r["id"] for r in out["view_records"]] == view
    assert [r["kind"] for r in out["view_records"]] == kinds
    by_kind = {d["kind"]: d for d in out["defects"]}
    assert by_kind["missing_id"]["positions"] == [view.index(missing[0])]
    assert by_kind["duplicate_id"]["positions"] == [
        i for i, uid in enumerate(view) if uid == repeated[0]
    ]

    text = run_cli("check", str(path))
    assert text.code == 1
    for uid in named:
        assert uid in text.stdout
    assert "4 defect(s) in metadata.current_progression" in text.stdout


def test_broken_pile_progression_still_reports_every_id(run_cli, tmp_path: Path) -> None:
    """lionagi's Pile refuses a progression with repeats or unknown ids; check still sees it."""
    branch = Branch(system="S")
    first = branch.msgs.add_message(instruction="one")
    branch.msgs.add_message(assistant_response="two")
    source = tmp_path / "clean.json"
    source.write_text(json.dumps(branch.to_dict(mode="json")), encoding="utf-8")
    ghost = str(uuid4())

    def corrupt(data: dict[str, Any]) -> None:
        order = data["messages"]["progression"]["order"]
        order.extend([str(first.id), ghost])

    path = edit(source, tmp_path / "corrupt.json", corrupt)
    run = run_cli("check", str(path), "--format", "json")
    assert run.code == 1, run.stderr
    out = run.json()
    assert out["view"] == "messages.progression"
    kinds = {d["kind"]: d for d in out["defects"]}
    assert kinds["missing_id"]["ids"] == [ghost] and kinds["missing_id"]["positions"] == [4]
    assert kinds["duplicate_id"]["ids"] == [str(first.id)]
    assert kinds["duplicate_id"]["positions"] == [1, 3]
    assert any("repeats" in note for note in out["notes"])


def test_history_that_compiles_badly_is_reported(run_cli, tmp_path: Path) -> None:
    """No history defect, but a stored image URL the compiler refuses: check says so."""

    def no_host(data: dict[str, Any]) -> None:
        data["messages"]["collections"][1]["content"]["images"] = ["http:///shot.png"]

    path = edit(EXAMPLES / "images.json", tmp_path / "nohost.json", no_host)
    run = run_cli("check", str(path), "--format", "json")
    assert run.code == 1, run.stderr
    (defect,) = run.json()["defects"]
    assert defect["kind"] == "compile_error" and "http:///shot.png" in defect["message"]
    compiled = run_cli("compile", str(path))
    assert compiled.code == 1 and "cannot compile" in compiled.stderr
    assert len(compiled.stderr.splitlines()) == 1


def test_unknown_subtype_is_reported_with_its_id() -> None:
    """A fixed-role kind the compiler has no rule for (loaded in-process: lionagi only loads
    message classes from allowed module prefixes, so a file cannot carry one here)."""
    branch = Branch(system="S")
    branch.msgs.add_message(instruction="q")
    critique = _Critique(content={"note": "x"})
    branch.msgs.messages.include(critique)
    view = tuple(u for u in branch.msgs.progression)
    loaded = LoadedBranch(branch, "mem.json", view, "messages.progression", ())
    report = check_report(loaded)
    assert report["ok"] is False
    (defect,) = report["defects"]
    assert defect["kind"] == "unknown_subtype"
    assert defect["ids"] == [str(critique.id)] and defect["positions"] == [view.index(critique.id)]


class _Critique(RoledMessage):
    _role: ClassVar[MessageRole] = MessageRole.ASSISTANT


def test_clean_conversation_exits_0_in_text(run_cli, conversation: Path) -> None:
    run = run_cli("check", str(conversation))
    assert run.code == 0, run.stderr
    assert "no defects" in run.stdout


# In-process property over random views: the same function the CLI prints.

_BASE = Branch(system="S")
_IDS: list[UUID] = []
for _i in range(3):
    _IDS.append(_BASE.msgs.add_message(instruction=f"q{_i}").id)
    _IDS.append(_BASE.msgs.add_message(assistant_response=f"a{_i}").id)
_DATA = json.loads(json.dumps(_BASE.to_dict(mode="json")))
_GHOSTS = [UUID(int=random.Random(n).getrandbits(128), version=4) for n in range(3)]


@pytest.mark.slow
@given(
    view=st.lists(st.sampled_from(_IDS + _GHOSTS), max_size=10),
    in_pile_progression=st.booleans(),
)
def test_check_report_names_every_missing_and_repeated_id(
    view: list[UUID], in_pile_progression: bool
) -> None:
    data = json.loads(json.dumps(_DATA))
    order = [str(u) for u in view]
    if in_pile_progression:
        data["messages"]["progression"]["order"] = order
    else:
        data["metadata"]["current_progression"] = {"order": order}
    loaded = parse_branch(data, "random.json")
    assert loaded.view == tuple(view)
    report = check_report(loaded)
    missing = {str(u) for u in view if u in _GHOSTS}
    repeated = {str(u) for u in view if view.count(u) > 1}
    by_kind: dict[str, set[str]] = {}
    for d in report["defects"]:
        by_kind.setdefault(d["kind"], set()).update(d["ids"])
        for position in d["positions"]:
            assert 0 <= position < len(view)
    assert by_kind.get("missing_id", set()) == missing
    assert by_kind.get("duplicate_id", set()) == repeated
    assert report["ok"] == (not report["defects"])
