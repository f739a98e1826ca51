"""Amendment 1 contracts: D1 as amended by D7/D8, D7's record types, D8's block authority."""

from __future__ import annotations

import dataclasses
from typing import get_args

import pytest

from lionagi_turns import ContextBlock as DefaultBlock
from lionagi_turns import compile_chat_request as default_compile
from lionagi_turns.amendment1 import (
    CompiledChatRequest,
    CompiledMessage,
    ContextBlock,
    LeftOut,
    LeftOutReason,
    SectionAuthority,
    SectionBound,
    SectionBudgetRefused,
    SectionBudgets,
    TurnRequest,
    compile_chat_request,
)

from ._support import branch

FIELDS = {
    ContextBlock: ("provider_name", "content", "authority"),
    TurnRequest: (
        "instruction",
        "progression",
        "tool_schemas",
        "response_format",
        "structure",
        "context_blocks",
        "skipped",
        "provider_kwargs",
    ),
    CompiledChatRequest: ("instruction", "messages", "provider_kwargs", "bounds"),
    CompiledMessage: ("role", "content"),
    LeftOut: ("name", "reason", "tokens"),
    SectionBound: ("section", "authority", "posture", "budget", "kept", "left_out"),
    SectionBudgets: ("system", "instruction", "history", "context", "tool_results"),
}


@pytest.mark.parametrize("cls", list(FIELDS), ids=lambda c: c.__name__)
def test_exact_fields_frozen_and_slotted(cls: type) -> None:
    assert tuple(f.name for f in dataclasses.fields(cls)) == FIELDS[cls]
    assert cls.__dataclass_params__.frozen is True  # type: ignore[attr-defined]
    assert "__slots__" in cls.__dict__


def test_section_authority_values_and_str_enum() -> None:
    assert [a.value for a in SectionAuthority] == ["operator", "run_instruction", "material"]
    assert isinstance(SectionAuthority.MATERIAL, str)


def test_left_out_reason_is_the_adrs_five_then_the_ceilings_cleared_and_summarized() -> None:
    # the ADR's closed five, in its order; ``cleared`` and ``summarized`` only opt-in tiers write
    assert get_args(LeftOutReason) == (
        "per_provider_limit", "section_budget", "truncated", "evicted", "compacted", "cleared",
        "summarized",
    )
    with pytest.raises(ValueError, match="not one of"):
        LeftOut("x", "dropped")  # type: ignore[arg-type]
    assert LeftOut("x", "evicted").tokens is None


def test_bounds_is_required_with_no_default() -> None:
    field = {f.name: f for f in dataclasses.fields(CompiledChatRequest)}["bounds"]
    assert field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING
    ins = branch().msgs.create_instruction(instruction="x")
    with pytest.raises(TypeError):
        CompiledChatRequest(instruction=ins, messages=(), provider_kwargs={})  # type: ignore[call-arg]


def test_skipped_sits_before_provider_kwargs_and_defaults_empty() -> None:
    ins = branch().msgs.create_instruction(instruction="x")
    assert TurnRequest(instruction=ins).skipped == ()


def test_a_block_is_material_and_takes_no_authority_argument() -> None:
    block = ContextBlock("catalog", "row")
    assert block.authority is SectionAuthority.MATERIAL
    with pytest.raises(TypeError):
        ContextBlock("catalog", "row", SectionAuthority.OPERATOR)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        ContextBlock("catalog", "row", authority=SectionAuthority.OPERATOR)  # type: ignore[call-arg]
    field = {f.name: f for f in dataclasses.fields(ContextBlock)}["authority"]
    assert field.init is False and field.default is SectionAuthority.MATERIAL


def test_a_block_keeps_the_default_profiles_checks() -> None:
    with pytest.raises(ValueError, match="empty content"):
        ContextBlock("catalog", "")
    assert isinstance(ContextBlock("c", "v"), DefaultBlock)


def test_a_forced_non_material_block_is_refused_by_the_compiler() -> None:
    b = branch("policy")
    ins = b.msgs.create_instruction(instruction="x")
    block = ContextBlock("catalog", "row")
    request = TurnRequest(instruction=ins, context_blocks=(block,))
    object.__setattr__(block, "authority", SectionAuthority.OPERATOR)
    with pytest.raises(ValueError, match=r"context_blocks\[0\].*authority 'operator'"):
        compile_chat_request(b, request)


def test_the_request_refuses_a_forced_block_at_construction_too() -> None:
    ins = branch().msgs.create_instruction(instruction="x")
    block = ContextBlock("catalog", "row")
    object.__setattr__(block, "authority", SectionAuthority.RUN_INSTRUCTION)
    with pytest.raises(ValueError, match="material"):
        TurnRequest(instruction=ins, context_blocks=(block,))


def test_the_request_refuses_a_default_profile_block() -> None:
    ins = branch().msgs.create_instruction(instruction="x")
    with pytest.raises(TypeError, match=r"amendment1\.ContextBlock"):
        TurnRequest(instruction=ins, context_blocks=(DefaultBlock("c", "v"),))


def test_skipped_holds_only_registry_reasons() -> None:
    ins = branch().msgs.create_instruction(instruction="x")
    TurnRequest(instruction=ins, skipped=[LeftOut("a", "per_provider_limit")])
    with pytest.raises(ValueError, match="per_provider_limit or section_budget"):
        TurnRequest(instruction=ins, skipped=(LeftOut("a", "truncated"),))
    with pytest.raises(TypeError, match="not a LeftOut"):
        TurnRequest(instruction=ins, skipped=("a",))


@pytest.mark.parametrize(
    ("section", "authority", "posture"),
    [
        ("system", SectionAuthority.OPERATOR, "refuse"),
        ("instruction", SectionAuthority.RUN_INSTRUCTION, "refuse"),
        ("history", SectionAuthority.MATERIAL, "truncate"),
        ("context", SectionAuthority.MATERIAL, "skip"),
        ("tool_results", SectionAuthority.MATERIAL, "truncate"),
    ],
)
def test_each_section_has_its_authority_and_posture(section, authority, posture) -> None:
    SectionBound(section, authority, posture, None, (), ())
    others = [a for a in SectionAuthority if a is not authority]
    for other in others:
        with pytest.raises(ValueError, match="authority"):
            SectionBound(section, other, posture, None, (), ())
    for other_posture in {"truncate", "refuse", "skip"} - {posture}:
        with pytest.raises(ValueError, match="posture"):
            SectionBound(section, authority, other_posture, None, (), ())  # type: ignore[arg-type]


def test_compiled_request_needs_one_record_per_section_in_order() -> None:
    ins = branch().msgs.create_instruction(instruction="x")
    history = SectionBound("history", SectionAuthority.MATERIAL, "truncate", None, (), ())
    with pytest.raises(ValueError, match="one record per section"):
        CompiledChatRequest(instruction=ins, messages=(), provider_kwargs={}, bounds=(history,))


def test_refused_error_is_a_value_error_carrying_bounds() -> None:
    exc = SectionBudgetRefused("over", ())
    assert isinstance(exc, ValueError) and exc.bounds == () and str(exc) == "over"


@pytest.mark.parametrize("bad", [-1, True, 1.5, "10"])
def test_budgets_are_token_ints_or_none(bad) -> None:
    with pytest.raises((TypeError, ValueError)):
        SectionBudgets(history=bad)
    assert SectionBudgets().history is None


def test_the_default_profile_refuses_nothing_amendment_specific() -> None:
    """The default profile takes its own request only; the amendment leaves it alone."""
    b = branch()
    ins = b.msgs.create_instruction(instruction="x")
    with pytest.raises(TypeError, match=r"amendment1\.TurnRequest"):
        compile_chat_request(b, object())  # type: ignore[arg-type]
    assert default_compile.__module__ == "lionagi_turns.core.pipeline"
    del ins


def test_deepcopy_of_a_request_is_equal_with_its_own_instruction() -> None:
    import copy
    import uuid

    b = branch()
    ins = b.msgs.create_instruction(instruction="now", context=[{"k": 1}])
    request = TurnRequest(
        instruction=ins,
        progression=(uuid.uuid4(),),
        tool_schemas=({"type": "function", "function": {"name": "f"}},),
        context_blocks=(ContextBlock("docs", "text"),),
        skipped=(LeftOut("memory", "section_budget", None),),
        provider_kwargs={"temperature": 0},
    )
    copied = copy.deepcopy(request)
    for name in FIELDS[TurnRequest]:
        if name != "instruction":
            assert getattr(copied, name) == getattr(request, name), name
    assert copied.instruction is not request.instruction
    assert copied.instruction.id == request.instruction.id
    assert copied.instruction.content.prompt_context == [{"k": 1}]
    assert copied.instruction.content.prompt_context is not ins.content.prompt_context
