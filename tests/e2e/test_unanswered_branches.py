"""Branches whose turns failed without ``install()`` keep working under it (issue 18 item 2).

Such a branch holds an instruction no assistant response answers. lionagi 0.36 sends it next to
the new instruction (two user messages in a row) and later drops one of two adjacent
instructions; the compiler refuses adjacent instructions in history, so before this fix an
installed branch worked for one call and raised ``HistoryError`` on the next. Under
``install()`` every call surface now records the marker ``mark_unanswered_turns`` records before
compiling. Each scenario runs install off and on in the same test and compares what reached the
model (the local HTTP server's POST bodies, the fake ``claude``'s prompts).
"""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from lionagi import Branch
from lionagi.protocols.messages import AssistantResponse, Instruction
from pydantic import BaseModel

import lionagi_turns
from lionagi_turns import HistoryError, TurnRequest, TurnsCompatibilityWarning
from lionagi_turns.integration import _install as integration
from lionagi_turns.integration._unanswered import UNANSWERED_KEY, UNANSWERED_TEXT, UNKNOWN_REASON

from . import workflows
from .harness import collect

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

SYSTEM = "You are a careful assistant."
MARKER = UNANSWERED_TEXT.format(reason=UNKNOWN_REASON)
FAIL = {"is_error": True, "text": "provider exploded", "session_id": "S-fail"}
OK = {"text": "fine", "session_id": "S-fail"}
CONSECUTIVE = "Consecutive instructions require an intervening assistant response"
NEXT_STEP = (
    "next step: await lionagi_turns.mark_unanswered_turns(branch) records an assistant marker "
    "after each unanswered instruction (install() does so before every call); or record an "
    "assistant response between them, or leave one out of the progression."
)


async def communicate(branch: Branch, text: str) -> Any:
    return await branch.communicate(text)


def unanswered_branch(model: Any) -> Branch:
    """System, instruction "a", its answer, instruction "b" with no answer (a failed run())."""
    branch = Branch(system=SYSTEM, chat_model=model)
    branch.msgs.add_message(instruction="a")
    branch.msgs.add_message(assistant_response="A")
    branch.msgs.add_message(instruction="b")
    return branch


def markers(branch: Branch) -> list[AssistantResponse]:
    return [m for m in branch.messages if UNANSWERED_KEY in m.metadata]


def users_in_a_row(messages: list[dict[str, Any]]) -> int:
    """The longest run of consecutive user messages in one request."""
    best = run = 0
    for message in messages:
        run = run + 1 if message["role"] == "user" else 0
        best = max(best, run)
    return best


def roles(messages: list[dict[str, Any]]) -> list[str]:
    return [m["role"] for m in messages]


async def outcomes(branch: Branch, call: Callable[[Branch, str], Any], *texts: str) -> list[str]:
    """``call(branch, text)`` for each text in order; each outcome: ``"ok"`` or the exception's
    class name."""
    out = []
    for text in texts:
        try:
            await call(branch, text)
        except Exception as exc:  # the figure is which calls raised
            out.append(type(exc).__name__)
        else:
            out.append("ok")
    return out


async def outcomes_with_warnings(
    branch: Branch, call: Callable[[Branch, str], Any], on: bool
) -> tuple[list[str], list[warnings.WarningMessage]]:
    """``outcomes(branch, call, "c", "d")`` with ``install()`` on or off, and every warning
    raised meanwhile."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with integration.installed() if on else contextlib.nullcontext():
            out = await outcomes(branch, call, "c", "d")
    return out, caught


def repair_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [
        str(w.message) for w in caught
        if issubclass(w.category, TurnsCompatibilityWarning) and "no assistant response" in
        str(w.message)
    ]


async def test_in_memory_unanswered_instruction_then_two_communicates(
    chat_server, openai_model
) -> None:
    off = unanswered_branch(openai_model())
    assert await outcomes(off, communicate, "c", "d") == [
        "ok", "ok"]
    off_c, off_d = chat_server.payloads()
    chat_server.clear()

    on = unanswered_branch(openai_model())
    before = [m.id for m in on.messages]
    with integration.installed(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert await outcomes(on, communicate, "c", "d") == [
            "ok", "ok"]
    on_c, on_d = chat_server.payloads()

    # lionagi sends "b" and "c" as two user messages in a row, then drops one of them.
    assert [users_in_a_row(p) for p in (off_c, off_d)] == [2, 1]
    assert roles(off_c) == ["user", "assistant", "user", "user"]
    assert len(off_d) == 5
    # Installed: the marker stands between them in both requests; nothing else differs.
    assert [users_in_a_row(p) for p in (on_c, on_d)] == [1, 1]
    assert on_c[:3] + on_c[4:] == off_c
    assert on_c[3] == {"role": "assistant", "content": MARKER}
    assert on_d[:5] == on_c
    assert roles(on_d) == ["user", "assistant"] * 3 + ["user"]
    assert [m["content"] for m in on_d[2:5:2]] == [
        m["content"] for m in on_c[2:5:2]]  # "b" and "c" both still sent
    # Nothing removed; one marker, after "b", naming it; announced once.
    (marker,) = markers(on)
    ids = [m.id for m in on.messages]
    assert [i for i in ids if i != marker.id][: len(before)] == before
    assert ids.index(marker.id) == ids.index(before[-1]) + 1
    assert marker.metadata[UNANSWERED_KEY] == {
        "instruction": str(before[-1]), "reason": UNKNOWN_REASON}
    assert len(ids) == len(off.messages) + 1
    assert len(repair_warnings(caught)) == 1
    assert str(on.id) in repair_warnings(caught)[0]
    # The marker is an ordinary record: it saves and reloads with the branch.
    reloaded = Branch.from_dict(json.loads(json.dumps(on.to_dict(), default=str)))
    assert [m.id for m in markers(reloaded)] == [marker.id]
    assert [m.id for m in reloaded.messages] == ids


async def failed_cli_branch(fake_claude, claude_model, failures: int) -> Branch:
    """A CLI branch: one answered run(), then ``failures`` failed ones, all without install();
    saved with ``to_dict`` and reloaded with lionagi's ``Branch.from_dict``."""
    if fake_claude.log.exists():
        fake_claude.log.unlink()
    fake_claude.script(OK, *([FAIL] * failures))
    branch = Branch(system=SYSTEM, chat_model=claude_model())
    await collect(branch.run("first"))
    for i in range(failures):
        with pytest.raises(Exception, match="provider exploded"):
            await collect(branch.run(f"attempt {i}"))
    return Branch.from_dict(json.loads(json.dumps(branch.to_dict(), default=str)))


@pytest.mark.parametrize("failures", [1, 2])
async def test_cli_failures_saved_reloaded_then_communicate_on_an_http_model(
    fake_claude, claude_model, chat_server, openai_model, failures
) -> None:
    off = await failed_cli_branch(fake_claude, claude_model, failures)
    off.chat_model = openai_model()
    off_out = await outcomes(off, communicate, "c", "d")
    off_bodies = chat_server.payloads()
    chat_server.clear()

    on = await failed_cli_branch(fake_claude, claude_model, failures)
    assert markers(on) == []
    before = [m.id for m in on.messages]
    unanswered = [m.id for m in on.messages if isinstance(m, Instruction)][1:]
    on.chat_model = openai_model()
    with integration.installed(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        on_out = await outcomes(on, communicate, "c", "d")
    on_bodies = chat_server.payloads()

    assert off_out == on_out == ["ok", "ok"]
    assert [users_in_a_row(p) for p in off_bodies] == [2, 1]
    assert [users_in_a_row(p) for p in on_bodies] == [1, 1]
    # lionagi sends "attempt 0" beside "c", drops "attempt 1" and then "c" (its answer stays).
    sent = [[m["content"] for m in body] for body in (*off_bodies, *on_bodies)]
    assert sent[:2] == [
        ["Instruction: first", "fine", "Instruction: attempt 0", "Instruction: c"],
        ["Instruction: first", "fine", "Instruction: attempt 0", "ok", "Instruction: d"],
    ]
    # Installed: every attempt reaches the model, each followed by the marker; the reloaded
    # branch's system text is sent too (plain lionagi's from_dict reload loses it).
    attempts = [item for i in range(failures) for item in (f"Instruction: attempt {i}", MARKER)]
    first = "Guidance: You are a careful assistant.\nInstruction: first"
    assert sent[2:] == [
        [first, "fine", *attempts, "Instruction: c"],
        [first, "fine", *attempts, "Instruction: c", "ok", "Instruction: d"],
    ]
    found = markers(on)
    assert [m.metadata[UNANSWERED_KEY]["instruction"] for m in found] == [
        str(i) for i in unanswered]
    marker_ids = {m.id for m in found}
    assert [m.id for m in on.messages if m.id not in marker_ids][: len(before)] == before
    assert len(repair_warnings(caught)) == 1


async def test_before_install_a_communicate_that_succeeds_needs_no_repair_later(
    chat_server, openai_model
) -> None:
    # lionagi's first call on the unrepaired branch made I-A-I-c-R: the unanswered "b" is now
    # inside history. The first installed call still repairs it.
    branch = unanswered_branch(openai_model())
    await branch.communicate("c")
    chat_server.clear()
    with integration.installed(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert await branch.communicate("d") == "ok"
    (body,) = chat_server.payloads()
    assert users_in_a_row(body) == 1
    assert body[3] == {"role": "assistant", "content": MARKER}
    assert len(markers(branch)) == 1 and len(repair_warnings(caught)) == 1


async def test_outside_install_the_compiler_refuses_and_names_mark_unanswered_turns(
    chat_server, openai_model
) -> None:
    branch = unanswered_branch(openai_model())
    await branch.communicate("c")  # lionagi: records "c" and its answer after "b"
    history = [m.id for m in branch.messages]
    request = TurnRequest(instruction=Instruction(content={"instruction": "d"}))
    with pytest.raises(HistoryError) as raised:
        lionagi_turns.compile_chat_request(branch, request)
    assert str(raised.value) == CONSECUTIVE
    assert raised.value.__notes__[-1] == NEXT_STEP
    assert [m.id for m in branch.messages] == history
    # The named next step works: one marker after "b", then the branch compiles.
    (marker,) = await lionagi_turns.mark_unanswered_turns(branch)
    assert marker.metadata[UNANSWERED_KEY]["instruction"] == str(history[3])
    compiled = lionagi_turns.compile_chat_request(branch, request)
    assert [m.content for m in compiled.messages][3] == MARKER


class Answer(BaseModel):
    text: str


HTTP_SURFACES: dict[str, tuple[Callable[[Branch, str], Any], list[Any]]] = {
    "chat": (lambda b, t: b.chat(t), ["one", "two"]),
    "communicate": (lambda b, t: b.communicate(t), ["one", "two"]),
    "operate": (lambda b, t: b.operate(instruction=t, response_format=Answer),
                [{"text": "one"}, {"text": "two"}]),
    "ReAct": (lambda b, t: b.ReAct(instruction=t, max_extensions=0),
              workflows._react_replies(1) * 2),
}


@pytest.mark.parametrize("surface", list(HTTP_SURFACES))
async def test_every_http_surface_repairs_before_compiling(
    chat_server, openai_model, surface
) -> None:
    call, replies = HTTP_SURFACES[surface]
    seen = {}
    for on in (False, True):
        chat_server.clear()
        chat_server.script(*replies)
        branch = unanswered_branch(openai_model())
        out, caught = await outcomes_with_warnings(branch, call, on)
        first = chat_server.payloads()[0]
        seen[on] = (out, users_in_a_row(first), len(markers(branch)), len(repair_warnings(caught)))
        if on:
            assert first[3] == {"role": "assistant", "content": MARKER}
    assert seen == {False: (["ok", "ok"], 2, 0, 0), True: (["ok", "ok"], 1, 1, 1)}


CLI_SURFACES: dict[str, tuple[Callable[[Branch, str], Any], list[str]]] = {
    "run": (lambda b, t: collect(b.run(t)), ["one", "two"]),
    "operate": (lambda b, t: b.operate(instruction=t, response_format=Answer),
                [json.dumps({"text": "one"}), json.dumps({"text": "two"})]),
    "ReAct": (lambda b, t: b.ReAct(instruction=t, max_extensions=0),
              workflows._react_replies(1) * 2),
}


@pytest.mark.parametrize("surface", list(CLI_SURFACES))
async def test_every_cli_surface_repairs_before_compiling(
    fake_claude, claude_model, surface
) -> None:
    call, replies = CLI_SURFACES[surface]
    seen = {}
    for on in (False, True):
        if fake_claude.log.exists():
            fake_claude.log.unlink()
        fake_claude.script(*({"text": r, "session_id": f"S-{on}"} for r in replies))
        branch = unanswered_branch(claude_model())
        out, caught = await outcomes_with_warnings(branch, call, on)
        prompt = fake_claude.calls()[0]["prompt"]
        seen[on] = (out, MARKER in prompt, "Instruction: b" in prompt, len(markers(branch)),
                    len(repair_warnings(caught)))
    assert seen == {False: (["ok", "ok"], False, True, 0, 0),
                    True: (["ok", "ok"], True, True, 1, 1)}


async def test_a_run_turn_in_flight_is_not_repaired_by_another_call(
    fake_claude, claude_model, chat_server, openai_model
) -> None:
    from lionagi.operations.run import run as run_module
    from lionagi.operations.types import RunParam

    fake_claude.script(OK)
    with integration.installed(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        branch = unanswered_branch(claude_model())
        stream = run_module.run(branch, "running", RunParam())
        running = await stream.__anext__()  # recorded; its model call has not happened yet
        assert await branch.communicate("c", chat_model=openai_model()) == "ok"
        await stream.aclose()
    (body,) = chat_server.payloads()
    # "b" was repaired by the run's own call; the turn in flight was left alone for "c".
    assert [m["content"] for m in body[2:]] == [
        "Instruction: b", MARKER, "Instruction: running", "Instruction: c"]
    assert [(m.metadata[UNANSWERED_KEY]["instruction"], m.metadata[UNANSWERED_KEY]["reason"])
            for m in markers(branch)] == [
        (str(branch.messages[3].id), UNKNOWN_REASON),
        (str(running.id), "the caller closing the stream"),
    ]
    kinds = ["Marker" if UNANSWERED_KEY in m.metadata else type(m).__name__
             for m in branch.messages]
    assert kinds == ["System", "Instruction", "AssistantResponse", "Instruction", "Marker",
                     "Instruction", "Marker", "Instruction", "AssistantResponse"]
    assert len(repair_warnings(caught)) == 1


async def test_later_unanswered_instructions_on_the_same_branch_are_found(
    chat_server, openai_model
) -> None:
    # The repair walks only what was appended since its last call on this branch object; an
    # instruction added later (install off meanwhile) or inserted before the walked end is
    # still found.
    branch = Branch(system=SYSTEM, chat_model=openai_model())
    with integration.installed():
        assert await branch.communicate("one") == "ok"
    late = branch.msgs.add_message(instruction="late")  # plain lionagi, no answer
    await branch.communicate("two")  # install off: "late" is now inside the history
    with integration.installed(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert await branch.communicate("three") == "ok"  # the appended records are walked
    assert [m.metadata[UNANSWERED_KEY]["instruction"] for m in markers(branch)] == [str(late.id)]
    inserted = branch.msgs.create_instruction(instruction="inserted")
    branch.msgs.messages.include(inserted)
    branch.msgs.progression.remove(inserted.id)
    branch.msgs.progression.insert(1, [inserted.id])  # before "one", never answered
    chat_server.clear()
    with integration.installed(), warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        assert await branch.communicate("four") == "ok"  # the walked ids changed: walk all
    assert [m.metadata[UNANSWERED_KEY]["instruction"] for m in markers(branch)] == [
        str(inserted.id), str(late.id)]
    (body,) = chat_server.payloads()
    assert users_in_a_row(body) == 1
    # Announced once per branch: the second repair of the same branch is silent.
    assert (len(repair_warnings(caught)), len(repair_warnings(again))) == (1, 0)


async def test_two_calls_racing_on_an_unrepaired_branch_record_one_marker(
    chat_server, openai_model
) -> None:
    import anyio

    branch = unanswered_branch(openai_model())
    await branch.communicate("c")  # install off: "b" is now inside the history
    with integration.installed(), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        async with anyio.create_task_group() as tg:
            tg.start_soon(communicate, branch, "d")
            tg.start_soon(communicate, branch, "e")
    assert len(markers(branch)) == 1
    assert len(repair_warnings(caught)) == 1
