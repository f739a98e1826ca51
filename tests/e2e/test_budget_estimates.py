"""Token budget and estimates against what reached the model, install off vs on (issue 18 item 3).

Each test runs one workflow with lionagi alone and again under ``install()`` against the local
OpenAI-style server, and compares with the request bodies it received. All counts use the
package's offline o200k encoding: lionagi's ``estimate_payload_input_tokens`` (estimates, the
installed budget and the sent bodies) through ``workflows.offline_o200k()``, and lionagi's
``TokenCalculator.tokenize`` (its own budget, its context-provider budget) through the
``o200k_tokenize`` fixture.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from lionagi_turns.integration import _install as integration

from . import budget_workflows, workflows

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.anyio,
    pytest.mark.filterwarnings("ignore::lionagi_turns.integration.TurnsCompatibilityWarning"),
]


@pytest.fixture
def o200k_tokenize(monkeypatch: pytest.MonkeyPatch) -> None:
    from lionagi.service.token_calculator import TokenCalculator

    from lionagi_turns.core.measure import count_tokens

    def tokenize(s_: str | None = None, /, *args: Any, **kwargs: Any) -> int:
        return count_tokens(s_) if s_ else 0

    monkeypatch.setattr(TokenCalculator, "tokenize", staticmethod(tokenize))


async def _off_on(driver: Callable[..., Awaitable[Any]], *args: Any) -> tuple[Any, Any]:
    with workflows.offline_o200k():
        off = await driver(*args)
        with integration.installed():
            on = await driver(*args)
    return off, on


@pytest.mark.usefixtures("o200k_tokenize")
async def test_token_budget_counts_the_requests_sent(chat_server, openai_model) -> None:
    off, on = await _off_on(budget_workflows.operate_budget, chat_server, openai_model)
    assert len(off.sent) == len(on.sent) == 3
    last = on.sent[-1]
    # After the last round: the request that round sent, tool schemas and response format
    # included; no further from it than lionagi's sum of recorded contents.
    assert abs(on.after - last) <= abs(off.after - off.sent[-1]), (off, on)
    assert on.after == last
    # Inside each call (API_PRE_CALL, where lionagi's fold reads the branch): that call's request.
    assert on.in_call == on.sent


@pytest.mark.usefixtures("o200k_tokenize")
async def test_operate_with_tool_results_and_a_context_provider(
    chat_server, openai_model
) -> None:
    off, on = await _off_on(budget_workflows.operate_tool_estimates, chat_server, openai_model)
    assert on.in_call.estimates == on.in_call.actual
    assert workflows.mean_error(on.outside) <= workflows.mean_error(off.outside), (off, on)
    assert workflows.mean_error(on.in_call) < workflows.mean_error(off.in_call)


@pytest.mark.usefixtures("o200k_tokenize")
async def test_react_with_caller_context(chat_server, openai_model) -> None:
    off, on = await _off_on(budget_workflows.react_estimates, chat_server, openai_model)
    assert on.in_call.estimates == on.in_call.actual
    assert workflows.mean_error(on.outside) <= workflows.mean_error(off.outside), (off, on)
    assert workflows.mean_error(on.in_call) < workflows.mean_error(off.in_call)


@pytest.mark.usefixtures("o200k_tokenize")
async def test_the_fold_estimates_the_request_it_folded(chat_server, openai_model) -> None:
    # Instructions grow each round, so the newest recorded one is a poor stand-in for the
    # next; the fold lands in the last round (index 4), in two stages.
    off, on = await _off_on(
        budget_workflows.operate_with_fold, chat_server, openai_model, 2400, 0.75
    )
    assert off.fold_rounds == on.fold_rounds == [4]
    off_error = abs(off.records[-1]["estimate_after"] - off.sent[4])
    on_error = abs(on.records[-1]["estimate_after"] - on.sent[4])
    assert on_error <= off_error, (off, on)
    # Each estimate re-reads the view the handler just folded: the last is the request sent.
    assert on_error == 0


@pytest.mark.usefixtures("o200k_tokenize")
async def test_token_budget_on_a_cli_model(fake_claude, claude_model) -> None:
    # lionagi's count reads a CLI payload (its request object) as 0 tokens: the budget counts
    # the messages the endpoint was given instead of reporting the branch empty.
    off, on = await _off_on(budget_workflows.cli_budget, fake_claude, claude_model)
    assert len(off.sent) == len(on.sent) == 2
    assert abs(on.after - on.sent[-1]) <= abs(off.after - off.sent[-1]), (off, on)
    assert on.after == on.sent[-1] > 0


@pytest.mark.usefixtures("o200k_tokenize")
@pytest.mark.filterwarnings("default::lionagi_turns.integration.TurnsCompatibilityWarning")
async def test_token_budget_of_a_branch_the_compiler_refuses_is_lionagis_and_warns_once(
    chat_server, openai_model
) -> None:
    # A branch whose turn failed without install() and went on under lionagi: a, its answer,
    # b (unanswered), c, its answer, then d recorded but not yet answered. Reading the budget
    # never raises where lionagi's does not: under install() it is lionagi's own figure,
    # warned once with the compiler's error, and the branch is unchanged.
    import warnings

    from lionagi import Branch

    from lionagi_turns import TurnsCompatibilityWarning

    branch = Branch(system="You are terse.", chat_model=openai_model())
    for message in (
        {"instruction": "a"},
        {"assistant_response": "A"},
        {"instruction": "b (failed turn)"},
        {"instruction": "c"},
        {"assistant_response": "C"},
        {"instruction": "d"},
    ):
        branch.msgs.add_message(**message)
    before = [m.id for m in branch.msgs.messages]
    with workflows.offline_o200k():
        off = branch.token_budget.used
        with integration.installed(), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TurnsCompatibilityWarning)
            first = branch.token_budget.used
            second = branch.token_budget.used
    assert first == second == off > 0
    notes = [w for w in caught if issubclass(w.category, TurnsCompatibilityWarning)]
    assert len(notes) == 1, [str(w.message) for w in notes]
    assert "Consecutive instructions require an intervening assistant response" in str(
        notes[0].message
    )
    assert "mark_unanswered_turns" in str(notes[0].message)
    assert [m.id for m in branch.msgs.messages] == before
