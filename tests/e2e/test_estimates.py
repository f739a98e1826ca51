"""Token estimates match what is sent (issue 9 item 3).

lionagi's host-side context fold (``lionagi.agent.context_fold``) estimates each request at
API_PRE_CALL with ``estimate_next_request_tokens``. Under ``install()`` that estimate compiles
through the compiler, with the newest turn's call options kept beside (not on) the recorded
instruction. Both the estimate and the request the local HTTP server received are counted with
the same offline o200k measure; the installed estimate's mean relative error must not exceed
lionagi's own on the same workflow.
"""

from __future__ import annotations

import pytest
from lionagi.agent import context_fold

from lionagi_turns.integration import _estimate
from lionagi_turns.integration import _install as integration

from . import workflows

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.anyio,
    pytest.mark.usefixtures("offline_tokens"),
    pytest.mark.filterwarnings("ignore::lionagi_turns.integration.TurnsCompatibilityWarning"),
]


async def _both(driver, chat_server, openai_model):
    with workflows.offline_o200k():
        off = await driver(chat_server, openai_model)
        with integration.installed():
            assert context_fold.estimate_next_request_tokens is (
                _estimate.estimate_next_request_tokens)
            on = await driver(chat_server, openai_model)
    assert len(off.estimates) == len(off.actual) == len(on.estimates) == len(on.actual) == 5
    return off, on


async def test_operate_loop_with_context_blocks_and_tool_results(
    chat_server, openai_model
) -> None:
    off, on = await _both(workflows.operate_loop_estimates, chat_server, openai_model)
    assert workflows.mean_error(on) <= workflows.mean_error(off), (off, on)
    # At API_PRE_CALL the installed estimate counts the request being sent, so it is exact on
    # every call, the first included (lionagi's has no recorded instruction then: 0).
    assert off.estimates[0] == 0
    assert on.estimates == on.actual


async def test_react(chat_server, openai_model) -> None:
    off, on = await _both(workflows.react_estimates, chat_server, openai_model)
    assert workflows.mean_error(on) <= workflows.mean_error(off), (off, on)


async def test_the_call_options_stay_off_the_record(chat_server, openai_model) -> None:
    from lionagi.protocols.messages import Instruction

    with workflows.offline_o200k(), integration.installed():
        run = await workflows.operate_loop_estimates(chat_server, openai_model, rounds=2)
    assert run.branch is not None
    recorded = [m for m in run.branch.messages if isinstance(m, Instruction)]
    assert len(recorded) == 2
    for ins in recorded:
        content = ins.to_dict()["content"]
        assert "tool_schemas" not in content and "response_format" not in content
        options = _estimate.turn_options(ins)
        assert options is not None and options.response_format is not None
        assert [s["function"]["name"] for s in options.tool_schemas] == ["lookup"]
    reloaded = type(run.branch).from_dict(run.branch.to_dict())
    assert all(_estimate.turn_options(m) is None for m in reloaded.messages)


def test_uninstall_restores_lionagis_estimate_and_the_fold_default() -> None:
    lionagi_estimate = context_fold.estimate_next_request_tokens
    defaults = context_fold.ContextFold.__init__.__kwdefaults__
    assert defaults["estimate"] is lionagi_estimate
    with integration.installed():
        assert defaults["estimate"] is _estimate.estimate_next_request_tokens
    assert context_fold.estimate_next_request_tokens is lionagi_estimate
    assert defaults["estimate"] is lionagi_estimate


async def test_the_amendment1_profile_is_estimated_with_its_own_compile(
    chat_server, openai_model
) -> None:
    with workflows.offline_o200k():
        integration.install(profile="amendment1")
        try:
            run = await workflows.operate_loop_estimates(chat_server, openai_model)
        finally:
            integration.uninstall()
    assert run.estimates == run.actual
