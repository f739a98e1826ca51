"""The cache sees in-place edits of stored records and never writes lionagi private state."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from lionagi.operations.chat._prepare import _prepare_run_kwargs
from lionagi.operations.types import ChatParam
from lionagi.protocols.messages.instruction import InstructionContent

from lionagi_turns.memo import renders as _cache

from ._support import PNG, Convo, current, outcome, private_state, slow_outcome

MUTATIONS: dict[str, Callable[[Convo], None]] = {
    "context-dict-value": lambda c: c.i2.content.prompt_context[0].__setitem__("doc", "b"),
    "context-nested-list": lambda c: c.i2.content.prompt_context[0]["rows"].append(3),
    "context-nested-dict": lambda c: c.i2.content.prompt_context[0]["meta"].update(k="w"),
    "context-append": lambda c: c.i2.content.prompt_context.append({"new": 1}),
    "context-replace-item": lambda c: c.i2.content.prompt_context.__setitem__(1, "other"),
    "context-delete-item": lambda c: c.i2.content.prompt_context.__delitem__(1),
    "guidance-assign": lambda c: setattr(c.i2.content, "guidance", "new guidance"),
    "instruction-assign": lambda c: setattr(c.i2.content, "instruction", "rephrased"),
    "plain-content-assign": lambda c: setattr(c.i2.content, "plain_content", "just text"),
    "content-replaced": lambda c: setattr(
        c.i2, "content", InstructionContent(instruction="brand new", prompt_context=[1])
    ),
    "assistant-text": lambda c: setattr(c.a1.content, "assistant_response", "uno"),
    "action-output-in-place": lambda c: c.resp.content.output["rows"].append({"id": 2}),
    "action-output-assign": lambda c: setattr(c.resp.content, "output", "done"),
    "action-arguments-in-place": lambda c: c.resp.content.arguments["n"].append(2),
    "action-function-assign": lambda c: setattr(c.resp.content, "function", "search"),
    "images-append": lambda c: c.i3.content.images.append(PNG),
    "image-detail-assign": lambda c: setattr(c.i3.content, "image_detail", "high"),
    "fold-target-guidance": lambda c: setattr(c.i1.content, "guidance", {"tone": "dry"}),
    "system-text": lambda c: setattr(c.branch.msgs.system.content, "system_message", "Other."),
}


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_in_place_edit_is_reflected_by_the_next_compile(name: str) -> None:
    convo = Convo()
    request = current(convo.branch)
    outcome(convo.branch, request)
    before = outcome(convo.branch, request)  # served from the cache
    MUTATIONS[name](convo)
    after = outcome(convo.branch, request)
    assert after == slow_outcome(convo.branch, request)
    assert after != before


def test_untracked_values_are_never_served_from_the_cache() -> None:
    convo = Convo()
    inner = ["seen"]
    m = convo.branch.msgs
    held = m.add_message(instruction="untracked", context=[("pair", inner)])
    m.add_message(assistant_response="ok")
    request = current(convo.branch)
    first = outcome(convo.branch, request)
    assert held.id not in {getattr(e[0](), "id", None) for e in _cache._entries.values()}
    inner.append("changed in place")  # lionagi cannot see this: no revision bump
    after = outcome(convo.branch, request)
    assert after != first
    assert after == slow_outcome(convo.branch, request)


def test_untracked_action_output_is_never_served_from_the_cache() -> None:
    convo = Convo()
    m = convo.branch.msgs
    output = ["a"]
    request_msg = m.add_message(action_function="f", action_arguments={})
    m.add_message(action_request=request_msg, action_output=("wrapped", output))
    m.add_message(instruction="after the tool")
    m.add_message(assistant_response="ok")
    request = current(convo.branch)
    first = outcome(convo.branch, request)
    output.append("b")
    after = outcome(convo.branch, request)
    assert after != first and after == slow_outcome(convo.branch, request)


def test_compile_writes_no_private_state() -> None:
    convo = Convo()
    request = current(convo.branch)
    before = private_state(convo.branch)
    outcome(convo.branch, request)
    outcome(convo.branch, request)
    assert private_state(convo.branch) == before


def test_compile_leaves_legacy_render_caches_alone() -> None:
    convo = Convo()
    request = current(convo.branch)
    _prepare_run_kwargs(convo.branch, None, ChatParam.from_branch(convo.branch),
                        ins=convo.branch.msgs.create_instruction(instruction="legacy"))
    before = private_state(convo.branch)
    assert any(entry[1]["_render_cache"] != "{}" for entry in before.values())
    outcome(convo.branch, request)
    outcome(convo.branch, request)
    assert private_state(convo.branch) == before


def test_multimodal_history_is_a_fresh_copy_each_time() -> None:
    convo = Convo()
    request = current(convo.branch)
    first = outcome(convo.branch, request)
    parts: list[dict[str, Any]] = first[1][4]["content"]  # I3, a list with an image part
    assert isinstance(parts, list)
    parts[0]["text"] = "tampered"
    parts[1]["image_url"]["url"] = "tampered"
    assert outcome(convo.branch, request) == slow_outcome(convo.branch, request)
