"""The shared chat/run payload matrix (issue #3 item 7; ADR-0007 D5, D6 "one payload test matrix
shared by chat and run").

Every scenario of ``tests/scenarios.py`` that compiles is driven, with the compiler installed,
through ``Branch.chat``, ``Branch.communicate`` and ``Branch.operate`` against a real HTTP server
on 127.0.0.1 and through ``run`` against the fake ``claude`` executable, each on a fresh build of
the scenario's branch. The messages that reached each model boundary must equal
``to_provider_messages(compile_chat_request(branch, request_for(branch, scenario)))`` computed
independently on another fresh build, and chat and run must be identical. The three assertions
are separate tests so a change to only one side fails a test that names that side.

Context blocks come from real lionagi ContextProviders registered on the branch (one per block,
named as the block's provider). lionagi skips providers on a branch without a system message
(intended-differences §4.3 keeps that), so there the expected request carries no blocks.

Not driven here: scenarios with the ``()`` progression (the internal empty-history form no
lionagi call surface can express; an empty list means "the branch's progression"), and error
scenarios, which have their own tests below (no request, no subprocess, nothing recorded).
Error scenarios whose only defect is an unanswered instruction in the branch's own progression
are repaired under install() before compiling; they have their own test too (the request is the
independent compile after ``mark_unanswered_turns``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any

import pytest
import scenarios as catalogue
from lionagi import Branch
from lionagi.protocols.messages import Instruction

from lionagi_turns import (
    HistoryError,
    TurnsCompatibilityWarning,
    compile_chat_request,
    mark_unanswered_turns,
    to_provider_messages,
)
from lionagi_turns.integration._unanswered import UNANSWERED_TEXT, UNKNOWN_REASON

from .conftest import FakeClaude
from .harness import BoundarySpy, branch_state, cli_prompt, run_turn
from .http_server import ChatServer

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.anyio,
    pytest.mark.usefixtures("turns_installed", "offline_tokens"),
]

Messages = list[dict[str, Any]]
MARKER = UNANSWERED_TEXT.format(reason=UNKNOWN_REASON)
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

# Keyword arguments each HTTP surface accepts for the turn (lionagi 0.36 signatures).
COMMUNICATE_KEYS = frozenset({"instruction", "guidance", "context", "plain_content",
                              "progression", "images", "image_detail", "imodel_kw"})
OPERATE_KEYS = frozenset({"instruction", "guidance", "context", "progression", "images",
                          "image_detail", "tool_schemas", "imodel_kw"})


# ------------------------------------------------------------------------------- catalogue


def _expected(scenario: catalogue.Scenario) -> Messages:
    """The independent compile on a fresh build (raises what compile raises)."""
    branch = scenario.build()
    request = catalogue.request_for(branch, scenario)
    if request.context_blocks and branch.msgs.system is None:
        request = dataclasses.replace(request, context_blocks=())
    return to_provider_messages(compile_chat_request(branch, request))


def _compiles(scenario: catalogue.Scenario) -> bool:
    try:
        _expected(scenario)
    except (ValueError, TypeError):
        return False
    return True


def _drivable(scenario: catalogue.Scenario) -> bool:
    return catalogue.progression_for(scenario.build(), scenario) != ()


def _repaired_by_install(scenario: catalogue.Scenario) -> bool:
    """Its compile fails only for adjacent instructions in the branch's own progression."""
    try:
        _expected(scenario)
    except HistoryError as exc:
        kinds = {d.kind for d in exc.defects}
        return kinds == {"consecutive_instructions"} and "progression" not in scenario.call
    except (ValueError, TypeError):
        return False
    return False


DRIVEN = [s for s in catalogue.SCENARIOS if _drivable(s) and _compiles(s)]
REPAIRED = [s for s in catalogue.SCENARIOS if _drivable(s) and _repaired_by_install(s)]
FAILING = [
    s for s in catalogue.SCENARIOS if _drivable(s) and not _compiles(s) and s not in REPAIRED
]
COMMUNICATED = [s for s in DRIVEN if set(s.call) <= COMMUNICATE_KEYS]
OPERATED = [s for s in DRIVEN if set(s.call) <= OPERATE_KEYS and "instruction" in s.call]


def _ids(items: list[catalogue.Scenario]) -> list[str]:
    return [s.id for s in items]


def test_the_matrix_covers_the_catalogue() -> None:
    skipped = ({s.id for s in catalogue.SCENARIOS} - set(_ids(DRIVEN)) - set(_ids(FAILING))
               - set(_ids(REPAIRED)))
    assert all(catalogue.progression_for(catalogue.by_id(i).build(), catalogue.by_id(i)) == ()
               for i in skipped), skipped
    assert len(DRIVEN) >= 30 and len(FAILING) >= 4 and len(REPAIRED) >= 1
    kinds = {k for s in DRIVEN for k in s.call} | ({"blocks"} if any(s.blocks for s in DRIVEN)
                                                   else set())
    assert {"images", "tool_schemas", "response_format", "progression", "plain_content",
            "guidance", "context", "blocks", "imodel_kw"} <= kinds
    assert len(COMMUNICATED) >= 15 and len(OPERATED) >= 15


# ---------------------------------------------------------------------------------- drivers


class StaticProvider:
    """A lionagi ContextProvider returning fixed text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.calls = 0

    async def provide(self, branch: Branch, instruction: Instruction) -> str:
        self.calls += 1
        return self.text


def _prepare(scenario: catalogue.Scenario, model: Any) -> tuple[Branch, dict[str, Any]]:
    """A fresh branch on ``model`` with the scenario's providers, and the call's kwargs with
    its progression selector resolved."""
    branch = scenario.build()
    branch.chat_model = model
    for name, content in scenario.blocks:
        branch.providers.register(StaticProvider(content), name=name)
    call = dict(scenario.call)
    if "progression" in call:
        call["progression"] = list(catalogue.progression_for(branch, scenario) or ())
    return branch, call


def _check_provider_report(branch: Branch, scenario: catalogue.Scenario) -> None:
    if not scenario.blocks:
        return
    report = branch.last_context_report
    names = [name for name, _ in scenario.blocks]
    if branch.msgs.system is None:
        assert report.skipped == names and not report.fired
    else:
        assert [f["provider_name"] for f in report.fired] == names


async def drive_http(surface: str, scenario: catalogue.Scenario, server: ChatServer,
                     make_model: Callable[[], Any]) -> Messages:
    """One turn through ``Branch.<surface>``; returns the one POSTed ``messages``."""
    branch, call = _prepare(scenario, make_model())
    kwargs = dict(call)
    kwargs.update(kwargs.pop("imodel_kw", None) or {})
    before = len(server.chat_requests())
    await getattr(branch, surface)(**kwargs)
    posted = server.chat_requests()[before:]
    assert len(posted) == 1, f"{surface} made {len(posted)} model calls"
    for key, value in (call.get("imodel_kw") or {}).items():
        assert posted[0].body.get(key) == value, (key, posted[0].body)
    _check_provider_report(branch, scenario)
    return posted[0].messages


async def drive_run(scenario: catalogue.Scenario, fake: FakeClaude,
                    make_model: Callable[[], Any]) -> Messages:
    """One fresh-session ``run`` turn; returns the messages handed to the CLI endpoint, after
    checking that the spawned CLI received lionagi's flattening of exactly those messages."""
    model = make_model()
    branch, call = _prepare(scenario, model)
    call.pop("imodel_kw", None)  # sampling kwargs have no claude CLI flag
    spy = BoundarySpy(model, watch=branch)
    before = len(fake.calls())
    await run_turn(branch, call)
    spawned = fake.calls()[before:]
    assert len(spawned) == 1 and len(spy.calls) == 1
    messages = spy.calls[0].messages
    assert spawned[0]["resume"] is None
    assert spawned[0]["prompt"] == cli_prompt(messages)
    if all(isinstance(m["content"], str) for m in messages):
        assert spawned[0]["prompt"] == "\n".join(m["content"] for m in messages)
    _check_provider_report(branch, scenario)
    return messages


# ------------------------------------------------------------------------------ the matrix


@pytest.mark.parametrize("scenario", DRIVEN, ids=_ids(DRIVEN))
async def test_chat_and_run_send_the_compiled_messages(
    scenario, chat_server, openai_model, fake_claude, claude_model
) -> None:
    """Each side is driven by this test itself: chat over HTTP and run over the CLI both send
    exactly the independent compile, hence the same messages."""
    expected = _expected(scenario)
    chat = await drive_http("chat", scenario, chat_server, openai_model)
    run = await drive_run(scenario, fake_claude, claude_model)
    assert chat == expected
    assert run == expected
    assert chat == run


@pytest.mark.parametrize("scenario", COMMUNICATED, ids=_ids(COMMUNICATED))
async def test_communicate_sends_the_compiled_messages(scenario, chat_server,
                                                       openai_model) -> None:
    assert await drive_http("communicate", scenario, chat_server, openai_model) \
        == _expected(scenario)


@pytest.mark.parametrize("scenario", OPERATED, ids=_ids(OPERATED))
async def test_operate_sends_the_compiled_messages(scenario, chat_server, openai_model) -> None:
    assert await drive_http("operate", scenario, chat_server, openai_model) == _expected(scenario)


@pytest.mark.parametrize("surface", ["chat", "communicate", "run"])
@pytest.mark.parametrize("scenario", REPAIRED, ids=_ids(REPAIRED))
async def test_unanswered_instruction_scenarios_are_repaired_then_sent(
    scenario, surface, chat_server, openai_model, fake_claude, claude_model
) -> None:
    """The request is the independent compile of a fresh build after the explicit repair."""
    fresh = scenario.build()
    assert await mark_unanswered_turns(fresh)
    expected = to_provider_messages(
        compile_chat_request(fresh, catalogue.request_for(fresh, scenario)))
    with pytest.warns(TurnsCompatibilityWarning, match="no assistant response answers"):
        if surface == "run":
            sent = await drive_run(scenario, fake_claude, claude_model)
        else:
            sent = await drive_http(surface, scenario, chat_server, openai_model)
    assert sent == expected
    assert [m["content"] for m in sent].count(MARKER) == 1


# ------------------------------------------------------------ one side changed -> a failure


async def test_changing_only_the_run_side_fails_the_matrix(
    monkeypatch, chat_server, openai_model, fake_claude, claude_model
) -> None:
    """A run-only change to the prepared messages (here: a trailing space on the last message,
    applied where run.py calls its preparation) is caught by run==compiled and chat==run,
    while chat==compiled still holds."""
    import lionagi.operations.run.run as run_module

    scenario = catalogue.by_id("system-history-guidance")
    installed_prepare = run_module._prepare_run_kwargs

    def drifted(*args: Any, **kwargs: Any) -> Any:
        ins, kw = installed_prepare(*args, **kwargs)
        kw["messages"][-1]["content"] += " "
        return ins, kw

    with monkeypatch.context() as patch:  # undone before the compiler is uninstalled
        patch.setattr(run_module, "_prepare_run_kwargs", drifted)
        chat = await drive_http("chat", scenario, chat_server, openai_model)
        run = await drive_run(scenario, fake_claude, claude_model)
    expected = _expected(scenario)
    assert chat == expected
    assert run != expected
    assert run != chat


async def test_changing_only_the_chat_side_fails_the_matrix(
    monkeypatch, chat_server, openai_model, fake_claude, claude_model
) -> None:
    import lionagi.operations.chat.chat as chat_module

    scenario = catalogue.by_id("actions-between-instructions")
    installed_prepare = chat_module._prepare_run_kwargs

    def drifted(*args: Any, **kwargs: Any) -> Any:
        ins, kw = installed_prepare(*args, **kwargs)
        kw["messages"] = kw["messages"][1:]
        return ins, kw

    with monkeypatch.context() as patch:
        patch.setattr(chat_module, "_prepare_run_kwargs", drifted)
        chat = await drive_http("chat", scenario, chat_server, openai_model)
        run = await drive_run(scenario, fake_claude, claude_model)
    expected = _expected(scenario)
    assert run == expected
    assert chat != expected
    assert chat != run


# ---------------------------------------------------------------- error scenarios: no call


@pytest.mark.parametrize("surface", ["chat", "communicate", "run"])
@pytest.mark.parametrize("scenario", FAILING, ids=_ids(FAILING))
async def test_error_scenarios_make_no_model_call_and_record_nothing(
    scenario, surface, chat_server, openai_model, fake_claude, claude_model
) -> None:
    with pytest.raises((ValueError, TypeError)) as compiled_error:
        _expected(scenario)
    if surface == "communicate" and not set(scenario.call) <= COMMUNICATE_KEYS:
        pytest.skip(f"communicate cannot express {sorted(set(scenario.call) - COMMUNICATE_KEYS)}")

    model = claude_model() if surface == "run" else openai_model()
    branch, call = _prepare(scenario, model)
    state = branch_state(branch)
    with pytest.raises(type(compiled_error.value)) as raised:
        if surface == "run":
            await run_turn(branch, call)
        else:
            kwargs = dict(call)
            kwargs.update(kwargs.pop("imodel_kw", None) or {})
            await getattr(branch, surface)(**kwargs)

    # Same error as the independent compile, up to the ids of the two separate builds.
    assert _UUID.sub("<id>", str(raised.value)) == _UUID.sub("<id>", str(compiled_error.value))
    assert chat_server.requests == []
    assert fake_claude.calls() == [] and not fake_claude.log.exists()
    assert branch_state(branch) == state


async def test_the_matrix_sees_lionagi_s_own_payload_when_not_installed(
    chat_server, openai_model, fake_claude, claude_model
) -> None:
    """Without the compiler, lionagi 0.36 sends its legacy payload (here: blocks joined straight
    onto the system text, no envelope) on both sides, so the comparisons above are not
    vacuous: they hold only because both surfaces go through compile_chat_request."""
    from lionagi_turns.integration import _install as integration

    scenario = catalogue.by_id("context-blocks-system")
    integration.uninstall()
    try:
        chat = await drive_http("chat", scenario, chat_server, openai_model)
        run = await drive_run(scenario, fake_claude, claude_model)
    finally:
        integration.install()
    expected = _expected(scenario)
    assert chat == run
    assert chat != expected
    assert "LIONAGI_CONTEXT_BLOCKS_JSON" in str(expected)
    assert "LIONAGI_CONTEXT_BLOCKS_JSON" not in str(chat)
