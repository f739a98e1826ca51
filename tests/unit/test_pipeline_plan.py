"""The pipeline is its passes over one frozen plan: ``PASSES`` in the documented order, each
returning a new plan and leaving the one it was given as it was."""

from __future__ import annotations

import re

import pytest
from lionagi import Branch

from lionagi_turns import ContextBlock, TurnRequest, compile_chat_request
from lionagi_turns.core import pipeline
from lionagi_turns.core.plan import Plan
from lionagi_turns.core.profile import NO_MEMO, SEED_PROFILE


def _branch() -> Branch:
    b = Branch(system="policy")
    b.msgs.add_message(instruction="q1", context=[{"k": 1}])
    b.msgs.add_message(assistant_response="a1")
    return b


def _request(b: Branch) -> TurnRequest:
    return TurnRequest(
        instruction=b.msgs.create_instruction(instruction="now"),
        context_blocks=(ContextBlock(provider_name="notes", content="remember"),),
    )


def test_the_passes_run_in_the_order_the_module_docstring_numbers_them() -> None:
    doc = pipeline.__doc__ or ""
    titles = re.findall(r"^\s*\d+\. ([A-Za-z ]+?) \(", doc, flags=re.MULTILINE)
    documented = [
        t.lower().replace("the ", "").replace(" step", "").replace(" ", "_") for t in titles
    ]
    assert documented == [step.__name__.lstrip("_") for step in pipeline.PASSES]
    assert len(documented) == 10


def test_each_pass_returns_a_new_plan_and_the_last_one_holds_the_compiled_request() -> None:
    b = _branch()
    request = _request(b)
    plan = Plan(b, request, SEED_PROFILE, NO_MEMO)
    seen = [plan]
    for step in pipeline.PASSES:
        before = tuple(plan)
        plan = step(plan)
        assert tuple(seen[-1]) == before  # the given plan is unchanged
        seen.append(plan)
    assert plan.compiled == compile_chat_request(b, request)
    assert plan.view and plan.projected is not None and plan.parts is not None
    with pytest.raises(AttributeError):
        plan.view = ()  # type: ignore[misc]
