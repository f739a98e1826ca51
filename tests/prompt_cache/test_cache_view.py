"""prompt_cache_view: segments and marks of the next request, also for a saved branch."""

import json

from lionagi import Branch

from lionagi_turns import ContextBlock, TurnRequest
from lionagi_turns.cli._load import parse_branch
from lionagi_turns.integration._cache import prompt_cache_view
from lionagi_turns.profiles.prompt_cache._compile import compile_cached

from ._tools import lookup


def conversation() -> Branch:
    branch = Branch(system="You are terse.", tools=[lookup])
    for i in range(2):
        request = TurnRequest(
            instruction=branch.msgs.create_instruction(instruction=f"q{i}"),
            tool_schemas=tuple(branch.acts.schema_list),
            context_blocks=(ContextBlock("catalog", "SKU 12 costs $3"),),
        )
        compiled = compile_cached(branch, request, branch.acts.schema_list).compiled
        branch.msgs.add_message(instruction=compiled.instruction)
        branch.msgs.add_message(assistant_response=f"a{i}")
    return branch


def test_the_view_names_each_segment_and_mark() -> None:
    branch = conversation()
    request = TurnRequest(instruction=branch.msgs.create_instruction(instruction="next"))
    view = prompt_cache_view(branch, request, branch.acts.schema_list)
    assert view["segments"]["stable"]["blocks"] == 2
    assert view["segments"]["conversation"]["blocks"] == 1
    assert view["segments"]["turn"] == {"messages": 5, "previous_request_end": 2}
    assert view["marks"] == [
        {"at": "system[1]", "segment": "stable", "ttl": "1h"},
        {"at": "system[2]", "segment": "conversation", "ttl": "5m"},
        {"at": "messages[4].content[0]", "segment": "turn", "ttl": "5m"},
    ]
    assert view["changes"] == {"stable": False, "conversation": False, "history_rewrite": False}
    assert "SKU 12 costs $3" in view["system"][2]["text"]


def test_a_saved_branch_shows_the_recorded_stable_segment_without_its_tools() -> None:
    branch = conversation()
    saved = parse_branch(json.loads(json.dumps(branch.to_dict(), default=str))).branch
    assert not saved.acts.schema_list
    request = TurnRequest(instruction=saved.msgs.create_instruction(instruction="next"))
    view = prompt_cache_view(saved, request)
    live = prompt_cache_view(
        branch, TurnRequest(instruction=branch.msgs.create_instruction(instruction="next")),
        branch.acts.schema_list)
    assert view["system"] == live["system"] and view["messages"] == live["messages"]
    assert view["system"][1]["text"].startswith("Tools:\n")
    assert not view["changes"]["stable"]
