"""The other compile profiles (prompt cache, Amendment 1) render through the same value and
image rules and name the record the same way."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from lionagi import Branch
from lionagi.protocols.messages import Instruction

from lionagi_turns import TurnRequest, amendment1
from lionagi_turns.profiles.prompt_cache._compile import compile_cached

from ._hostile import fingerprint, no_dns
from ._support import add_assistant, add_instruction


def _cached(b: Branch, ins: Instruction) -> Any:
    return compile_cached(b, TurnRequest(instruction=ins), None).compiled


def _amendment1(b: Branch, ins: Instruction) -> Any:
    return amendment1.compile_chat_request(b, amendment1.TurnRequest(instruction=ins))


PROFILES = pytest.mark.parametrize("compile_", [_cached, _amendment1], ids=["cache", "amendment1"])


@PROFILES
def test_a_set_in_the_current_context_is_named(compile_: Callable[..., Any]) -> None:
    b = Branch(system="policy")
    ins = b.msgs.create_instruction(instruction="now", context=[{"tags": {"a", "b"}}])
    before = fingerprint(b)
    with pytest.raises(TypeError) as info:
        compile_(b, ins)
    assert str(info.value).startswith("prompt_context[0]['tags'] is a set")
    assert str(info.value).endswith(f"(current instruction, id {ins.id})")
    assert fingerprint(b) == before


@PROFILES
def test_a_cyclic_history_context_and_a_non_text_reply_are_named(
    compile_: Callable[..., Any],
) -> None:
    b = Branch(system="policy")
    stored = add_instruction(b, "old", context=["x"])
    list.append(stored.content.prompt_context, stored.content.prompt_context)
    add_assistant(b, "seen")
    with pytest.raises(ValueError) as info:
        compile_(b, b.msgs.create_instruction(instruction="now"))
    assert "prompt_context contains itself" in str(info.value)
    assert str(info.value).endswith(f"(history position 1, instruction id {stored.id})")

    c = Branch(system="policy")
    add_instruction(c, "old")
    reply = add_assistant(c, "seen")
    object.__setattr__(reply.content, "assistant_response", ["not", "text"])
    with pytest.raises(TypeError) as named:
        compile_(c, c.msgs.create_instruction(instruction="now"))
    assert str(named.value) == (
        f"assistant_response is of type list, not text (history position 2, assistant "
        f"response id {reply.id}); store the reply as a string"
    )


@PROFILES
def test_images_follow_the_one_rule_without_dns(
    compile_: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    b = Branch()
    ins = b.msgs.create_instruction(instruction="now", images=["Https://example.com/a.png"])
    with no_dns(monkeypatch):
        compiled = compile_(b, ins)
    assert compiled.messages[-1].content[1]["image_url"]["url"] == "https://example.com/a.png"
    bad = b.msgs.create_instruction(instruction="now", images=["//host/x"])
    with no_dns(monkeypatch), pytest.raises(ValueError) as info:
        compile_(b, bad)
    assert str(info.value).endswith(f"(current instruction, id {bad.id})")
