"""A historical instruction's recorded sent text verifies exactly when the prompt-cache profile
renders it: values whose trailing whitespace the durable rendering strips but a following
response section keeps are sent as recorded, and a text differing from the profile's rendering
only in whitespace is refused (its durable view is sent and the record reported)."""

import dataclasses
from typing import Any

import pytest
from equivalence._support import PNG  # type: ignore[import-not-found]
from hypothesis import given, settings
from hypothesis import strategies as st
from lionagi import Branch

from lionagi_turns import TurnRequest
from lionagi_turns.core.history import InstructionTurn
from lionagi_turns.core.render import ShownSections, render_view
from lionagi_turns.integration._cache import compile_for_prompt_cache
from lionagi_turns.profiles.prompt_cache import _sent as _cache_sent
from lionagi_turns.profiles.prompt_cache._compile import RECORD_KEY
from lionagi_turns.profiles.prompt_cache._record import read_record

from ._records import Answer, next_view
from ._tools import lookup

# (instruction, context): the last durable value ends in whitespace or a kept line break
TRAILING = {
    "nbsp": ("0\xa0", []),
    "ideographic-space": ("0\u3000", []),
    "spaces": ("a  ", []),
    "tab": ("a\t", []),
    "literal-block": ("x\ny\n", []),
    "kept-line-breaks": ("a\n\n", []),
    "context-nbsp": ("q", ["0\xa0"]),
}


def sent_once(
    instruction: str, context: list[Any], answer: bool = False, image: bool = False
) -> tuple[Branch, Any]:
    """A branch whose one instruction was sent with the tool reference (and a response format)
    under the prompt-cache profile, then answered; and that instruction."""
    branch = Branch(system="S", tools=[lookup])
    images: dict[str, Any] = {"images": [PNG], "image_detail": "low"} if image else {}
    request = TurnRequest(
        instruction=branch.msgs.create_instruction(
            instruction=instruction, context=context, **images
        ),
        tool_schemas=tuple(branch.acts.schema_list),
        response_format=Answer if answer else None,
    )
    compiled, _ = compile_for_prompt_cache(branch, request)
    branch.msgs.add_message(instruction=compiled.instruction)
    branch.msgs.add_message(assistant_response="a")
    return branch, compiled.instruction


def first_sent(view: dict[str, Any]) -> Any:
    """The first message's content without the cache marks the adapter adds."""
    content = view["messages"][0]["content"]
    if isinstance(content, list):
        return [{k: v for k, v in p.items() if k != "cache_control"} for p in content]
    return content


def as_parts(text: Any) -> list[dict[str, Any]]:
    return text if isinstance(text, list) else [{"type": "text", "text": text}]


@pytest.mark.parametrize("answer", [False, True], ids=["tools", "tools+format"])
@pytest.mark.parametrize("image", [False, True], ids=["text", "image"])
@pytest.mark.parametrize("name", list(TRAILING))
def test_a_recorded_text_with_trailing_whitespace_is_sent_as_recorded(
    name: str, answer: bool, image: bool
) -> None:
    instruction, context = TRAILING[name]
    branch, message = sent_once(instruction, context, answer, image)
    recorded = message.metadata[RECORD_KEY]["text"]
    durable, _ = render_view(message.content)
    assert recorded != durable  # sent with its response sections
    view = next_view(branch)
    assert view["ignored_records"] == []
    assert not view["changes"]["history_rewrite"]
    assert as_parts(first_sent(view)) == as_parts(recorded)


def _nbsp_dropped(text: str) -> str:
    return text.replace("0\xa0\n", "0\n", 1)


def _blank_line(text: str) -> str:
    return text.replace("\nTools:", "\n\nTools:", 1)


def _other_space(text: str) -> str:
    return text.replace("0\xa0\n", "0\u3000\n", 1)


def _trailing_space(text: str) -> str:
    return text + " "


@pytest.mark.parametrize(
    "forge", [_nbsp_dropped, _blank_line, _other_space, _trailing_space],
    ids=["nbsp-dropped", "blank-line", "other-space", "trailing-space"],
)
def test_a_text_differing_only_in_whitespace_from_the_profiles_is_refused(forge: Any) -> None:
    """Every forgery keeps the durable rendering ('Instruction: 0', the basis matches) and
    well-formed response sections; only whitespace differs from what the profile renders."""
    branch, message = sent_once("0\xa0", [])
    record = message.metadata[RECORD_KEY]
    honest = record["text"]
    durable, _ = render_view(message.content)
    assert durable == "Instruction: 0" and honest.startswith("Instruction: 0\xa0\nTools:\n")
    forged = forge(honest)
    assert forged != honest
    record["text"] = forged
    view = next_view(branch)
    assert first_sent(view) in (durable, as_parts(durable))
    assert view["changes"]["history_rewrite"]
    assert [(i["position"], i["id"]) for i in view["ignored_records"]] == [(1, str(message.id))]
    record["text"] = honest
    view = next_view(branch)
    assert view["ignored_records"] == [] and as_parts(first_sent(view)) == as_parts(honest)


SPACED = st.text(st.sampled_from(["0", "a", " ", "\t", "\n", "\xa0", "\u3000", "-", ":"]),
                 min_size=1, max_size=6)


def _rendered_again(turn: Any, rendered: Any, record: Any) -> bool:
    """The reference rule: the text equals the instruction rendered again with the response
    sections it ends in (``ShownSections``)."""
    head = _cache_sent._text_part(record.text)
    return head is not None and any(
        _cache_sent._render(turn, rendered, record, ShownSections(s)) == record.text
        for s in _cache_sent._shown_sections(head)
    )


@settings(max_examples=150, deadline=None)
@given(instruction=SPACED, context=st.lists(SPACED, max_size=1), answer=st.booleans(),
       edit=st.sampled_from(["none", "rstrip", "blank-line", "space"]))
def test_the_quick_rule_decides_as_rendering_again(
    instruction: str, context: list[Any], answer: bool, edit: str
) -> None:
    """Whether a text verifies never depends on which rule decided it: for the text the
    profile wrote and for whitespace edits of it, ``verified_text`` accepts exactly the texts
    equal to the instruction rendered again with their sections."""
    _, message = sent_once(instruction, context, answer)
    honest = message.metadata[RECORD_KEY]["text"]
    cut = 0 if honest.startswith("Tools:") else honest.rfind("\nTools:")
    assert cut >= 0
    head, rest = honest[:cut], honest[cut:]
    text = {"none": honest, "rstrip": head.rstrip() + rest, "blank-line": f"{head}\n{rest}",
            "space": f"{head} {rest}"}[edit]
    rendered, _ = render_view(message.content)
    record = dataclasses.replace(read_record(message), text=text)
    turn = InstructionTurn(message, 0)
    expected = text if _rendered_again(turn, rendered, record) else None
    assert _cache_sent.verified_text(turn, rendered, record) == expected
    if edit == "none":
        assert expected == honest
