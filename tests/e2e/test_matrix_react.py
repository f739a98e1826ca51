"""ReAct in the shared chat/run payload matrix (issue #3 item 7; ADR-0007 D5, D6).

Every matrix scenario whose call ReAct can express is driven through ``Branch.ReAct`` with the
compiler installed, against the real 127.0.0.1 server (chat side: operate -> communicate ->
chat) and against the fake ``claude`` executable (run side: operate -> run_and_collect -> run),
each on a fresh build of the scenario's branch. Scripted JSON replies bound the loop to three
model calls: round 1 asks for one extension (and, in tool scenarios, calls ``lookup``), the
extension round ends it, then the final answer.

For each of the three calls the messages at the boundary must equal
``to_provider_messages(compile_chat_request(branch_snapshot, request))`` where the request is
built independently of the adapter with ``scenarios.request_for``: the scenario's guidance,
context, tools, blocks and provider kwargs, plus ReAct's own shaping, which is unavoidable
(its round prompts from ``ReActAnalysis`` and the response formats lionagi's ``operate`` builds
with ``Step``, see matrix_support.operative_format). The first call's expectation is computed
before ReAct runs; later calls compile against the progression snapshot taken at the boundary.
ReAct's first call must also equal ``Branch.chat`` sending the same turn (ReAct's instruction
text, response format and tools), and share its whole history with the plain chat turn of
test_matrix.

ReAct cannot express (so those scenarios are left out; ``test_react_matrix_covers...`` pins
the set): ``progression`` (every ReAct round uses the branch's progression; Branch.ReAct has no
such parameter and an unknown keyword becomes a model kwarg), ``images``/``image_detail`` and
``plain_content`` (no parameter; ReAct's ChatParam never sets them), and calls without an
``instruction`` (the plain-content scenarios). A scenario's ``response_format`` is ReAct's final
answer format (its rounds use ReActAnalysis). A scenario's ``tool_schemas`` is expressed as
ReAct's ``tool_schemas`` plus the ``lookup`` tool registered with exactly that schema: ReAct's
rounds send the branch's registered schemas, only its final call sends ``tool_schemas``.

Every round's request carries the caller's guidance and context (ReAct's ChatParam does): the
compiler does not reproduce lionagi's ReAct context de-duplication (a documented gap, warned
once), and these expectations pin that.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import scenarios as catalogue
from lionagi import Branch
from lionagi.operations.ReAct.utils import Analysis, ReActAnalysis
from pydantic import BaseModel

from .conftest import FakeClaude
from .harness import BoundarySpy, branch_state, cli_prompt
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
    DRIVEN,
    FAILING,
    _check_provider_report,
    _expected,
    _ids,
    _prepare,
    drive_http,
)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.anyio,
    pytest.mark.usefixtures("turns_installed", "offline_tokens"),
    # The known gaps (ReAct context de-dup, CLI resume) warn once; asserted in test_sessions
    # and tests/integration, not here.
    pytest.mark.filterwarnings("ignore::lionagi_turns.integration.TurnsCompatibilityWarning"),
]

Messages = list[dict[str, Any]]
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

#: Call keys ReAct expresses (see the module docstring for how each maps).
REACT_KEYS = frozenset({"instruction", "guidance", "context", "tool_schemas", "response_format",
                        "imodel_kw"})
#: Call keys ReAct cannot express, and why.
NOT_EXPRESSIBLE = {
    "progression": "every ReAct round sends the branch's progression",
    "images": "no ReAct parameter; its ChatParam never carries images",
    "image_detail": "no ReAct parameter; its ChatParam never carries images",
    "plain_content": "no ReAct parameter; every round renders an instruction",
}


def _reactable(scenario: catalogue.Scenario) -> bool:
    return set(scenario.call) <= REACT_KEYS and "instruction" in scenario.call


REACTED = [s for s in DRIVEN if _reactable(s)]
REACT_FAILING = [s for s in FAILING if _reactable(s)]
EXCLUDED = {
    "images-current", "images-history-fold", "selected-progression-tail",
    "selected-progression-reordered", "plain-content-fold-target",
    "plain-content-fold-target-blocks", "plain-content-receives-results",
    "plain-content-no-policy",
}

MAX_EXTENSIONS = 1
EXTENSION_PROMPT = ReActAnalysis.FIRST_EXT_PROMPT.format(extensions=MAX_EXTENSIONS)
LOOKUP_CALL = {"function": "lookup", "arguments": {"term": "lion"}}
LOOKUP_OUTPUT = {"term": "lion", "hits": 3}
REASON = {"title": "plan", "content": "step", "confidence_score": 0.8}


def test_react_matrix_covers_every_expressible_scenario() -> None:
    """The excluded set is exactly the scenarios with a key ReAct cannot express (or no
    instruction), and Branch.ReAct indeed has no parameter for those keys."""
    left_out = set(_ids(DRIVEN)) - set(_ids(REACTED))
    assert left_out == EXCLUDED
    for scenario_id in left_out:
        call = catalogue.by_id(scenario_id).call
        assert set(call) - REACT_KEYS <= set(NOT_EXPRESSIBLE)
        assert set(call) - REACT_KEYS or "instruction" not in call
    parameters = set(inspect.signature(Branch.ReAct).parameters)
    assert not parameters & set(NOT_EXPRESSIBLE)
    assert {"instruction", "guidance", "context", "tool_schemas", "response_format"} <= parameters
    kinds = {k for s in REACTED for k in s.call} | ({"blocks"} if any(s.blocks for s in REACTED)
                                                    else set())
    assert REACT_KEYS | {"blocks"} <= kinds
    assert len(REACTED) >= 30
    assert {s.id for s in REACT_FAILING} >= {"reserved-kwarg", "unknown-subtype"}


# ---------------------------------------------------------------------------------- shaping


def _uses_tools(scenario: catalogue.Scenario) -> bool:
    return bool(scenario.call.get("tool_schemas"))


def _final_format(scenario: catalogue.Scenario) -> Any:
    return scenario.call.get("response_format") or Analysis


def react_calls(scenario: catalogue.Scenario) -> list[dict[str, Any]]:
    """The turn each of ReAct's three calls sends, as chat keyword arguments: the scenario's
    guidance/context/provider kwargs (every round's ChatParam carries them), ReAct's prompts,
    and the formats and tools operate puts on each round."""
    call = scenario.call
    question = call["instruction"]
    base = {k: call[k] for k in ("guidance", "context", "imodel_kw") if k in call}
    tools = {"tool_schemas": [catalogue.TOOL]} if _uses_tools(scenario) else {}
    return [
        {**base, **tools, "instruction": f"{question}\n\n{EXTENSION_PROMPT}",
         "response_format": operative_format(ReActAnalysis, reason=True,
                                             actions=_uses_tools(scenario))},
        # Extension rounds always get an ActionParam; with no tool registered its schemas
        # are empty.
        {**base, **tools, "instruction": EXTENSION_PROMPT,
         "response_format": operative_format(ReActAnalysis, reason=True, actions=True)},
        {**base, **tools, "instruction": ReActAnalysis.ANSWER_PROMPT.format(instruction=question),
         "response_format": operative_format(_final_format(scenario), reason=False,
                                             actions=False)},
    ]


def react_replies(scenario: catalogue.Scenario) -> list[str]:
    """Valid JSON for each call's format: extend once, stop, answer."""
    first: dict[str, Any] = {"analysis": "One more round.", "extension_needed": True,
                             "action_strategy": "concurrent", "reason": REASON}
    if _uses_tools(scenario):
        first |= {"action_required": True, "action_requests": [LOOKUP_CALL]}
    second = {"analysis": "Done and checked.", "extension_needed": False,
              "action_strategy": "concurrent", "reason": REASON,
              "action_required": False, "action_requests": []}
    fmt = scenario.call.get("response_format")
    if fmt is None:
        final: dict[str, Any] = {"answer": "All done."}
    elif isinstance(fmt, dict):
        final = {"answer": "yes", "score": 3}
    else:
        final = {"answer": "yes", "confidence": 0.75}
    return [json.dumps(r) for r in (first, second, final)]


def _check_outcome(scenario: catalogue.Scenario, outs: list[Any], branch: Branch,
                   before: set) -> None:
    assert len(outs) == 3, outs
    assert outs[0].extension_needed is True and outs[1].extension_needed is False
    fmt = scenario.call.get("response_format")
    final = outs[2]
    if fmt is None:
        assert isinstance(final, Analysis) and final.answer == "All done."
    elif isinstance(fmt, dict):
        assert final == {"answer": "yes", "score": 3}
    else:
        assert isinstance(final, catalogue.Verdict)
        assert (final.answer, final.confidence) == ("yes", 0.75)
    added = [type(m).__name__ for m in branch.messages if m.id not in before]
    if _uses_tools(scenario):
        assert [r.output for r in outs[0].action_responses] == [LOOKUP_OUTPUT]
        assert added.count("ActionRequest") == added.count("ActionResponse") == 1
    else:
        assert "ActionRequest" not in added
    assert added.count("Instruction") == added.count("AssistantResponse") == 3
    assert_no_call_options_recorded(new_instructions(branch, before))
    _check_provider_report(branch, scenario)


# ---------------------------------------------------------------------------------- drivers


@dataclass
class ReActObservation:
    sent: list[Messages]  # the messages at the boundary, per call
    expected: list[Messages]  # the independent compile for each call


def _react_kwargs(scenario: catalogue.Scenario, branch: Branch, call: dict[str, Any],
                  *, provider_kwargs: bool) -> dict[str, Any]:
    kwargs = {k: v for k, v in call.items() if k != "imodel_kw"}
    if provider_kwargs:
        kwargs.update(call.get("imodel_kw") or {})
    if _uses_tools(scenario):
        branch.register_tools([lookup_tool()])
    return {**kwargs, "max_extensions": MAX_EXTENSIONS, "extension_allowed": True,
            "return_analysis": True}


def _unheld(branch: Branch, ids: tuple) -> tuple:
    """The ids a resumed CLI session does not hold: those after the last instruction or
    assistant response (integration._resume; docs/usage.md "Resumed CLI sessions")."""
    from lionagi.protocols.messages import AssistantResponse, Instruction

    cut = max((i + 1 for i, uid in enumerate(ids)
               if isinstance(branch.msgs.messages[uid], AssistantResponse | Instruction)),
              default=0)
    return ids[cut:]


def _resumes_with_blocks(scenario: catalogue.Scenario, branch: Branch) -> bool:
    """Calls 2..3 of a CLI ReAct resume the session; with context blocks (which lionagi
    gathers only on a branch with a system) they compile the view the session does not hold,
    unless the caller gave ReAct a context (then the whole view, as lionagi: the known gap)."""
    return (bool(scenario.blocks) and branch.msgs.system is not None
            and _react_items(scenario) is None)


def _react_items(scenario: catalogue.Scenario) -> list[Any] | None:
    """The caller context lionagi's ReAct puts in ``_react_context`` for its later calls."""
    context = scenario.call.get("context")
    if context is None:
        return None
    return context if isinstance(context, list) else [context]


def _expectations(scenario: catalogue.Scenario, branch: Branch, first: Messages,
                  spy: BoundarySpy, view: tuple, before: set, *,
                  resumed: bool = False) -> list[Messages]:
    """Call 1's expectation (computed before the call) and calls 2..3 compiled against the
    progression snapshot each boundary call saw (``resumed``: the part of it a resumed CLI
    session does not hold, when the call carries context blocks)."""
    instructions = new_instructions(branch, before)
    assert len(spy.calls) == len(instructions) == 3
    tail = resumed and _resumes_with_blocks(scenario, branch)
    later = [
        compiled_turn(branch, scenario, call=shaped, react_context=_react_items(scenario),
                      progression=(_unheld(branch, history_at(boundary.progression, ins))
                                   if tail else history_at(boundary.progression, ins)))
        for shaped, boundary, ins in zip(react_calls(scenario)[1:], spy.calls[1:],
                                         instructions[1:], strict=True)
    ]
    assert history_at(spy.calls[0].progression, instructions[0]) == view
    return [first, *later]


async def drive_react_http(scenario: catalogue.Scenario, server: ChatServer,
                           make_model: Callable[[], Any]) -> ReActObservation:
    model = make_model()
    branch, call = _prepare(scenario, model)
    first = compiled_turn(branch, scenario, call=react_calls(scenario)[0])
    view, before = tuple(branch.progression), {m.id for m in branch.messages}
    spy = BoundarySpy(model, watch=branch)
    server.script(*react_replies(scenario))
    posted_before = len(server.chat_requests())

    outs = await branch.ReAct(**_react_kwargs(scenario, branch, call, provider_kwargs=True))

    posted = server.chat_requests()[posted_before:]
    assert len(posted) == 3, f"ReAct made {len(posted)} model calls"
    assert server.pending_replies == 0
    for body in posted:
        for key, value in (call.get("imodel_kw") or {}).items():
            assert body.body.get(key) == value, (key, body.body)
    sent = [p.messages for p in posted]
    assert sent == spy.payloads
    _check_outcome(scenario, outs, branch, before)
    return ReActObservation(sent, _expectations(scenario, branch, first, spy, view, before))


async def drive_react_run(scenario: catalogue.Scenario, fake: FakeClaude,
                          make_model: Callable[[], Any]) -> ReActObservation:
    model = make_model()
    branch, call = _prepare(scenario, model)
    first = compiled_turn(branch, scenario, call=react_calls(scenario)[0])
    view, before = tuple(branch.progression), {m.id for m in branch.messages}
    spy = BoundarySpy(model, watch=branch)
    fake.script(*({"text": r, "session_id": "S-react"} for r in react_replies(scenario)))
    spawned_before = len(fake.calls())

    outs = await branch.ReAct(**_react_kwargs(scenario, branch, call, provider_kwargs=False))

    spawned = fake.calls()[spawned_before:]
    assert len(spawned) == len(spy.calls) == 3
    assert [s["resume"] for s in spawned] == [None, "S-react", "S-react"]
    for process, boundary in zip(spawned, spy.calls, strict=True):
        assert process["prompt"] == cli_prompt(boundary.messages, boundary.resume)
    _check_outcome(scenario, outs, branch, before)
    return ReActObservation(spy.payloads, _expectations(scenario, branch, first, spy, view, before,
                                                        resumed=True))


# ------------------------------------------------------------------------------ the matrix


@pytest.mark.parametrize("scenario", REACTED, ids=_ids(REACTED))
async def test_react_chat_and_run_send_the_compiled_messages(
    scenario, chat_server, openai_model, fake_claude, claude_model
) -> None:
    """Both sides are driven here: every ReAct call over HTTP and over the CLI sends exactly
    the independent compile of that call, so the two sides send the same messages."""
    chat = await drive_react_http(scenario, chat_server, openai_model)
    run = await drive_react_run(scenario, fake_claude, claude_model)
    for seen in (chat, run):
        for number, (sent, expected) in enumerate(zip(seen.sent, seen.expected, strict=True), 1):
            assert sent == expected, f"ReAct call {number}"
    if _resumes_with_blocks(scenario, scenario.build()):
        # Resumed CLI calls carry their blocks in the one message the session is sent.
        assert chat.sent[0] == run.sent[0]
        assert all(len(p) == 1 for p in run.sent[1:]), run.sent
    else:
        assert chat.sent == run.sent


@pytest.mark.parametrize("scenario", REACTED, ids=_ids(REACTED))
async def test_react_first_call_equals_chat_for_the_same_turn(
    scenario, chat_server, openai_model
) -> None:
    """``Branch.chat`` sending ReAct's first turn (its instruction text, format and tools) posts
    exactly ReAct's first call; and that call's history equals the plain chat turn's."""
    react = await drive_react_http(scenario, chat_server, openai_model)
    same_turn = react_calls(scenario)[0]
    branch, _ = _prepare(scenario, openai_model())
    kwargs = {k: v for k, v in same_turn.items() if k != "imodel_kw"}
    kwargs.update(same_turn.get("imodel_kw") or {})
    before = len(chat_server.chat_requests())
    await branch.chat(**kwargs)
    posted = chat_server.chat_requests()[before:]
    assert len(posted) == 1
    assert posted[0].messages == react.sent[0]

    plain = await drive_http("chat", scenario, chat_server, openai_model)
    assert react.sent[0][:-1] == plain[:-1]
    assert react.sent[0][-1]["role"] == plain[-1]["role"] == "user"


# ------------------------------------------------------------ one side changed -> a failure


@pytest.mark.parametrize("side", ["chat", "run"])
async def test_changing_only_one_side_fails_the_react_matrix(
    side, monkeypatch, chat_server, openai_model, fake_claude, claude_model
) -> None:
    """A change to the prepared messages of only one side (where chat.py or run.py calls its
    preparation) breaks that side's ReAct comparison with the compile and with the other side;
    the untouched side still matches."""
    import lionagi.operations.chat.chat as chat_module
    import lionagi.operations.run.run as run_module

    scenario = catalogue.by_id("tools-current")
    module = chat_module if side == "chat" else run_module
    installed_prepare = module._prepare_run_kwargs

    def drifted(*args: Any, **kwargs: Any) -> Any:
        ins, kw = installed_prepare(*args, **kwargs)
        kw["messages"][-1]["content"] += " "
        return ins, kw

    with monkeypatch.context() as patch:  # undone before the compiler is uninstalled
        patch.setattr(module, "_prepare_run_kwargs", drifted)
        chat = await drive_react_http(scenario, chat_server, openai_model)
        run = await drive_react_run(scenario, fake_claude, claude_model)
    changed, kept = (chat, run) if side == "chat" else (run, chat)
    assert kept.sent == kept.expected
    assert all(s != e for s, e in zip(changed.sent, changed.expected, strict=True))
    assert changed.sent != kept.sent


# ---------------------------------------------------------------- error scenarios: no call


@pytest.mark.parametrize("surface", ["chat", "run"])
@pytest.mark.parametrize("scenario", REACT_FAILING, ids=_ids(REACT_FAILING))
async def test_react_error_scenarios_make_no_model_call_and_record_nothing(
    scenario, surface, chat_server, openai_model, fake_claude, claude_model
) -> None:
    with pytest.raises((ValueError, TypeError)) as compiled_error:
        _expected(scenario)
    model = claude_model() if surface == "run" else openai_model()
    branch, call = _prepare(scenario, model)
    kwargs = _react_kwargs(scenario, branch, call, provider_kwargs=True)
    state = branch_state(branch)
    with pytest.raises(type(compiled_error.value)) as raised:
        await branch.ReAct(**kwargs)
    assert _UUID.sub("<id>", str(raised.value)) == _UUID.sub("<id>", str(compiled_error.value))
    assert chat_server.requests == []
    assert fake_claude.calls() == [] and not fake_claude.log.exists()
    assert branch_state(branch) == state


def test_formats_are_distinct_per_round() -> None:
    """The shaping is not vacuous: each round's format differs, so a format crossed between
    rounds changes the compiled messages."""
    scenario = catalogue.by_id("response-format-model-class-current")
    formats = [c["response_format"] for c in react_calls(scenario)]
    schemas = [f.model_json_schema() for f in formats]
    assert all(isinstance(f, type) and issubclass(f, BaseModel) for f in formats)
    assert len({json.dumps(s, sort_keys=True) for s in schemas}) == 3
    assert issubclass(formats[2], catalogue.Verdict)
