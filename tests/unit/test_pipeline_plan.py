"""The pipeline is its passes over one frozen plan: ``PASSES`` in the documented order, each
setting only the plan fields it decides."""

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
    assert len(documented) == 12


# The plan fields each pass may set (core/plan.py's brackets); every other field must come
# out as the very object that went in.
SETS = {
    "_check": {"items"},
    "_select": {"view"},
    "_prepare": {"resumable"},
    "_project": {"walk", "snap", "projected"},
    "_validate": set(),
    "_bound": {"bounded", "projection"},
    "_react": {"projection", "current_context"},
    "_plan_fold": {"parts", "fold"},
    "_render": {"rendered", "messages", "reused"},
    "_guard": set(),
    "_finish": {"compiled"},
    "_finish_stages": set(),
}


def _run_passes(plan: Plan) -> Plan:
    for step in pipeline.PASSES:
        out = step(plan)
        assert isinstance(out, Plan)
        for name in Plan._fields:
            if name not in SETS[step.__name__]:
                assert getattr(out, name) is getattr(plan, name), (step.__name__, name)
        plan = out
    return plan


def test_each_pass_sets_only_its_own_fields_and_the_last_holds_the_compiled_request() -> None:
    b = _branch()
    request = _request(b)
    plan = _run_passes(Plan(b, request, SEED_PROFILE, NO_MEMO))
    assert plan.compiled == compile_chat_request(b, request)
    assert plan.view and plan.projected is not None and plan.parts is not None
    assert plan.fold is not None and plan.rendered[-1].source == "current"


def test_with_react_items_the_react_pass_sets_the_projection_and_the_current_context() -> None:
    b = Branch(system="policy")
    b.msgs.add_message(instruction="q1", context=["shared"])
    b.msgs.add_message(assistant_response="a1")
    request = TurnRequest(
        instruction=b.msgs.create_instruction(instruction="now", context=["shared"])
    )
    plan = _run_passes(Plan(b, request, SEED_PROFILE, NO_MEMO, react_context=["shared"]))
    assert plan.items == ("shared",)
    assert plan.current_context == []  # the first carrier in history keeps the item
    assert plan.compiled == compile_chat_request(b, request, react_context=["shared"])


def test_a_plan_refuses_assignment() -> None:
    plan = Plan(_branch(), _request(_branch()), SEED_PROFILE, NO_MEMO)
    with pytest.raises(AttributeError):
        plan.view = ()  # type: ignore[misc]
