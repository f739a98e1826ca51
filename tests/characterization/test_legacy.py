"""characterize.legacy: lionagi 0.36's own payload, live, without side effects on the request."""

from __future__ import annotations

import lionagi.operations.chat._prepare as lionagi_prepare
import pytest
from lionagi import Branch
from lionagi._errors import NotFoundError
from scenarios import TOOL, Verdict, by_id, request_for

from lionagi_turns import ContextBlock, TurnRequest
from lionagi_turns.characterize.legacy import (
    LEGACY_PREPARE,
    legacy_instruction,
    legacy_messages,
    legacy_messages_for_view,
)


def test_baseline_is_lionagis_own_function_captured_at_import(monkeypatch: pytest.MonkeyPatch):
    assert LEGACY_PREPARE.__module__ == "lionagi.operations.chat._prepare"
    scenario = by_id("system-history-guidance")
    branch = scenario.build()
    expected = legacy_messages(branch, request_for(branch, scenario))

    def rebound(*args: object, **kwargs: object) -> None:
        raise AssertionError("legacy baseline went through a rebound name")

    import lionagi.operations.chat.chat as chat_module
    import lionagi.operations.run.run as run_module

    monkeypatch.setattr(chat_module, "_prepare_run_kwargs", rebound)
    monkeypatch.setattr(run_module, "_prepare_run_kwargs", rebound)
    monkeypatch.setattr(lionagi_prepare, "_prepare_run_kwargs", rebound)
    assert legacy_messages(branch, request_for(branch, scenario)) == expected


def test_request_instruction_is_never_mutated():
    branch = Branch(system="S")
    instruction = branch.msgs.create_instruction(instruction="q", guidance="g", context=["c"])
    before = instruction.to_dict()
    request = TurnRequest(
        instruction=instruction,
        tool_schemas=(TOOL,),
        response_format=Verdict,
        context_blocks=(ContextBlock("p", "block"),),
    )
    messages = legacy_messages(branch, request)
    assert "Tools:" in messages[-1]["content"] and "ResponseSchema:" in messages[-1]["content"]
    assert instruction.to_dict() == before
    assert instruction.content.tool_schemas == []
    assert instruction.content.response_format is None

    copied = legacy_instruction(request)
    assert copied is not instruction and copied.id == instruction.id
    assert copied.content.tool_schemas == [TOOL]
    assert copied.content.tool_schemas[0] is not request.tool_schemas[0]


def test_blocks_reach_lionagi_as_newline_joined_contents():
    branch = Branch(system="S")
    request = TurnRequest(
        instruction=branch.msgs.create_instruction(instruction="q"),
        context_blocks=(ContextBlock("a", "one"), ContextBlock("b", "two")),
    )
    first = legacy_messages(branch, request)[0]["content"]
    assert first == "Guidance: |-\n  Sone\n  two\nInstruction: q"


def test_empty_tuple_means_whole_history_to_lionagi_but_view_can_be_empty():
    scenario = by_id("empty-tuple-progression-systemless")
    branch = scenario.build()
    request = request_for(branch, scenario)
    assert request.progression == ()
    assert len(legacy_messages(branch, request)) == 5
    assert legacy_messages_for_view(branch, request, []) == [
        {"role": "user", "content": "Instruction: What should I do next?"}
    ]
    assert len(branch.msgs.progression) == 4  # the branch itself is untouched


def test_lionagi_errors_propagate():
    scenario = by_id("missing-ids")
    branch = scenario.build()
    with pytest.raises(NotFoundError):
        legacy_messages(branch, request_for(branch, scenario))
