"""``compile --at K``: the request the K-th recorded instruction was sent with, rebuilt from
the history before it; what the saved branch does not record is named; a K out of range is
one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lionagi import Branch

from lionagi_turns import ContextBlock, TurnRequest, compile_chat_request, to_provider_messages
from lionagi_turns.profiles.prompt_cache._compile import compile_cached

from .conftest import EXAMPLES, assert_bad_input, save


def _played(tmp_path: Path) -> tuple[Path, list[list[dict[str, Any]]]]:
    """Three turns played through the compiler, a tool round in the second; returns the saved
    branch and the messages each turn sent."""
    branch = Branch(system="You are terse.\nAnswer in English.")
    sent = []
    for i, (text, guidance) in enumerate([("What is 2+2?", "Show work."), ("Add 3.", None),
                                          ("Thanks!", None)]):
        instruction = branch.msgs.create_instruction(instruction=text, guidance=guidance)
        compiled = compile_chat_request(branch, TurnRequest(instruction=instruction))
        sent.append(to_provider_messages(compiled))
        branch.msgs.add_message(instruction=compiled.instruction)
        if i == 1:
            call = branch.msgs.add_message(action_function="add", action_arguments={"a": 4})
            branch.msgs.add_message(action_request=call, action_output=7)
        branch.msgs.add_message(assistant_response=f"answer {i}")
    return save(branch, tmp_path / "played.json"), sent


def test_at_k_is_the_request_that_turn_sent(run_cli, tmp_path: Path) -> None:
    path, sent = _played(tmp_path)
    for k, messages in enumerate(sent, 1):
        out = run_cli("compile", str(path), "--at", str(k), "-f", "json").json()
        assert out["messages"] == messages, k
        assert out["at"]["instruction"] == k and out["at"]["of"] == 3
        assert out["at"]["not_recorded"] == ["tool_schemas", "response_format", "context_blocks"]
        assert out["instruction_is_placeholder"] is False
        assert out["sections"]["total"]["characters"] == sum(len(m["content"]) for m in messages)


def test_at_text_view_names_what_is_not_recorded(run_cli, tmp_path: Path) -> None:
    path, _ = _played(tmp_path)
    run = run_cli("compile", str(path), "--at", "2")
    assert run.code == 0, run.stderr
    assert "rebuilt: instruction 2 of 3" in run.stdout
    assert "not recorded (shown as none): tool_schemas, response_format, context_blocks" in (
        run.stdout
    )
    assert "current turn (instruction 2, rebuilt)" in run.stdout


@pytest.mark.parametrize("k", ["0", "3", "-1"])
def test_out_of_range_k_exits_2_naming_the_valid_range(run_cli, k: str) -> None:
    run = run_cli("compile", str(EXAMPLES / "support.json"), "--at", k)
    line = assert_bad_input(run, f"--at {k} is out of range", "valid: 1..2")
    assert "support.json" in line


def test_at_on_a_branch_without_instructions(run_cli, tmp_path: Path) -> None:
    path = save(Branch(system="only a system"), tmp_path / "empty.json")
    assert_bad_input(run_cli("compile", str(path), "--at", "1"), "records 0 instruction(s)")


def test_at_with_instruction_is_refused(run_cli) -> None:
    run = run_cli("compile", str(EXAMPLES / "support.json"), "--at", "1", "-i", "x")
    assert_bad_input(run, "--at rebuilds a recorded instruction; drop --instruction")


@pytest.mark.parametrize("profile", ["default", "amendment1", "prompt-cache"])
def test_at_last_instruction_of_examples_in_every_profile(run_cli, profile: str) -> None:
    out = run_cli(
        "compile", str(EXAMPLES / "support.json"), "--at", "2", "--profile", profile, "-f", "json"
    ).json()
    assert out["profile"] == profile
    assert out["messages"][-1]["role"] == "user"
    assert "Sure: INV-2291 and INV-2297." in json.dumps(out["messages"][-1])
    assert len(out["messages"]) == 3


def test_prompt_cache_records_the_sent_text_and_first_blocks(run_cli, tmp_path: Path) -> None:
    """Under the prompt-cache profile each instruction records the text it was sent as, and
    the conversation's first one its context blocks: --at uses and compares them."""
    branch = Branch(system="You are terse.")
    sent = []
    for i in range(2):
        request = TurnRequest(
            instruction=branch.msgs.create_instruction(instruction=f"q{i}"),
            context_blocks=(ContextBlock("catalog", "SKU 12 costs $3"),),
        )
        result = compile_cached(branch, request, [])
        sent.append(result)
        branch.msgs.add_message(instruction=result.compiled.instruction)
        branch.msgs.add_message(assistant_response=f"a{i}")
    path = tmp_path / "cached.json"
    path.write_text(json.dumps(branch.to_dict(), default=str), encoding="utf-8")
    first = run_cli("compile", str(path), "--at", "1", "--profile", "prompt-cache", "-f", "json")
    out = first.json()
    at = out["at"]
    assert at["recorded"] == ["sent_text", "context_blocks"]
    assert at["not_recorded"] == ["tool_schemas", "response_format"]
    assert at["sent_text"] == sent[0].record.text and at["sent_text_matches"] is True
    assert out["context_blocks"] == ["catalog"]
    assert [b["text"] for b in out["system"]] == list(sent[0].layout.system_blocks)
    plain = run_cli("compile", str(path), "--at", "1", "-f", "json").json()
    assert plain["at"]["recorded"] == [] and plain["context_blocks"] == []
