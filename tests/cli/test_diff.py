"""``lionagi-turns diff``: per-message unified diffs labelled with registry entries."""

from __future__ import annotations

import json

import pytest
from lionagi import Branch

import lionagi_turns.characterize as differences

from .conftest import EXAMPLES, save


def test_registered_differences_exit_0_with_labels(run_cli) -> None:
    run = run_cli("diff", str(EXAMPLES / "support.json"), "-c", "kb=Refunds take 5 days.")
    assert run.code == 0, run.stderr
    for entry_id in ("context-envelope", "fold-separators"):
        entry = differences.registry_entry(entry_id)
        assert f"intended: {entry.id} (ADR-0007 {entry.adr_clause}" in run.stdout
    assert "-  Be accurate and kind." in run.stdout or "- Be accurate" in run.stdout
    assert "LIONAGI_CONTEXT_BLOCKS_JSON" in run.stdout
    assert "messages[1]: identical" in run.stdout
    assert "every difference is an intended one" in run.stdout


def test_identical_payloads_exit_0(run_cli) -> None:
    run = run_cli("diff", str(EXAMPLES / "tools.json"), "-i", "Thanks.")
    assert run.code == 0, run.stderr
    assert "NOT REGISTERED" not in run.stdout
    assert run.stdout.count("identical") >= 7


def test_error_differences_are_labelled_and_a_rejected_history_exits_1(run_cli) -> None:
    """Both sides raise and the registry explains it, but nothing is sent: exit 1, said so
    (as ``compile`` of the same file exits 1)."""
    path = str(EXAMPLES / "broken.json")
    run = run_cli("diff", path)
    assert run.code == 1, run.stderr
    assert run_cli("compile", path).code == 1
    assert "lionagi raises: NotFoundError" in run.stdout
    assert "lionagi-turns raises: MissingIdsError" in run.stdout
    assert "intended: missing-ids" in run.stdout
    assert "every difference is an intended one\n" not in run.stdout
    verdict = " ".join(run.stdout.split()[-25:])
    assert verdict.endswith(
        "✗ the compiler rejects this history (every difference from lionagi is an intended "
        f"one); run `lionagi-turns check {path}` to list every defect"
    ), verdict


def test_unregistered_difference_exits_1(run_cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """With an empty registry the same fold difference is not explained: exit 1, reported."""
    real = differences.compare
    monkeypatch.setattr(
        differences, "compare", lambda branch, request: real(branch, request, registry=())
    )
    run = run_cli("diff", str(EXAMPLES / "support.json"), "-c", "kb=Refunds take 5 days.")
    assert run.code == 1
    assert "NOT REGISTERED" in run.stdout
    assert "not in the intended-difference registry" in run.stdout


def test_when_only_lionagi_sends_its_payload_is_shown(run_cli, tmp_path) -> None:
    """Adjacent instructions: lionagi silently drops one; the compiler refuses (registered), so
    the history is rejected: exit 1."""
    branch = Branch(system="S")
    branch.msgs.add_message(instruction="first")
    branch.msgs.add_message(instruction="second, unanswered")
    branch.msgs.add_message(assistant_response="answer")
    run = run_cli("diff", str(save(branch, tmp_path / "adjacent.json")))
    assert run.code == 1, run.stderr
    assert "✗ the compiler rejects this history" in run.stdout
    assert "lionagi-turns raises: HistoryError: Consecutive instructions" in run.stdout
    assert "lionagi sends messages[0]" in run.stdout
    assert "second, unanswered" not in run.stdout.split("lionagi sends")[1]  # dropped
    assert "intended: consecutive-instructions" in run.stdout


def test_lionagi_payload_with_parts_that_are_not_objects_is_shown_not_measured(
    run_cli, tmp_path
) -> None:
    """A stored assistant response that is a list of non-objects: lionagi sends it as content
    parts, the compiler refuses it. diff shows both, without sizes for lionagi's side (found
    by test_hostile's mutation property)."""
    branch = Branch()
    branch.msgs.add_message(instruction="q")
    branch.msgs.add_message(assistant_response="a")
    data = branch.to_dict(mode="json")
    data["messages"]["collections"][1]["content"]["assistant_response"] = [1, "a"]
    path = tmp_path / "parts.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    run = run_cli("diff", str(path), "--format", "json")
    assert run.code == 1, run.stderr
    assert run.stderr == ""
    report = run.json()
    assert report["lionagi_sections"] is None and report["sections"] is None
    assert report["compiled_error"].startswith("TypeError: assistant_response is of type")
