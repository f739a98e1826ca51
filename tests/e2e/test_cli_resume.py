"""Context blocks reach resumed CLI turns (issue 9 item 6).

A resumed CLI session is sent only the request's last message. Under ``install()`` a resumed turn
carrying context blocks compiles against the records the session does not hold
(``integration._resume``), so the blocks gathered for that turn are in the one message sent;
plain lionagi folds them into the first instruction, which a resumed session never receives.
"""

from __future__ import annotations

import pytest
from lionagi import Branch

from lionagi_turns import (
    ContextBlock,
    TurnRequest,
    compile_chat_request,
    encode_context_section,
    to_provider_messages,
)
from lionagi_turns.integration import _install as integration

from .harness import BoundarySpy, collect

pytestmark = [pytest.mark.e2e, pytest.mark.anyio, pytest.mark.usefixtures("offline_tokens")]

SYSTEM = "You are a careful assistant."
QUESTIONS = ["What does SKU 12 cost?", "And with tax?", "Summarize."]


class Catalog:
    def __init__(self) -> None:
        self.turn = 0

    async def provide(self, branch: Branch, instruction: object) -> str:
        self.turn += 1
        return f"SKU 12 costs $3 (catalog read {self.turn})"


async def _session(fake_claude, claude_model) -> tuple[Branch, BoundarySpy, list[dict]]:
    fake_claude.log.unlink(missing_ok=True)  # the fake plays script turn N for its Nth call
    fake_claude.script(*({"text": f"answer {i}", "session_id": "S-res"} for i in range(3)))
    model = claude_model()
    branch = Branch(system=SYSTEM, chat_model=model)
    branch.providers.register(Catalog(), name="catalog")
    spy = BoundarySpy(model, watch=branch)
    for question in QUESTIONS:
        await collect(branch.run(question))
    return branch, spy, fake_claude.calls()


async def test_blocks_gathered_for_resumed_turns_reach_the_cli_prompt(
    fake_claude, claude_model
) -> None:
    _, _, off = await _session(fake_claude, claude_model)
    with integration.installed():
        branch, spy, on = await _session(fake_claude, claude_model)

    assert [c["resume"] for c in off] == [c["resume"] for c in on] == [None, "S-res", "S-res"]
    # Plain lionagi: the block of turns 2 and 3 never reaches the model.
    assert "catalog read 1" in off[0]["prompt"]
    assert not any("catalog read" in c["prompt"] for c in off[1:])

    for number, call in enumerate(on, start=1):
        block = ContextBlock("catalog", f"SKU 12 costs $3 (catalog read {number})")
        json_line = encode_context_section((block,)).splitlines()[1]
        assert json_line in call["prompt"], call["prompt"]
        assert SYSTEM in call["prompt"]
    # Nothing the session holds is re-sent: no earlier question or answer.
    for number, call in enumerate(on[1:], start=1):
        assert not any(q in call["prompt"] for q in QUESTIONS[:number])
        assert "answer" not in call["prompt"]
        assert QUESTIONS[number] in call["prompt"]
    # The resumed turns compile exactly the current turn with its block (no history).
    for number, boundary in enumerate(spy.calls[1:], start=2):
        current = branch.msgs.messages[boundary.progression[-1]]
        block = ContextBlock("catalog", f"SKU 12 costs $3 (catalog read {number})")
        expected = to_provider_messages(compile_chat_request(
            branch, TurnRequest(instruction=current, progression=(), context_blocks=(block,))))
        assert boundary.messages == expected
        assert on[number - 1]["prompt"] == expected[-1]["content"]
    # Blocks never enter the record (D3).
    assert not any("catalog read" in str(m.rendered) for m in branch.messages)


async def test_a_resumed_turn_without_blocks_is_compiled_over_the_whole_view(
    fake_claude, claude_model
) -> None:
    fake_claude.script(*({"text": f"answer {i}", "session_id": "S-res"} for i in range(2)))
    with integration.installed():
        model = claude_model()
        branch = Branch(system=SYSTEM, chat_model=model)
        spy = BoundarySpy(model, watch=branch)
        for question in QUESTIONS[:2]:
            await collect(branch.run(question))
    assert [m["role"] for m in spy.calls[1].messages] == ["user", "assistant", "user"]
    assert fake_claude.calls()[1]["prompt"] == spy.calls[1].messages[-1]["content"]


async def test_react_rounds_with_caller_context_keep_lionagis_request(
    fake_claude, claude_model
) -> None:
    """The known gap: a later ReAct round with caller context keeps the whole view (its blocks
    do not reach the session, as in lionagi), so the caller's context is not re-sent."""
    import json

    from . import workflows

    doc = json.dumps(workflows.CONTEXT_DOC["document"])[1:-1][:200]

    async def react() -> list[dict]:
        fake_claude.log.unlink(missing_ok=True)
        fake_claude.script(*({"text": r, "session_id": "S-res"}
                             for r in workflows._react_replies(2)))
        branch = Branch(system=SYSTEM, chat_model=claude_model())
        branch.providers.register(Catalog(), name="catalog")
        await branch.ReAct(instruction="Check.", context=workflows.CONTEXT_DOC,
                           max_extensions=1, extension_allowed=True)
        return fake_claude.calls()

    off = await react()
    integration._reset_warnings()
    with integration.installed(), pytest.warns(
        integration.TurnsCompatibilityWarning, match="later ReAct round resumes"
    ):
        on = await react()
    assert len(on) == len(off) == 3
    assert [doc in c["prompt"] for c in on] == [doc in c["prompt"] for c in off] == [
        True, False, False]
    assert [c["prompt"] for c in on[1:]] == [c["prompt"] for c in off[1:]]
