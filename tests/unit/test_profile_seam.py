"""The compile-profile seam (docs/architecture.md "Profiles"): a profile is a set of pass
options run by the one pipeline; the seed profile is ``compile_chat_request`` byte for byte.

Each option is exercised with a small profile of the kind a later profile (ADR-0127's cache
layout, ADR-0007 Amendment 1) is built from, and the passes no option may change stay as the
seed has them (errors, the ReAct step, the durable record, purity).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pytest
from lionagi.ln import json_dumps

from lionagi_turns import (
    ContextBlock,
    HistoryError,
    TurnRequest,
    compile_chat_request,
    encode_context_section,
)
from lionagi_turns.core.history import AssistantTurn, InstructionTurn, Projection
from lionagi_turns.core.pipeline import compile_traced
from lionagi_turns.core.profile import SEED_PROFILE, Bounded, CompileProfile
from lionagi_turns.core.render import CallOptions

from ._support import (
    add_action_pair,
    add_assistant,
    add_instruction,
    branch,
    branch_state,
    loaded,
    text_of,
)

BLOCK = ContextBlock(provider_name="catalog", content="retrieved")
SECTION = encode_context_section((BLOCK,))
TOOL = {"name": "lookup", "parameters": {"type": "object"}}


def _history():
    b = branch("System policy.")
    add_instruction(b, "q1", guidance="g1")
    add_assistant(b, "a1")
    add_action_pair(b, "lookup", {"q": 1}, "found")
    add_instruction(b, "q2")
    add_assistant(b, "a2")
    add_action_pair(b, "lookup", {"q": 2}, "later")
    return b


def _request(b, **kwargs: Any) -> TurnRequest:
    ins = b.msgs.create_instruction(instruction="now")
    kwargs.setdefault("context_blocks", (BLOCK,))
    return TurnRequest(instruction=ins, **kwargs)


def test_the_seed_profile_is_compile_chat_request() -> None:
    b = _history()
    request = _request(b, tool_schemas=(TOOL,))
    trace = compile_traced(b, request, profile=SEED_PROFILE)
    assert trace.compiled == compile_chat_request(b, request)
    assert trace.profile is SEED_PROFILE and trace.stable_blocks == ()
    assert trace.projection is trace.projected
    assert [p.message_index for p in trace.rendered] == [0, 1, 2, 3, 4]
    assert [p.content for p in trace.rendered] == [m.content for m in trace.compiled.messages]


def test_no_system_fold_leaves_the_system_to_stable_blocks() -> None:
    # ADR-0127 D3 as lionagi 0.36 ships it: the system text is its own block, the context
    # section and guidance still fold into the first instruction.
    profile = CompileProfile(
        name="no-system-fold",
        fold_system=False,
        stable_blocks=lambda branch, request: (branch.msgs.system.rendered,),
    )
    b = _history()
    trace = compile_traced(b, _request(b), profile=profile)
    assert trace.stable_blocks == ("System policy.",)
    assert trace.fold is not None and trace.fold.parts.system == ""
    assert trace.parts.system == "System policy."  # still on the trace for the profile
    assert loaded(trace.compiled.messages[0])["Guidance"] == f"{SECTION}\n\ng1"


def test_nothing_folded_keeps_each_part_on_the_trace() -> None:
    profile = CompileProfile(name="no-fold", fold_system=False, fold_context=False)
    b = _history()
    trace = compile_traced(b, _request(b), profile=profile)
    assert trace.fold is None and trace.fold_message_index is None
    assert trace.parts.sections() == [
        ("system", "System policy."),
        ("context", SECTION),
        ("guidance", "g1"),
    ]
    assert loaded(trace.compiled.messages[0]) == {"Guidance": "g1", "Instruction": "q1"}


def test_envelope_option_replaces_the_context_encoder() -> None:
    def with_authority(blocks: Sequence[ContextBlock]) -> str:
        payload = [
            {"authority": "material", "content": b.content, "provider_name": b.provider_name}
            for b in blocks
        ]
        return "\n".join(
            ["LIONAGI_CONTEXT_BLOCKS_JSON", json_dumps(payload, sort_keys=True),
             "END_LIONAGI_CONTEXT_BLOCKS_JSON"]
        )

    b = _history()
    profile = CompileProfile("authority", envelope=with_authority)
    trace = compile_traced(b, _request(b), profile=profile)
    guidance = loaded(trace.compiled.messages[0])["Guidance"]
    assert '"authority":"material"' in guidance
    assert trace.parts.context == with_authority((BLOCK,))


def test_call_options_of_current_and_history_instructions() -> None:
    # ADR-0127 D2: tools by name, the same bytes current or historical.
    def refs(request: TurnRequest) -> CallOptions:
        return CallOptions(tool_schemas=[s["name"] for s in request.tool_schemas])

    profile = CompileProfile(
        name="tool-refs",
        current_options=lambda branch, request: refs(request),
        history_options=lambda branch, turn: CallOptions(tool_schemas=["lookup"]),
    )
    b = _history()
    compiled = compile_traced(b, _request(b, tool_schemas=(TOOL,)), profile=profile).compiled
    users = [loaded(m) for m in compiled.messages if m.role.value == "user"]
    assert [u["Tools"] for u in users] == [["lookup"], ["lookup"], ["lookup"]]


def test_results_section_replaces_folding_results_into_the_context() -> None:
    # Amendment 1's tool_results section: after the instruction's content, not in its context.
    def section(results: Sequence[dict[str, Any]], context: Sequence[Any]) -> str:
        kept = [r for r in results if r not in context]
        return "TOOL_RESULTS\n" + json_dumps(kept, sort_keys=True) + "\nEND_TOOL_RESULTS"

    b = _history()
    profile = CompileProfile("results", results_section=section)
    trace = compile_traced(b, _request(b), profile=profile)
    second = text_of(trace.compiled.messages[2])
    assert second == (
        "Instruction: q2\n\nTOOL_RESULTS\n"
        '[{"arguments":{"q":1},"function":"lookup","output":"found"}]\nEND_TOOL_RESULTS'
    )
    current = text_of(trace.compiled.messages[-1])
    assert current.startswith("Instruction: now\n\nTOOL_RESULTS\n")
    assert "Context" not in current


def test_bound_drops_whole_turns_and_the_trace_keeps_what_was_walked() -> None:
    def last_turn_pair(projection: Projection, request: TurnRequest) -> Bounded:
        return Bounded(dataclasses.replace(projection, turns=projection.turns[-2:]), "newest 2")

    b = _history()
    trace = compile_traced(b, _request(b), profile=CompileProfile("bound", bound=last_turn_pair))
    assert trace.bounded is not None and trace.bounded.decision == "newest 2"
    assert trace.bounded.projection is trace.projection
    assert len(trace.projected.turns) == 4 and len(trace.projection.turns) == 2
    assert isinstance(trace.projection.turns[0], InstructionTurn)
    assert isinstance(trace.projection.turns[1], AssistantTurn)
    first = loaded(trace.compiled.messages[0])
    assert first["Instruction"] == "q2"  # the fold moved to the first kept instruction
    assert first["Guidance"] == f"System policy.\n\n{SECTION}"


def test_a_bound_cannot_hide_a_defect_of_a_turn_it_drops() -> None:
    def keep_last_and_forget(projection: Projection, request: TurnRequest) -> Bounded:
        return Bounded(Projection(projection.turns[-1:], projection.pending, []))

    b = branch()
    add_instruction(b, "q1")
    add_instruction(b, "q2")  # the defect: two instructions in a row
    add_assistant(b, "a")
    profile = CompileProfile("forgetful", bound=keep_last_and_forget)
    with pytest.raises(HistoryError) as raised:
        compile_traced(b, _request(b), profile=profile)
    assert str(raised.value) == "Consecutive instructions require an intervening assistant response"
    assert [d.kind for d in raised.value.defects] == ["consecutive_instructions"]


def test_no_profile_changes_the_ordering_errors() -> None:
    b = branch()
    add_instruction(b, "q1")
    add_instruction(b, "q2")
    profile = CompileProfile("no-fold", fold_system=False, fold_context=False)
    with pytest.raises(HistoryError) as raised:
        compile_traced(b, _request(b), profile=profile)
    assert str(raised.value) == "Consecutive instructions require an intervening assistant response"


def test_a_profile_compile_writes_nothing_and_records_durable_content() -> None:
    profile = CompileProfile(
        "everything",
        fold_system=False,
        current_options=lambda branch, request: CallOptions(tool_schemas=["lookup"]),
        results_section=lambda results, context: "R",
    )
    b = _history()
    before = branch_state(b)
    trace = compile_traced(b, _request(b, tool_schemas=(TOOL,)), profile=profile)
    assert branch_state(b) == before
    assert list(trace.compiled.instruction.content.tool_schemas) == []


def test_fold_target_current_folds_into_the_current_instruction() -> None:
    # ADR-0127's turn segment: this call's blocks on the current instruction only.
    profile = CompileProfile("turn-fold", fold_system=False, fold_target="current")
    b = _history()
    trace = compile_traced(b, _request(b), profile=profile)
    assert trace.fold is not None and trace.fold.target is None
    assert loaded(trace.compiled.messages[0]) == {"Guidance": "g1", "Instruction": "q1"}
    assert loaded(trace.compiled.messages[-1])["Guidance"] == SECTION
    assert trace.fold_message_index == len(trace.compiled.messages) - 1


def test_history_text_replaces_a_historical_rendering_but_not_the_fold_targets() -> None:
    seen: list[Any] = []

    def as_sent(branch: Any, turn: InstructionTurn, rendered: Any) -> Any:
        seen.append(rendered)
        return f"sent earlier as {turn.message.content.instruction}"

    b = _history()
    seed = compile_traced(b, _request(b)).compiled
    trace = compile_traced(b, _request(b), profile=CompileProfile("as-sent", history_text=as_sent))
    users = [m.content for m in trace.compiled.messages if m.role.value == "user"]
    assert users == [seed.messages[0].content, "sent earlier as q2", seed.messages[-1].content]
    assert seen == [seed.messages[2].content]  # given the pipeline's own rendering
