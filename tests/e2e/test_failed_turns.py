"""Failed turns leave a usable branch, with nothing dropped (issue 9 item 2).

lionagi's ``run()`` records its instruction before the model call. Under ``install()`` a turn
that ends unanswered gets one explicit marker response right after its records
(``integration._unanswered``), so the next call compiles; plain lionagi instead silently drops
the extra unanswered instruction from the next request. Each scenario runs install off and on in
the same test over the real transports (fake ``claude`` subprocess, local HTTP server), and
checks on the installed side that (a) every record lionagi made is still in
``branch.msgs.messages``, in order, (b) the only added records are the markers, and (c) the
next request is exactly what ``lionagi-turns compile`` prints for the branch saved just before
it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lionagi import Branch
from lionagi.protocols.messages import AssistantResponse

from lionagi_turns.integration import _install as integration
from lionagi_turns.integration._unanswered import UNANSWERED_KEY

from .harness import BoundarySpy, collect

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SYSTEM = "You are a careful assistant."
FAIL = {"is_error": True, "text": "provider exploded", "session_id": "S-fail"}
TOOL_THEN_FAIL = {
    **FAIL,
    "tools": [{"id": "t1", "name": "Bash", "input": {"command": "ls"}, "output": "a.txt"}],
}
OK = {"text": "fine", "session_id": "S-fail"}


def compile_cli(branch: Branch, tmp_path: Path, instruction: str) -> list[dict[str, Any]]:
    """``lionagi-turns compile --format json`` on the branch saved to disk, as a subprocess."""
    path = tmp_path / f"branch-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(branch.to_dict(), default=str), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "lionagi_turns", "compile", str(path),
         "--instruction", instruction, "--format", "json"],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
        env={**os.environ, "LOG_AUTO_SAVE_ON_EXIT": "false"}, check=False,
    )
    assert done.returncode == 0, done.stderr
    messages: list[dict[str, Any]] = json.loads(done.stdout)["messages"]
    return messages


async def failing_turns(branch: Branch, *instructions: str) -> None:
    for text in instructions:
        with pytest.raises(Exception, match="provider exploded"):
            await collect(branch.run(text))


def markers(branch: Branch) -> list[AssistantResponse]:
    return [m for m in branch.messages if UNANSWERED_KEY in m.metadata]


def kinds(branch: Branch) -> list[str]:
    return [
        "Marker" if UNANSWERED_KEY in m.metadata else type(m).__name__ for m in branch.messages
    ]


async def cli_session(claude_model, fake_claude, script, tail: str) -> tuple[Branch, Any]:
    fake_claude.script(OK, *script, OK)
    model = claude_model()
    branch = Branch(system=SYSTEM, chat_model=model)
    await collect(branch.run("first"))
    return branch, model


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        pytest.param(
            (FAIL, FAIL),
            ["System", "Instruction", "AssistantResponse", "Instruction", "Marker",
             "Instruction", "Marker", "Instruction", "AssistantResponse"],
            id="two-failed-turns-in-a-row",
        ),
        pytest.param(
            (TOOL_THEN_FAIL,),
            ["System", "Instruction", "AssistantResponse", "Instruction", "ActionRequest",
             "ActionResponse", "Marker", "Instruction", "AssistantResponse"],
            id="a-turn-that-ran-a-tool-then-failed",
        ),
    ],
)
async def test_failed_cli_turns_then_run_again(
    fake_claude, claude_model, tmp_path, script, expected
) -> None:
    failed = [f"attempt {i}" for i in range(len(script))]

    # install off: lionagi keeps working (it drops the extra unanswered instruction).
    off, _ = await cli_session(claude_model, fake_claude, script, "after")
    await failing_turns(off, *failed)
    off_records = [m.id for m in off.messages]
    assert [type(m).__name__ for m in (await collect(off.run("after")))] == [
        "Instruction", "AssistantResponse"]
    off_prompt = fake_claude.calls()[-1]["prompt"]

    # install on: the same session.
    fake_claude.log.unlink()
    with integration.installed():
        on, model = await cli_session(claude_model, fake_claude, script, "after")
        await failing_turns(on, *failed)
        before = [m.id for m in on.messages if UNANSWERED_KEY not in m.metadata]
        assert len(markers(on)) == len(script)
        assert all(
            m.content.assistant_response.startswith("(no response: this turn ended with")
            for m in markers(on)
        )
        shown = compile_cli(on, tmp_path, "after")
        spy = BoundarySpy(model, watch=on)
        out = await collect(on.run("after"))

    assert [type(m).__name__ for m in out] == ["Instruction", "AssistantResponse"]
    assert spy.calls[0].messages == shown
    assert kinds(on) == expected
    # Every record lionagi made is still there, in order; only markers were added.
    assert [m.id for m in on.messages if UNANSWERED_KEY not in m.metadata][: len(before)] == before
    assert len(before) == len(off_records)
    # The resumed CLI prompt is the compiled last message, and it is what plain lionagi sent.
    assert fake_claude.calls()[-1]["prompt"] == shown[-1]["content"] == off_prompt


async def test_failed_cli_turns_then_communicate_on_an_api_model_after_save_and_load(
    fake_claude, claude_model, chat_server, openai_model, tmp_path
) -> None:
    chat_server.script("off answer", "on answer")

    async def scenario(answer: str) -> tuple[Branch, list[dict[str, Any]] | None]:
        branch, _ = await cli_session(claude_model, fake_claude, (FAIL, TOOL_THEN_FAIL), "")
        await failing_turns(branch, "attempt 0", "attempt 1")
        reloaded = Branch.from_dict(json.loads(json.dumps(branch.to_dict(), default=str)))
        assert [m.id for m in reloaded.messages] == [m.id for m in branch.messages]
        shown = compile_cli(reloaded, tmp_path, "summarize") if integration.is_installed() else None
        reloaded.chat_model = openai_model()
        assert await reloaded.communicate("summarize") == answer
        return reloaded, shown

    off, _ = await scenario("off answer")
    fake_claude.log.unlink()
    with integration.installed():
        on, shown = await scenario("on answer")

    off_body, on_body = chat_server.payloads()
    assert on_body == shown
    assert kinds(on) == [
        "System", "Instruction", "AssistantResponse", "Instruction", "Marker", "Instruction",
        "ActionRequest", "ActionResponse", "Marker", "Instruction", "AssistantResponse",
    ]
    assert len([m for m in on.messages if UNANSWERED_KEY not in m.metadata]) == len(off.messages)
    # Both sides carry the tool result into the new turn; lionagi dropped "attempt 1" whole.
    assert "a.txt" in off_body[-1]["content"] and "a.txt" in on_body[-1]["content"]
    assert not any("attempt 1" in m["content"] for m in off_body)
    assert [m["role"] for m in on_body] == ["user", "assistant"] * 3 + ["user"]
    assert "attempt 1" in on_body[4]["content"]


async def test_an_abandoned_run_stream_is_marked_when_it_is_closed(
    fake_claude, claude_model
) -> None:
    # lionagi's run operation itself (what Branch.run and operate's CLI path iterate): closing
    # it is deterministic. Branch.run's own wrapper closes it only when it is collected.
    from lionagi.operations.run import run as run_module
    from lionagi.operations.types import RunParam

    fake_claude.script(OK, OK)
    with integration.installed():
        branch = Branch(system=SYSTEM, chat_model=claude_model())
        stream = run_module.run(branch, "abandon me", RunParam())
        first = await stream.__anext__()
        await stream.aclose()
        assert kinds(branch) == ["System", "Instruction", "Marker"]
        (marker,) = markers(branch)
        assert marker.metadata[UNANSWERED_KEY] == {
            "instruction": str(first.id), "reason": "the caller closing the stream"}
        out = await collect(branch.run("next"))
    assert [type(m).__name__ for m in out] == ["Instruction", "AssistantResponse"]


async def test_a_compile_error_records_nothing(fake_claude, claude_model) -> None:
    fake_claude.script(OK)
    with integration.installed():
        branch = Branch(system=SYSTEM, chat_model=claude_model())
        before = [m.to_dict() for m in branch.messages]
        with pytest.raises(ValueError, match="reserved key 'messages'"):
            from lionagi.operations.run.run import run
            from lionagi.operations.types import RunParam

            await collect(run(branch, "x", RunParam(imodel_kw={"messages": []})))
        assert [m.to_dict() for m in branch.messages] == before
    assert fake_claude.calls() == []



async def test_a_branch_failed_without_install_is_repaired_by_the_next_installed_call(
    fake_claude, claude_model
) -> None:
    import warnings

    from lionagi_turns import TurnsCompatibilityWarning, mark_unanswered_turns

    fake_claude.script(OK, FAIL, FAIL, OK)
    branch = Branch(system=SYSTEM, chat_model=claude_model())
    await collect(branch.run("first"))
    await failing_turns(branch, "attempt 0", "attempt 1")  # plain lionagi: no markers
    assert markers(branch) == []
    before = [m.id for m in branch.messages]
    with integration.installed(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = await collect(branch.run("after"))
        assert await mark_unanswered_turns(branch) == []  # nothing left to mark
    assert [type(m).__name__ for m in out] == ["Instruction", "AssistantResponse"]
    assert kinds(branch) == ["System", "Instruction", "AssistantResponse", "Instruction",
                             "Marker", "Instruction", "Marker", "Instruction",
                             "AssistantResponse"]
    assert [m.metadata[UNANSWERED_KEY]["reason"] for m in markers(branch)] == [
        "an earlier failure"] * 2
    assert [m.id for m in branch.messages if UNANSWERED_KEY not in m.metadata] == [
        *before, *(m.id for m in out)]
    assert len([w for w in caught if issubclass(w.category, TurnsCompatibilityWarning)]) == 1
