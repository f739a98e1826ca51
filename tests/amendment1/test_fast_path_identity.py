"""The fast path (render cache, libyaml emitter) changes nothing Amendment 1 sends: the same
messages and section bounds with it on and off (``lionagi_turns.no_fast_path()``), cold, on
the next call over the same branch (served from the cache) and on the next turn, errors
included."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from lionagi import Branch
from lionagi.protocols.messages import Instruction

from lionagi_turns import no_fast_path
from lionagi_turns.amendment1 import ContextBlock, SectionBudgets, TurnRequest, compile_chat_request
from lionagi_turns.memo import renders as render_cache

from ._support import add_action_pair, add_assistant, add_instruction, branch, chars

BLOCKS = (ContextBlock("catalog", "first retrieved value"), ContextBlock("memory", "second"))


def _tools_history(b: Branch, turns: int) -> Branch:
    """Turns with dict contexts, results on every other turn (one repeated in its instruction's
    prompt context, so the entry skips it) and an assistant answer."""
    for i in range(turns):
        if i % 2:
            add_action_pair(b, "search", {"query": f"q{i}", "limit": 3}, f"hit {i} — résumé")
        repeated = {"function": "search", "arguments": {"query": f"q{i - 1}", "limit": 3},
                    "output": f"hit {i - 1} — résumé"}
        context: list[Any] = [{"doc": f"report-{i}.md", "score": 0.5 + i / 8, "ok": i % 3 == 0}]
        if i % 4 == 2:
            context.append(repeated)
        add_instruction(b, f"step {i}\nsummarise", context=context, guidance="be brief")
        add_assistant(b, f"answer {i}")
    return b


def _with_images() -> Branch:
    b = branch("policy")
    add_instruction(b, "look", images=["https://example.com/a.png"])
    add_assistant(b, "a cat")
    add_action_pair(b, "describe", {"what": "cat"}, "tabby")
    add_instruction(b, "and now?", images=["https://example.com/b.png"])
    add_assistant(b, "a dog")
    add_action_pair(b, "describe", {"what": "dog"}, "beagle")
    return b


def _plain() -> Branch:
    b = _tools_history(branch(), 3)
    add_action_pair(b, "fetch", {"id": 7}, {"rows": [1, 2]})
    add_instruction(b, "ignored", plain_content="verbatim text", context=[{"k": "v"}])
    add_assistant(b, "ok")
    return b


SCENARIOS: dict[str, tuple[Callable[[], Branch], dict[str, Any]]] = {
    "history, results, blocks": (lambda: _tools_history(branch("policy"), 9),
                                 {"context_blocks": BLOCKS}),
    "history budget truncates": (lambda: _tools_history(branch("policy"), 9),
                                 {"budgets": SectionBudgets(history=400)}),
    "tool_results budget truncates": (lambda: _tools_history(branch(), 9),
                                      {"budgets": SectionBudgets(tool_results=90)}),
    "every budget, blocks skipped": (
        lambda: _tools_history(branch("policy"), 9),
        {"budgets": SectionBudgets(history=500, tool_results=120, context=60, system=100,
                                   instruction=500),
         "context_blocks": BLOCKS},
    ),
    "images with results": (_with_images, {"context_blocks": BLOCKS}),
    "plain content": (_plain, {}),
}


def _sent(
    b: Branch, now: Instruction, *, budgets: SectionBudgets | None = None, **request: Any
) -> tuple[Any, Any]:
    """What one compile sends (messages and section bounds)."""
    compiled = compile_chat_request(
        b, TurnRequest(instruction=now, **request), budgets=budgets, measure=chars
    )
    return compiled.messages, compiled.bounds


def _current(b: Branch, text: str = "now") -> Instruction:
    return b.msgs.create_instruction(instruction=text)


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_on_and_off_send_the_same_cold_again_and_next_turn(name: str) -> None:
    build, kwargs = SCENARIOS[name]
    render_cache.clear()
    b = build()
    now = _current(b)
    with no_fast_path():
        off = _sent(b, now, **kwargs)
    assert render_cache.cache_size() == 0
    cold = _sent(b, now, **kwargs)
    assert render_cache.cache_size() > 0  # the fast path ran and filled the cache
    again = _sent(b, now, **kwargs)  # historical instructions served from the cache
    assert cold == off
    assert again == off

    b.msgs.add_message(instruction=now)
    add_assistant(b, "done")
    add_action_pair(b, "search", {"query": "last"}, "final hit")
    following = _current(b, "next")
    with no_fast_path():
        off_next = _sent(b, following, **kwargs)
    assert _sent(b, following, **kwargs) == off_next


def test_in_place_change_of_a_cached_instruction_is_sent_on_and_off() -> None:
    b = _tools_history(branch("policy"), 5)
    now = _current(b)
    _sent(b, now)  # fills the cache
    stored = next(m for m in b.msgs.messages if getattr(m.content, "guidance", None))
    stored.content.prompt_context[0]["doc"] = "edited.md"
    with no_fast_path():
        off = _sent(b, now)
    assert _sent(b, now) == off
    assert any("edited.md" in str(m.content) for m in off[0])


def test_a_result_that_cannot_render_raises_the_same_error_on_and_off() -> None:
    b = _tools_history(branch("policy"), 4)
    now = _current(b)
    _sent(b, now)  # the instructions' own renderings are cached
    add_action_pair(b, "bad", {"x": 1}, {"members": {1, 2}})  # a set: YAML cannot keep order
    add_instruction(b, "after the bad result")
    add_assistant(b, "ok")
    errors = []
    for fast in (False, True):
        with pytest.raises((TypeError, ValueError)) as caught:
            if fast:
                _sent(b, now)
            else:
                with no_fast_path():
                    _sent(b, now)
        errors.append((type(caught.value), str(caught.value),
                       getattr(caught.value, "__notes__", None)))
    assert errors[0] == errors[1]
