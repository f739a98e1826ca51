"""ADR-0007 D2 step 2: project provider-relevant history (record kind -> projection)."""

from __future__ import annotations

import pytest
from lionagi.protocols.messages import Instruction, Message, MessageRole
from pydantic import BaseModel

from lionagi_turns import UnknownMessageTypeError
from lionagi_turns.core.history import project_history

from ._support import (
    add_action_pair,
    add_action_request,
    add_assistant,
    add_base_message,
    add_instruction,
    add_memo,
    add_stray_system,
    branch,
    compile_now,
    include,
    loaded,
    result,
    roles,
    text_of,
)


class Answer(BaseModel):
    text: str


def test_system_records_in_the_progression_are_not_emitted() -> None:
    b = branch("canonical policy")
    add_instruction(b, "q")
    stray = add_stray_system(b, "stray policy")
    add_assistant(b, "a")
    compiled = compile_now(b)
    assert roles(compiled) == ["user", "assistant", "user"]
    everything = "".join(text_of(m) for m in compiled.messages)
    assert "stray policy" not in everything
    assert everything.count("canonical policy") == 1
    assert stray.id in b.progression


def test_canonical_system_is_not_emitted_as_a_message() -> None:
    b = branch("canonical policy")
    compiled = compile_now(b)
    assert roles(compiled) == ["user"]
    assert b.msgs.system is not None and b.msgs.system.id in b.progression


def test_action_requests_are_not_emitted() -> None:
    b = branch()
    add_instruction(b, "q")
    add_action_request(b, "orphan_call")
    add_assistant(b, "a")
    compiled = compile_now(b)
    assert roles(compiled) == ["user", "assistant", "user"]
    assert "orphan_call" not in "".join(text_of(m) for m in compiled.messages)


def test_action_responses_fold_into_the_next_historical_instruction() -> None:
    b = branch()
    add_instruction(b, "q1")
    add_assistant(b, "calling")
    add_action_pair(b, "lookup", {"q": "x"}, {"hits": 2})
    add_instruction(b, "q2", context=["given"])
    add_assistant(b, "done")
    compiled = compile_now(b)
    assert roles(compiled) == ["user", "assistant", "user", "assistant", "user"]
    assert loaded(compiled.messages[0]) == {"Instruction": "q1"}
    assert loaded(compiled.messages[2])["Context"] == [
        "given",
        result("lookup", {"q": "x"}, {"hits": 2}),
    ]
    assert "Context" not in loaded(compiled.messages[4])


def test_action_result_projection_has_exactly_function_arguments_output() -> None:
    b = branch()
    add_instruction(b, "q1")
    add_assistant(b, "calling")
    _, response = add_action_pair(b, "lookup", {"q": "x"}, "out")
    assert response.content.action_request_id  # present on the record, absent in the projection
    compiled = compile_now(b)
    (item,) = loaded(compiled.messages[-1])["Context"]
    assert list(item) == ["function", "arguments", "output"]
    assert item == result("lookup", {"q": "x"}, "out")


def test_action_results_append_in_action_response_order() -> None:
    b = branch()
    add_instruction(b, "q1")
    add_assistant(b, "calling")
    add_action_pair(b, "second_defined", {}, 2)
    add_action_pair(b, "first_defined", {}, 1)
    add_action_pair(b, "third", {"z": 1}, 3)
    context = loaded(compile_now(b).messages[-1])["Context"]
    assert [c["function"] for c in context] == ["second_defined", "first_defined", "third"]


def test_action_results_follow_progression_order_not_creation_order() -> None:
    b = branch()
    i1 = add_instruction(b, "q1")
    a1 = add_assistant(b, "calling")
    r1, s1 = add_action_pair(b, "alpha", {}, 1)
    r2, s2 = add_action_pair(b, "beta", {}, 2)
    compiled = compile_now(b, progression=(i1.id, a1.id, r2.id, s2.id, r1.id, s1.id))
    assert [c["function"] for c in loaded(compiled.messages[-1])["Context"]] == ["beta", "alpha"]


def test_result_equal_to_an_existing_context_item_is_not_appended_again() -> None:
    b = branch()
    add_instruction(b, "q1")
    add_assistant(b, "calling")
    add_action_pair(b, "lookup", {"q": 1}, "same")
    add_instruction(b, "q2", context=[result("lookup", {"q": 1}, "same")])
    add_assistant(b, "ok")
    context = loaded(compile_now(b).messages[2])["Context"]
    assert context == [result("lookup", {"q": 1}, "same")]


def test_pending_results_after_the_last_instruction_go_to_the_current_instruction() -> None:
    b = branch()
    add_instruction(b, "q1")
    add_assistant(b, "calling")
    add_action_pair(b, "lookup", {"q": 1}, 10)
    compiled = compile_now(b, context=["caller context"])
    assert loaded(compiled.messages[-1])["Context"] == [
        "caller context",
        result("lookup", {"q": 1}, 10),
    ]
    assert "Context" not in loaded(compiled.messages[0])


def test_assistant_responses_become_assistant_messages_with_their_text() -> None:
    b = branch()
    add_instruction(b, "q")
    add_assistant(b, "the reply text")
    compiled = compile_now(b)
    assert compiled.messages[1].role is MessageRole.ASSISTANT
    assert compiled.messages[1].content == "the reply text"


def test_historical_instruction_drops_recorded_call_options() -> None:
    b = branch()
    add_instruction(
        b,
        "old question",
        tool_schemas={"name": "legacy_tool", "parameters": {}},
        response_format=Answer,
    )
    stored = b.msgs.messages[b.progression[0]]
    assert isinstance(stored, Instruction) and stored.content.tool_schemas  # legacy record
    add_assistant(b, "a")
    first = loaded(compile_now(b).messages[0])
    assert first == {"Instruction": "old question"}
    assert stored.content.tool_schemas  # the record itself keeps what it had


def test_base_message_with_unset_role_is_ignored() -> None:
    b = branch()
    add_instruction(b, "q")
    routed = add_base_message(b)
    assert routed.role is MessageRole.UNSET
    add_assistant(b, "a")
    compiled = compile_now(b)
    assert roles(compiled) == ["user", "assistant", "user"]
    assert "routed" not in "".join(text_of(m) for m in compiled.messages)


def test_unknown_fixed_role_subtype_raises_type_error_naming_it() -> None:
    b = branch()
    add_instruction(b, "q")
    add_assistant(b, "a")
    memo = add_memo(b)
    with pytest.raises(TypeError) as raised:
        compile_now(b)
    err = raised.value
    assert isinstance(err, UnknownMessageTypeError)
    assert f"position 2 (id {memo.id}) is a MemoNote with role 'assistant'" in str(err)
    assert [d.kind for d in err.defects] == ["unknown_subtype"]


def test_unknown_subtype_with_user_role_is_also_rejected() -> None:
    class Reminder(Message):
        _role = MessageRole.USER

    b = branch()
    reminder = include(b, Reminder(content={"text": "x"}))
    with pytest.raises(UnknownMessageTypeError, match=rf"id {reminder.id}\) is a Reminder"):
        compile_now(b)


def test_subclass_of_a_known_kind_follows_its_base_rule() -> None:
    class TaggedInstruction(Instruction):
        pass

    b = branch()
    include(b, TaggedInstruction(content={"instruction": "tagged"}))
    add_assistant(b, "a")
    compiled = compile_now(b)
    assert loaded(compiled.messages[0]) == {"Instruction": "tagged"}


def test_projection_collects_every_defect_kind_at_once() -> None:
    from uuid import uuid4

    b = branch("policy")
    a0 = add_assistant(b, "first is an assistant")
    i1 = add_instruction(b, "q1")
    i2 = add_instruction(b, "q2")
    memo = add_memo(b)
    ghost = uuid4()
    ids = (a0.id, i1.id, i2.id, memo.id, i1.id, ghost)
    projection = project_history(b, ids)
    kinds = sorted({d.kind for d in projection.defects})
    assert kinds == sorted(
        {
            "missing_id",
            "duplicate_id",
            "unknown_subtype",
            "consecutive_instructions",
            "first_not_instruction",
        }
    )
    with pytest.raises(ValueError, match=r"not found in branch\.msgs\.messages"):
        projection.raise_first()


def test_every_kind_rule_is_one_row_and_the_walk_dispatches_on_it() -> None:
    from lionagi.protocols.messages import (
        ActionRequest,
        ActionResponse,
        AssistantResponse,
        System,
    )

    from lionagi_turns.core.kinds import KIND_RULES, UNSET_RULE, rule_for

    assert {r.kind: r.projected for r in KIND_RULES} == {
        System: "skip",
        ActionRequest: "skip",
        ActionResponse: "action_result",
        AssistantResponse: "assistant",
        Instruction: "instruction",
    }
    b = branch()
    assert rule_for(add_base_message(b)) is UNSET_RULE
    assert rule_for(add_memo(b)) is None  # no row: an unknown subtype
    assert rule_for("not a message") is None


# --- Action results (D2 §2): where pending results fold, and equal results once



def test_results_with_no_conversational_record_before_them_reach_the_current_turn() -> None:
    b = branch("policy")
    add_action_pair(b, "lookup", {"q": 1}, "hit")
    compiled = compile_now(b)
    assert roles(compiled) == ["user"]
    rendered = loaded(compiled.messages[0])
    assert rendered["Guidance"] == "policy"
    assert rendered["Context"] == [result("lookup", {"q": 1}, "hit")]


def test_results_before_the_first_instruction_fold_into_it() -> None:
    b = branch("policy")
    add_action_pair(b, "lookup", {"q": 1}, "hit")
    add_instruction(b, "q1")
    add_assistant(b, "a1")
    compiled = compile_now(b)
    assert loaded(compiled.messages[0])["Context"] == [result("lookup", {"q": 1}, "hit")]
    assert "Context" not in loaded(compiled.messages[-1])


def test_equal_results_in_one_batch_are_appended_once() -> None:
    b = branch()
    add_instruction(b, "q")
    add_assistant(b, "calling twice")
    add_action_pair(b, "lookup", {"q": 1}, "same")
    add_action_pair(b, "lookup", {"q": 1}, "same")
    add_action_pair(b, "lookup", {"q": 1}, "different")
    context = loaded(compile_now(b).messages[-1])["Context"]
    assert context == [
        result("lookup", {"q": 1}, "same"),
        result("lookup", {"q": 1}, "different"),
    ]
