"""adapters: progression forms, legacy ``[]``, call options, context-report pairing, isolation."""

from __future__ import annotations

from types import SimpleNamespace
from uuid import UUID, uuid4

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lionagi import Branch
from lionagi.operations.types import ChatParam, RunParam
from lionagi.protocols.generic.progression import Progression
from lionagi.protocols.messages import Instruction
from lionagi.protocols.messages.instruction import InstructionContent
from pydantic import BaseModel

from lionagi_turns import ContextBlock, TurnRequest, compile_chat_request
from lionagi_turns.integration._adapters import (
    context_blocks_from_report,
    isolate_instruction,
    legacy_progression,
    progression_ids,
    turn_request_from_param,
)

TOOL = {"type": "function", "function": {"name": "add", "parameters": {"type": "object"}}}


class Answer(BaseModel):
    value: int


def _instruction(text: str = "q", **content: object) -> Instruction:
    return Instruction(content=InstructionContent(instruction=text, **content))  # type: ignore[call-arg]


# ------------------------------------------------------------------------------ progression


def test_progression_forms_all_become_uuid_tuples() -> None:
    a, b, c = _instruction("a"), _instruction("b"), _instruction("c")
    ids = (a.id, b.id, c.id)
    assert progression_ids(a.id) == (a.id,)
    assert progression_ids(str(a.id)) == (a.id,)
    assert progression_ids(a) == (a.id,)
    assert progression_ids(Progression(order=list(ids))) == ids
    assert progression_ids([a, str(b.id), c.id]) == ids
    assert progression_ids((a.id, [b, (str(c.id),)])) == ids
    assert progression_ids([a, Progression(order=[b.id, c.id])]) == ids
    assert all(type(x) is UUID for x in progression_ids([a, str(b.id)]))


def test_progression_order_and_repeats_are_kept_for_the_compiler_to_judge() -> None:
    u, v = uuid4(), uuid4()
    assert progression_ids([v, u, v]) == (v, u, v)


def test_progression_bad_items_name_their_position() -> None:
    with pytest.raises(TypeError, match=r"progression\[1\] holds a int"):
        progression_ids([uuid4(), 3])
    with pytest.raises(ValueError, match=r"progression\[0\] holds 'nope', which is not a UUID"):
        progression_ids(["nope"])
    with pytest.raises(TypeError, match="dict"):
        progression_ids({"a": 1})


@pytest.mark.parametrize("falsy", [None, [], (), Progression()])
def test_legacy_falsy_progression_selects_the_branch(falsy: object) -> None:
    assert legacy_progression(falsy) is None


def test_legacy_non_empty_progression_is_converted() -> None:
    u = uuid4()
    assert legacy_progression([str(u)]) == (u,)


def test_empty_list_param_compiles_the_whole_branch_not_no_history() -> None:
    branch = Branch(system="sys")
    first = branch.msgs.create_instruction(instruction="earlier", sender="user")
    branch.msgs.add_message(instruction=first)
    branch.msgs.add_message(assistant_response="earlier answer", sender=branch.id)
    ins = branch.msgs.create_instruction(instruction="now")
    request = turn_request_from_param(branch, ins, ChatParam(progression=[]))
    assert request.progression is None
    compiled = compile_chat_request(branch, request)
    assert [m.role.value for m in compiled.messages] == ["user", "assistant", "user"]


# ----------------------------------------------------------------------------- options


def test_options_come_from_the_built_instruction() -> None:
    branch = Branch()
    ins = branch.msgs.create_instruction(
        instruction="q", tool_schemas=[TOOL], response_format=Answer
    )
    param = ChatParam(imodel_kw={"temperature": 0.1})
    request = turn_request_from_param(branch, ins, param)
    assert request.tool_schemas == (TOOL,)
    assert request.response_format is Answer
    assert dict(request.provider_kwargs) == {"temperature": 0.1}
    assert request.instruction is ins
    # the compiler accepts it: the embedded options equal the request's
    compiled = compile_chat_request(branch, request)
    assert "ResponseFormat" in compiled.messages[-1].content
    assert "Tools" in compiled.messages[-1].content


def test_options_fall_back_to_the_param_when_the_instruction_has_none() -> None:
    branch = Branch()
    ins = _instruction("q")
    param = ChatParam(tool_schemas=[TOOL], response_format=Answer, structure="json")
    request = turn_request_from_param(branch, ins, param)
    assert request.tool_schemas == (TOOL,)
    assert request.response_format is Answer
    assert request.structure == "json"


def test_tools_wrapper_form_is_flattened() -> None:
    request = turn_request_from_param(
        Branch(), _instruction(), ChatParam(tool_schemas={"tools": [TOOL]})
    )
    assert request.tool_schemas == (TOOL,)


def test_run_param_execution_settings_never_reach_the_request() -> None:
    param = RunParam(stream_persist=True, persist_dir="/tmp/x", imodel_kw={"timeout": 5})
    request = turn_request_from_param(Branch(), _instruction(), param)
    assert dict(request.provider_kwargs) == {"timeout": 5}


def test_imodel_kw_with_messages_is_refused() -> None:
    with pytest.raises(ValueError, match="reserved key 'messages'"):
        turn_request_from_param(
            Branch(), _instruction(), ChatParam(imodel_kw={"messages": []})
        )


def test_request_holds_no_reference_to_the_callers_kwargs() -> None:
    kw = {"stop": ["x"]}
    request = turn_request_from_param(Branch(), _instruction(), ChatParam(imodel_kw=kw))
    kw["stop"].append("y")
    assert dict(request.provider_kwargs) == {"stop": ["x"]}


def test_non_instruction_is_refused() -> None:
    with pytest.raises(TypeError, match="ins must be the lionagi Instruction"):
        turn_request_from_param(Branch(), "text", ChatParam())  # type: ignore[arg-type]


def test_context_blocks_reach_the_request() -> None:
    block = ContextBlock(provider_name="memory", content="fact")
    request = turn_request_from_param(Branch(), _instruction(), ChatParam(), context_blocks=[block])
    assert request.context_blocks == (block,)
    assert isinstance(request, TurnRequest)


# --------------------------------------------------------------------------- isolation


def test_isolate_instruction_copies_and_keeps_identity_fields() -> None:
    ins = _instruction("q", prompt_context=[{"k": [1]}])
    ins.metadata["tag"] = {"a": 1}
    copy_ = isolate_instruction(ins)
    assert copy_ is not ins
    assert (copy_.id, copy_.created_at, copy_.sender, copy_.recipient) == (
        ins.id,
        ins.created_at,
        ins.sender,
        ins.recipient,
    )
    copy_.content.prompt_context[0]["k"].append(2)
    copy_.metadata["tag"]["a"] = 2
    assert ins.content.prompt_context == [{"k": [1]}]
    assert ins.metadata["tag"] == {"a": 1}
    assert isolate_instruction("text") == "text"


def test_lionagi_factory_would_mutate_but_not_the_isolated_copy() -> None:
    branch = Branch()
    ins = _instruction("q")
    before = ins.to_dict()
    branch.msgs.create_instruction(
        instruction=isolate_instruction(ins), guidance="g", context=["c"]
    )
    assert ins.to_dict() == before
    branch.msgs.create_instruction(instruction=ins, guidance="g")
    assert ins.to_dict() != before, "lionagi's factory updates in place (why we copy)"


# ------------------------------------------------------------------------ report pairing


def _report(blocks: list[str], fired: list[object]) -> SimpleNamespace:
    return SimpleNamespace(blocks=blocks, fired=fired)


def test_report_pairs_blocks_with_provider_names_in_order() -> None:
    blocks = ["first", "second"]
    report = _report(
        blocks,
        [{"provider_name": "catalog", "tokens": 1}, {"provider_name": "memory", "tokens": 2}],
    )
    assert context_blocks_from_report(blocks, report) == (
        ContextBlock("catalog", "first"),
        ContextBlock("memory", "second"),
    )


@pytest.mark.parametrize("blocks", [None, []])
def test_no_blocks_need_no_report(blocks: list[str] | None) -> None:
    assert context_blocks_from_report(blocks, None) == ()


def test_blocks_without_report_are_refused() -> None:
    with pytest.raises(ValueError, match=r"1 context block.*no context report"):
        context_blocks_from_report(["x"], None)


def test_count_mismatch_is_refused() -> None:
    report = _report(["x", "y"], [{"provider_name": "a"}])
    with pytest.raises(ValueError, match=r"cannot pair 2 context block.*2 block\(s\), 1 fired"):
        context_blocks_from_report(["x", "y"], report)


def test_text_mismatch_is_refused() -> None:
    report = _report(["x"], [{"provider_name": "a"}])
    with pytest.raises(ValueError, match=r"exactly report\.blocks"):
        context_blocks_from_report(["other"], report)


@pytest.mark.parametrize("entry", [{"tokens": 1}, {"provider_name": ""}, "a", None])
def test_fired_entry_without_a_name_is_refused(entry: object) -> None:
    with pytest.raises(ValueError, match=r"fired\[0\].*give each context provider a name"):
        context_blocks_from_report(["x"], _report(["x"], [entry]))


# --------------------------------------------------------------------------- property


_MESSAGES = [_instruction(f"m{i}") for i in range(6)]


@st.composite
def _progression_forms(draw: st.DrawFn) -> tuple[object, list[UUID]]:
    """A value in some accepted form, and the ids it denotes in order."""
    picks = draw(st.lists(st.sampled_from(_MESSAGES), max_size=8))
    forms: list[object] = []
    for msg in picks:
        form = draw(st.sampled_from(["uuid", "str", "message", "progression", "nested"]))
        if form == "uuid":
            forms.append(msg.id)
        elif form == "str":
            forms.append(str(msg.id))
        elif form == "message":
            forms.append(msg)
        elif form == "progression":
            forms.append(Progression(order=[msg.id]))
        else:
            forms.append([(msg,)])
    container = draw(st.sampled_from([list, tuple]))
    return container(forms), [m.id for m in picks]


@given(_progression_forms())
def test_any_mix_of_accepted_forms_gives_the_ids_in_order(case: tuple[object, list[UUID]]) -> None:
    value, ids = case
    assert progression_ids(value) == tuple(ids)
    assert legacy_progression(value) == (tuple(ids) or None)
