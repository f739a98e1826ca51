"""Structured output and tools in the shared payload matrix (issue #3 items 4 and 7).

- ``Branch.communicate`` with ``response_format`` (dict, model class, model instance) over every
  matrix scenario that has one and whose other keys communicate accepts: the POSTed messages
  equal the independent compile of the scenario (``test_matrix._expected``), the parsed result is
  the expected model instance (the server replies with valid JSON), and the recorded
  instruction's ``to_dict()`` carries no tool_schemas/response_format/structure.
- communicate cannot express ``tool_schemas`` (lionagi 0.36's prepare_communicate_kw fixes them to
  ``[]``; a ``tool_schemas=`` keyword becomes a model kwarg the OpenAI endpoint drops): pinned by
  ``test_communicate_cannot_express_tool_schemas``.
- ``Branch.operate`` with ``response_format`` over the same scenarios, and with tools (the
  catalogue's ``lookup`` registered with exactly ``scenarios.TOOL``, ``actions=True``) over the
  scenarios with tool schemas or a model response format, for two turns (a tool round, then a
  turn that sees its result). operate renders lionagi's operative format (built with ``Step``
  from the caller's model, see matrix_support.operative_format), so that is the expected
  request's format. operate is driven on both sides — HTTP (communicate) and the fake CLI
  (run_and_collect) — and the two must send identical messages.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

import pytest
import scenarios as catalogue
from lionagi import Branch
from pydantic import BaseModel

from .conftest import FakeClaude
from .harness import BoundarySpy
from .http_server import ChatServer
from .matrix_support import (
    assert_no_call_options_recorded,
    compiled_turn,
    history_at,
    lookup_tool,
    new_instructions,
    operative_format,
)
from .test_matrix import (
    COMMUNICATE_KEYS,
    DRIVEN,
    OPERATE_KEYS,
    _check_provider_report,
    _expected,
    _ids,
    _prepare,
)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.anyio,
    pytest.mark.usefixtures("turns_installed", "offline_tokens"),
    pytest.mark.filterwarnings("ignore::lionagi_turns.integration.TurnsCompatibilityWarning"),
]

Messages = list[dict[str, Any]]


def _is_model(fmt: Any) -> bool:
    return isinstance(fmt, BaseModel) or (isinstance(fmt, type) and issubclass(fmt, BaseModel))


STRUCTURED_COMMUNICATED = [s for s in DRIVEN if "response_format" in s.call
                           and set(s.call) <= COMMUNICATE_KEYS | {"response_format"}]
STRUCTURED_OPERATED = [s for s in DRIVEN if "response_format" in s.call and "instruction" in s.call
                       and set(s.call) <= OPERATE_KEYS | {"response_format"}]
TOOL_OPERATED = [s for s in DRIVEN if "instruction" in s.call
                 and set(s.call) <= OPERATE_KEYS | {"response_format"}
                 and ("tool_schemas" in s.call or _is_model(s.call.get("response_format")))]
TOOL_SCENARIOS = [s for s in DRIVEN if "tool_schemas" in s.call]


def test_structured_matrix_covers_every_format_and_tool_scenario() -> None:
    formats = [s.call["response_format"] for s in DRIVEN if "response_format" in s.call]
    assert _ids(STRUCTURED_COMMUNICATED) == _ids(STRUCTURED_OPERATED) == [
        s.id for s in DRIVEN if "response_format" in s.call]
    assert any(isinstance(f, dict) for f in formats)
    assert any(isinstance(f, type) for f in formats)
    assert any(isinstance(f, BaseModel) for f in formats)
    assert {s.id for s in TOOL_SCENARIOS} <= set(_ids(TOOL_OPERATED))
    assert len(TOOL_SCENARIOS) >= 2 and len(TOOL_OPERATED) >= 4


def _reply_for(fmt: Any) -> dict[str, Any]:
    return {"answer": "yes", "score": 3} if isinstance(fmt, dict) else \
        {"answer": "yes", "confidence": 0.75}


def _check_parsed(fmt: Any, out: Any) -> None:
    if isinstance(fmt, dict):
        assert out == {"answer": "yes", "score": 3}
    else:
        assert isinstance(out, catalogue.Verdict), type(out)
        assert (out.answer, out.confidence) == ("yes", 0.75)


def _split(call: dict[str, Any]) -> dict[str, Any]:
    kwargs = {k: v for k, v in call.items() if k != "imodel_kw"}
    kwargs.update(call.get("imodel_kw") or {})
    return kwargs


# ------------------------------------------------------------------------------ communicate


@pytest.mark.parametrize("scenario", STRUCTURED_COMMUNICATED, ids=_ids(STRUCTURED_COMMUNICATED))
async def test_communicate_with_response_format(scenario, chat_server, openai_model) -> None:
    expected = _expected(scenario)
    branch, call = _prepare(scenario, openai_model())
    before = {m.id for m in branch.messages}
    fmt = call["response_format"]
    chat_server.script(json.dumps(_reply_for(fmt)))

    out = await branch.communicate(**_split(call))

    posted = chat_server.payloads()
    assert posted == [expected]
    assert "ResponseFormat" in posted[0][-1]["content"]
    _check_parsed(fmt, out)
    assert_no_call_options_recorded(new_instructions(branch, before))
    _check_provider_report(branch, scenario)


@pytest.mark.parametrize("scenario", TOOL_SCENARIOS, ids=_ids(TOOL_SCENARIOS))
async def test_communicate_cannot_express_tool_schemas(scenario, chat_server,
                                                       openai_model) -> None:
    """Branch.communicate has no tool_schemas parameter and lionagi's communicate sends none:
    the keyword is a model kwarg that never reaches the request, so the POST is the compile of
    the turn without tools."""
    assert "tool_schemas" not in inspect.signature(Branch.communicate).parameters
    call = dict(scenario.call)
    without = {k: v for k, v in call.items() if k != "tool_schemas"}
    expected = compiled_turn(scenario.build(), scenario, call=without)
    assert expected != _expected(scenario)
    branch, call = _prepare(scenario, openai_model())

    await branch.communicate(**_split(call))

    [request] = chat_server.chat_requests()
    assert request.messages == expected
    assert not {"tools", "tool_schemas"} & set(request.body)


# ---------------------------------------------------------------------------------- operate


async def _operate(side: str, branch: Branch, kwargs: dict[str, Any], server: ChatServer,
                   fake: FakeClaude, reply: dict[str, Any]) -> Any:
    if side == "chat":
        server.script(json.dumps(reply))
    else:
        fake.script(*fake_turns(fake), {"text": json.dumps(reply), "session_id": "S-op"})
    return await branch.operate(**kwargs)


def fake_turns(fake: FakeClaude) -> list[dict[str, Any]]:
    """The turns already played (so the next script entry is the next invocation's)."""
    return [{"text": "", "session_id": "S-op"}] * len(fake.calls())


def _model(side: str, openai_model: Callable[[], Any], claude_model: Callable[[], Any]) -> Any:
    return openai_model() if side == "chat" else claude_model()


def _sent(side: str, server: ChatServer, spy: BoundarySpy) -> list[Messages]:
    if side == "chat":
        assert server.payloads() == spy.payloads
    return spy.payloads


async def drive_operate_format(scenario, side, chat_server, openai_model, fake_claude,
                               claude_model) -> list[Messages]:
    model = _model(side, openai_model, claude_model)
    branch, call = _prepare(scenario, model)
    if side == "run":
        call.pop("imodel_kw", None)
    fmt = call["response_format"]
    effective = operative_format(fmt, reason=False, actions=False)
    expected = compiled_turn(branch, scenario, call={**call, "response_format": effective})
    before = {m.id for m in branch.messages}
    spy = BoundarySpy(model, watch=branch)

    out = await _operate(side, branch, _split(call), chat_server, fake_claude, _reply_for(fmt))

    sent = _sent(side, chat_server, spy)
    assert sent == [expected]
    assert "ResponseFormat" in sent[0][-1]["content"]
    _check_parsed(fmt, out)
    assert_no_call_options_recorded(new_instructions(branch, before))
    _check_provider_report(branch, scenario)
    return sent


async def drive_operate_tools(scenario, side, chat_server, openai_model, fake_claude,
                              claude_model) -> list[Messages]:
    """Two operate turns with the lookup tool: a tool round, then a turn that sees its
    result. Asserts the messages, the parsed results and the records; returns the messages."""
    model = _model(side, openai_model, claude_model)
    branch, call = _prepare(scenario, model)
    if side == "run":
        call.pop("imodel_kw", None)
    branch.register_tools([lookup_tool()])
    fmt = call.get("response_format") if _is_model(call.get("response_format")) \
        else catalogue.Verdict
    shaped = {**{k: v for k, v in call.items() if k != "tool_schemas"},
              "tool_schemas": [catalogue.TOOL],
              "response_format": operative_format(fmt, reason=False, actions=True)}
    first_expected = compiled_turn(branch, scenario, call=shaped)
    before = {m.id for m in branch.messages}
    spy = BoundarySpy(model, watch=branch)
    kwargs = {**_split({k: v for k, v in call.items() if k != "tool_schemas"}),
              "response_format": fmt, "actions": True}

    first = await _operate(side, branch, kwargs, chat_server, fake_claude, {
        "answer": "yes", "confidence": 0.75, "action_required": True,
        "action_requests": [{"function": "lookup", "arguments": {"term": "lion"}}]})
    second_call = {**kwargs, "instruction": "Report the hits."}
    second_call.pop("guidance", None)
    second_call.pop("context", None)
    second = await _operate(side, branch, second_call, chat_server, fake_claude, {
        "answer": "done", "confidence": 1.0, "action_required": False, "action_requests": []})

    instructions = new_instructions(branch, before)
    sent = _sent(side, chat_server, spy)
    assert len(sent) == len(instructions) == 2
    second_shaped = {**{k: v for k, v in shaped.items() if k not in ("guidance", "context")},
                     "instruction": "Report the hits."}
    second_expected = compiled_turn(
        branch, scenario, call=second_shaped,
        progression=history_at(spy.calls[1].progression, instructions[1]))
    assert sent == [first_expected, second_expected]
    assert "Tools" in sent[0][-1]["content"] and "lookup" in sent[0][-1]["content"]
    # The tool result is folded into the next turn's instruction (D2.2).
    assert "function: lookup" in sent[1][-1]["content"] and "hits: 3" in sent[1][-1]["content"]

    assert isinstance(first, catalogue.Verdict) and first.answer == "yes"
    assert [r.output for r in first.action_responses] == [{"term": "lion", "hits": 3}]
    assert isinstance(second, catalogue.Verdict) and second.answer == "done"
    added = [type(m).__name__ for m in branch.messages if m.id not in before]
    assert added.count("ActionRequest") == added.count("ActionResponse") == 1
    assert_no_call_options_recorded(instructions)
    return sent


@pytest.mark.parametrize("scenario", STRUCTURED_OPERATED, ids=_ids(STRUCTURED_OPERATED))
async def test_operate_with_response_format(scenario, chat_server, openai_model,
                                            fake_claude, claude_model) -> None:
    """One operate turn with a response format on each side: exactly one request each, carrying
    the ResponseFormat section, and the same messages on chat and run (the drivers also check
    each side against the independent compile and the parsed result)."""
    fixtures = (chat_server, openai_model, fake_claude, claude_model)
    chat = await drive_operate_format(scenario, "chat", *fixtures)
    run = await drive_operate_format(scenario, "run", *fixtures)
    assert len(chat) == 1
    assert "ResponseFormat" in chat[0][-1]["content"]
    assert chat == run


@pytest.mark.parametrize("scenario", TOOL_OPERATED, ids=_ids(TOOL_OPERATED))
async def test_operate_with_tools_over_two_turns(scenario, chat_server, openai_model,
                                                 fake_claude, claude_model) -> None:
    """Two operate turns with a tool on each side: the first request offers the tool, the second
    sees its result folded into the instruction, and chat and run send the same messages."""
    fixtures = (chat_server, openai_model, fake_claude, claude_model)
    chat = await drive_operate_tools(scenario, "chat", *fixtures)
    run = await drive_operate_tools(scenario, "run", *fixtures)
    assert len(chat) == 2
    assert "lookup" in chat[0][-1]["content"]
    assert "hits: 3" in chat[1][-1]["content"]
    assert chat == run
