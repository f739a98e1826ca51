"""A historical instruction's recorded sent text verifies exactly when the prompt-cache profile
renders it: values whose trailing whitespace the durable rendering strips but a following
response section keeps are sent as recorded, and a text differing from the profile's rendering
only in whitespace is refused (its durable view is sent and the record reported)."""

from typing import Any

import pytest
from lionagi import Branch
from perf._support import PNG  # type: ignore[import-not-found]

from lionagi_turns import TurnRequest
from lionagi_turns._cache_layout import RECORD_KEY
from lionagi_turns._render import render_view
from lionagi_turns.integration._cache import compile_for_prompt_cache

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
