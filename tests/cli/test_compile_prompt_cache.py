"""``compile --profile prompt-cache``: the segments and marks of a saved branch's next request."""

import json
from pathlib import Path

from lionagi import Branch
from prompt_cache._tools import lookup

from lionagi_turns import ContextBlock, TurnRequest
from lionagi_turns.cli._load import load_branch
from lionagi_turns.cli._prompt_cache import prompt_cache_report
from lionagi_turns.core.measure import count_tokens
from lionagi_turns.profiles.prompt_cache._compile import compile_cached


def saved_conversation(tmp_path: Path) -> Path:
    """Two turns compiled under the prompt-cache profile, with a first-call context block."""
    branch = Branch(system="You are terse.", tools=[lookup])
    for i in range(2):
        request = TurnRequest(
            instruction=branch.msgs.create_instruction(instruction=f"q{i}"),
            tool_schemas=tuple(branch.acts.schema_list),
            context_blocks=(ContextBlock("catalog", "SKU 12 costs $3"),) if i == 0 else (),
        )
        compiled = compile_cached(branch, request, branch.acts.schema_list).compiled
        branch.msgs.add_message(instruction=compiled.instruction)
        branch.msgs.add_message(assistant_response=f"a{i}")
    path = tmp_path / "cached.json"
    path.write_text(json.dumps(branch.to_dict(), default=str), encoding="utf-8")
    return path


def test_json_shows_segments_and_where_the_marks_go(run_cli, tmp_path: Path) -> None:
    path = saved_conversation(tmp_path)
    run = run_cli("compile", str(path), "--profile", "prompt-cache", "--format", "json")
    assert run.code == 0, run.stderr
    out = run.json()
    assert out == prompt_cache_report(load_branch(path))
    assert out["profile"] == "prompt-cache"
    stable = [b["text"] for b in out["system"][:2]]
    conversation = out["system"][2]["text"]
    assert out["segments"] == {
        "stable": {
            "blocks": 2,
            "characters": sum(len(t) for t in stable),
            "tokens": sum(count_tokens(t) for t in stable),
        },
        "conversation": {
            "blocks": 1,
            "characters": len(conversation),
            "tokens": count_tokens(conversation),
        },
        "turn": {"messages": 5, "previous_request_end": 2},
    }
    assert [(m["at"], m["segment"], m["ttl"]) for m in out["marks"]] == [
        ("system[1]", "stable", "1h"), ("system[2]", "conversation", "5m"),
        ("messages[4].content[0]", "turn", "5m")]
    assert out["system"][1]["text"].startswith("Tools:\n")  # as recorded: no tools are saved
    assert "Tools:\n- lookup" in out["messages"][0]["content"]  # history kept its sections
    assert out["changes"] == {"stable": False, "conversation": False, "history_rewrite": False}


def test_text_view_lists_the_marks_and_changes(run_cli, tmp_path: Path) -> None:
    run = run_cli("compile", str(saved_conversation(tmp_path)), "--profile", "prompt-cache")
    assert run.code == 0, run.stderr
    assert "1h (stable)" in run.stdout and "5m (conversation)" in run.stdout
    assert "changes against the previous recorded request: none" in run.stdout
    assert "previous request ended at messages[2]" in run.stdout


def test_a_rejected_history_exits_1(run_cli, tmp_path: Path) -> None:
    branch = Branch(system="s")
    branch.msgs.add_message(instruction="a")
    branch.msgs.add_message(instruction="b")
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(branch.to_dict(), default=str), encoding="utf-8")
    run = run_cli("compile", str(path), "--profile", "prompt-cache", "--format", "json")
    assert run.code == 1
    assert "Consecutive instructions" in run.stderr
