"""Hypothesis properties of compile_chat_request over random real lionagi Branches.

For every random history (instructions, assistant responses, action request/response pairs,
orphan action requests, stray System records, base Messages, an unknown fixed-role subtype),
random view (None, (), explicit ids with missing and repeated ids, a current_progression
override), random context blocks, call options and provider kwargs (the reserved key included):

1. compile raises exactly the error the ADR names for the first defect, or returns messages in
   the ADR's order (checked against an independent model of D2 steps 1-3);
2. the branch and the supplied instruction are identical before and after, also when it raises;
3. two compiles are equal and share no mutable object with each other, the branch or the
   caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from uuid import UUID, uuid4

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from lionagi import Branch
from lionagi.protocols.messages import Instruction
from pydantic import BaseModel
from unit._support import (
    add_action_pair,
    add_action_request,
    add_assistant,
    add_base_message,
    add_instruction,
    add_memo,
    add_stray_system,
    assert_same_state,
    branch_state,
    message_state,
    mutable_ids,
    set_current_progression,
    text_of,
)

from lionagi_turns import (
    CompiledChatRequest,
    ContextBlock,
    HistoryError,
    TurnRequest,
    UnknownMessageTypeError,
    compile_chat_request,
)
from lionagi_turns.core.history import branch_system

RESERVED = "provider_kwargs must not contain reserved key 'messages'"
CONSECUTIVE = "Consecutive instructions require an intervening assistant response"
FIRST_RULE = "First message in progression must be an Instruction or System"
CALL_SECTIONS = ("Tools:", "ResponseSchema:", "ResponseFormat:")


class Answer(BaseModel):
    text: str


# --- strategies ----------------------------------------------------------------------------------

# Weighted so that about half of the histories are well formed.
KINDS = ["ins"] * 6 + ["asst"] * 6 + ["pair"] * 2 + ["request", "system", "base", "unknown"]
WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "list: x", "multi\nline", "  pad  "])
JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), WORDS)
JSON_VALUE = st.recursive(
    JSON_LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=2)
    ),
    max_leaves=4,
)
GUIDANCE = st.one_of(st.none(), WORDS, st.dictionaries(st.sampled_from("xy"), WORDS, max_size=2))
TOOLS = st.lists(
    st.builds(lambda n: {"name": n, "parameters": {"type": "object"}}, st.sampled_from("fgh")),
    max_size=2,
).map(tuple)
RESPONSE_FORMAT = st.sampled_from([None, None, {"answer": "str"}, Answer, Answer(text="x")])
BLOCK = st.builds(
    ContextBlock,
    provider_name=st.text(min_size=1, max_size=8),
    content=st.text(min_size=1, max_size=20),
)
KWARGS = st.dictionaries(
    st.sampled_from(["temperature", "max_tokens", "stop", "metadata", "messages"]),
    st.one_of(st.integers(0, 3), st.lists(WORDS, max_size=2), st.dictionaries(WORDS, WORDS)),
    max_size=3,
)


@dataclass
class Scenario:
    system: str | None
    kinds: list[str]
    view: str  # "none" | "empty" | "explicit" | "current"
    keep: list[bool]  # explicit views: which stored ids to keep (cyclic mask)
    reorder: str  # "as is" | "reverse" | "rotate"
    ghosts: list[int]  # explicit views: positions at which an unknown id is inserted
    repeats: list[int]  # explicit views: positions of kept ids that are repeated
    record_guidance: list[Any]
    record_tools: list[bool]
    current: dict[str, Any]
    tool_schemas: tuple[dict[str, Any], ...]
    response_format: Any
    blocks: list[ContextBlock]
    kwargs: dict[str, Any]


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    kinds = draw(st.lists(st.sampled_from(KINDS), max_size=8))
    n = len(kinds)
    current: dict[str, Any] = {"instruction": draw(WORDS), "guidance": draw(GUIDANCE)}
    if draw(st.booleans()):
        current["context"] = draw(st.lists(JSON_VALUE, max_size=2))
    if draw(st.integers(0, 5)) == 0:
        current["plain_content"] = draw(WORDS)
    if draw(st.integers(0, 5)) == 0:
        current["images"] = ["data:image/png;base64,AAAA", "https://example.com/i.png"]
    return Scenario(
        system=draw(st.one_of(st.none(), WORDS)),
        kinds=kinds,
        view=draw(st.sampled_from(["none", "none", "empty", "explicit", "current"])),
        keep=draw(st.lists(st.booleans(), min_size=1, max_size=6)),
        reorder=draw(st.sampled_from(["as is", "as is", "reverse", "rotate"])),
        ghosts=draw(st.sampled_from([[], [], [], [], [0], [2, 5]])),
        repeats=draw(st.sampled_from([[], [], [], [], [0], [1, 3]])),
        record_guidance=draw(st.lists(GUIDANCE, min_size=n, max_size=n)),
        record_tools=draw(st.lists(st.booleans(), min_size=n, max_size=n)),
        current=current,
        tool_schemas=draw(TOOLS),
        response_format=draw(RESPONSE_FORMAT),
        blocks=draw(st.lists(BLOCK, max_size=3)),
        kwargs=draw(KWARGS),
    )


def build(s: Scenario) -> tuple[Branch, Instruction, tuple[UUID, ...] | None]:
    """The real branch, the supplied instruction and the TurnRequest progression."""
    b = Branch(system=s.system) if s.system is not None else Branch()
    for i, kind in enumerate(s.kinds):
        if kind == "ins":
            extra: dict[str, Any] = {"guidance": s.record_guidance[i]}
            if s.record_tools[i]:
                extra["tool_schemas"] = {"name": "legacy", "parameters": {}}
                extra["response_format"] = Answer
            add_instruction(b, f"question {i}", **extra)
        elif kind == "asst":
            add_assistant(b, f"answer {i}")
        elif kind == "pair":
            add_action_pair(b, f"tool{i}", {"i": i % 2}, {"out": i % 3})
        elif kind == "request":
            add_action_request(b, f"orphan{i}")
        elif kind == "system":
            add_stray_system(b, f"stray {i}")
        elif kind == "base":
            add_base_message(b)
        elif kind == "unknown":
            add_memo(b)
    ids = [uid for i, uid in enumerate(b.msgs.progression) if s.keep[i % len(s.keep)]]
    if s.reorder == "reverse":
        ids.reverse()
    elif s.reorder == "rotate" and ids:
        ids = ids[1:] + ids[:1]
    for position in s.repeats:
        if ids:
            ids.append(ids[position % len(ids)])
    for position in s.ghosts:
        ids.insert(min(position, len(ids)), uuid4())
    explicit = tuple(ids)
    progression: tuple[UUID, ...] | None = None
    if s.view == "empty":
        progression = ()
    elif s.view == "explicit":
        progression = explicit
    elif s.view == "current":
        set_current_progression(b, explicit)
    ins = b.msgs.create_instruction(**s.current)
    return b, ins, progression


def make_request(
    s: Scenario, ins: Instruction, progression: Any, *, reserved: bool = True
) -> TurnRequest:
    """The scenario's request; ``reserved=False`` leaves the reserved key out of the kwargs."""
    kwargs = s.kwargs if reserved else {k: v for k, v in s.kwargs.items() if k != "messages"}
    return TurnRequest(
        instruction=ins,
        progression=progression,
        tool_schemas=s.tool_schemas,
        response_format=s.response_format,
        context_blocks=tuple(s.blocks),
        provider_kwargs=kwargs,
    )


# --- an independent model of D2 steps 1-3 --------------------------------------------------------


def expected_outcome(b: Branch, progression: tuple[UUID, ...] | None) -> tuple[str, Any]:
    """("error", (exception type, message prefix)) or ("ok", roles)."""
    ids = list(b.progression) if progression is None else list(progression)
    pile = b.msgs.messages.collections
    if any(uid not in pile for uid in ids):
        missing = sum(uid not in pile for uid in ids)
        return "error", (HistoryError, f"{missing} progression id(s) not found")
    if len(set(ids)) != len(ids):
        return "error", (HistoryError, "duplicate ids in progression")
    kinds = [type(pile[uid]).__name__ for uid in ids]
    if "MemoNote" in kinds:
        return "error", (UnknownMessageTypeError, "unsupported message kind in history")
    turns: list[str] = []
    for kind in kinds:
        if kind == "Instruction":
            if turns and turns[-1] == "user":
                return "error", (HistoryError, CONSECUTIVE)
            turns.append("user")
        elif kind == "AssistantResponse" and (not turns or turns[-1] != "assistant"):
            turns.append("assistant")
    # The system: msgs.system, or a System record heading the pile and the view (as after
    # lionagi's own Branch.from_dict reload).
    if branch_system(b) is not None and turns and turns[0] == "assistant":
        return "error", (HistoryError, FIRST_RULE)
    return "ok", [*turns, "user"]


def assert_adr_ordering(b: Branch, compiled: CompiledChatRequest) -> None:
    roles = [m.role.value for m in compiled.messages]
    assert roles and roles[-1] == "user"
    if branch_system(b) is not None:
        assert roles[0] == "user"
    for i in range(1, len(roles) - 1):
        # Roles alternate; the only repeat allowed is a history that ends in an instruction,
        # followed by the current one.
        assert roles[i] != roles[i - 1], roles
    for message in compiled.messages[:-1]:
        for section in CALL_SECTIONS:
            assert section not in text_of(message)


# --- the properties ------------------------------------------------------------------------------


@pytest.mark.slow
@given(scenarios())
def test_compile_raises_the_named_error_or_returns_adr_ordered_messages(s: Scenario) -> None:
    b, ins, progression = build(s)
    if "messages" in s.kwargs:
        with pytest.raises(ValueError) as refused:
            make_request(s, ins, progression)
        assert str(refused.value) == RESERVED
        event("reserved key refused")
        return
    request = make_request(s, ins, progression)
    outcome, detail = expected_outcome(b, progression)
    if outcome == "error":
        error_type, prefix = detail
        with pytest.raises(error_type) as raised:
            compile_chat_request(b, request)
        error = raised.value
        assert len({d.kind for d in error.defects}) == 1, error.defects
        if prefix in (CONSECUTIVE, FIRST_RULE):
            # The ADR's exact sentence and nothing else; one note per defect, then the next step.
            assert str(error) == prefix
            assert error.__notes__ == [
                *(d.message for d in error.defects),
                error.__notes__[-1],
            ]
            assert error.__notes__[-1].startswith("next step: ")
        else:
            assert str(error).startswith(prefix), (prefix, str(error))
        event(f"raised {error_type.__name__}: {prefix[:30]}")
        return
    compiled = compile_chat_request(b, request)
    event("compiled")
    assert [m.role.value for m in compiled.messages] == detail
    assert_adr_ordering(b, compiled)
    if s.tool_schemas and not s.current.get("plain_content"):
        # plain_content replaces the structured rendering, call sections included (lionagi).
        assert "Tools:" in text_of(compiled.messages[-1])


@pytest.mark.slow
@given(scenarios())
def test_compile_never_changes_the_branch_or_the_supplied_instruction(s: Scenario) -> None:
    b, ins, progression = build(s)
    before = branch_state(b)
    ins_before = message_state(ins)
    request = make_request(s, ins, progression, reserved=False)
    try:
        compile_chat_request(b, request)
        event("compiled")
    except (HistoryError, UnknownMessageTypeError) as exc:  # anything else fails the test
        event(f"raised {type(exc).__name__}")
    assert_same_state(before, branch_state(b))
    ins_after = message_state(ins)
    assert ins_after["to_dict"] == ins_before["to_dict"]
    assert ins_after["private"] == ins_before["private"]
    assert ins_after["content"][2] == ins_before["content"][2]
    assert ins_after["content_object"] is ins_before["content_object"]


@pytest.mark.slow
@given(scenarios())
def test_two_compiles_are_equal_and_share_no_mutable_object(s: Scenario) -> None:
    b, ins, progression = build(s)
    request = make_request(s, ins, progression, reserved=False)
    try:
        first = compile_chat_request(b, request)
    except (HistoryError, UnknownMessageTypeError) as exc:
        with pytest.raises(type(exc)) as again:
            compile_chat_request(b, request)
        assert str(again.value) == str(exc)
        event("same error twice")
        return
    second = compile_chat_request(b, make_request(s, ins, progression, reserved=False))
    event("compiled twice")
    assert first.messages == second.messages
    assert dict(first.provider_kwargs) == dict(second.provider_kwargs)
    assert dict(first.provider_kwargs) == dict(request.provider_kwargs)
    assert first.instruction.to_dict() == second.instruction.to_dict()
    assert first.instruction is not second.instruction
    one, two = mutable_ids(first), mutable_ids(second)
    assert one.isdisjoint(two)
    stored = mutable_ids([*b.msgs.messages.collections.values(), b.metadata])
    caller = mutable_ids(
        [
            ins,
            request.tool_schemas,
            request.response_format,
            request.provider_kwargs,
            s.kwargs,
            s.current,
        ]
    )
    assert one.isdisjoint(stored) and two.isdisjoint(stored)
    assert one.isdisjoint(caller) and two.isdisjoint(caller)
