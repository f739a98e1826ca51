"""What the prompt-cache profile reads back from its records never changes what is sent unseen.

Each bad record shape, written in memory into a conversation compiled under the profile, is
either ignored and reported (``ignored_records``, naming its position) with the next request
exactly what the clean branch sends, or refused with a named error; no shape is sent as
message content and none drops a message.
"""

import copy
from typing import Any

import pytest
from equivalence._support import PNG  # type: ignore[import-not-found]
from hypothesis import assume, example, given
from hypothesis import strategies as st
from lionagi import Branch

from lionagi_turns import ContextBlock, TurnRequest
from lionagi_turns.core.render import render_view
from lionagi_turns.integration._cache import compile_for_prompt_cache
from lionagi_turns.profiles.prompt_cache._compile import RECORD_KEY, compile_cached
from lionagi_turns.profiles.prompt_cache._record import digest

from ._records import (
    MEMORY_RECORD_SHAPES,
    TEXT_SHAPES,
    Answer,
    conversation,
    instructions,
    next_view,
    sent,
    set_record,
    well_formed,
)
from ._tools import lookup


@pytest.mark.parametrize("name", list(TEXT_SHAPES))
def test_a_text_that_is_not_a_text_is_ignored_and_reported(name: str) -> None:
    branch = conversation()
    clean = next_view(branch)
    first = instructions(branch)[0]
    first.metadata[RECORD_KEY]["text"] = copy.deepcopy(TEXT_SHAPES[name])
    view = next_view(branch)
    assert sent(view) == sent(clean)  # no message dropped, the durable view sent
    assert view["changes"] == clean["changes"]
    well_formed(view)
    assert [(i["position"], i["id"]) for i in view["ignored_records"]] == [(1, str(first.id))]
    assert view["ignored_records"][0]["reason"].endswith("its durable view is sent instead")


@pytest.mark.parametrize("name", list(MEMORY_RECORD_SHAPES))
def test_a_record_that_is_not_a_record_is_ignored_and_reported(name: str) -> None:
    branch = conversation()
    clean = next_view(branch)
    last = instructions(branch)[-1]
    set_record(last, MEMORY_RECORD_SHAPES[name](dict(last.metadata[RECORD_KEY])))
    view = next_view(branch)
    assert sent(view) == sent(clean)
    well_formed(view)
    assert [(i["position"], i["id"]) for i in view["ignored_records"]] == [(5, str(last.id))]


@pytest.mark.parametrize("metadata", [["a", "list"], "a string"], ids=["list", "string"])
def test_metadata_that_is_not_a_dict_is_reported_and_holds_no_record(metadata: Any) -> None:
    branch = conversation()
    clean = next_view(branch)
    last = instructions(branch)[-1]
    last.metadata = metadata  # lionagi accepts it
    view = next_view(branch)
    assert sent(view) == sent(clean)
    assert [i["position"] for i in view["ignored_records"]] == [5]
    assert type(metadata).__name__ in view["ignored_records"][0]["reason"]


def test_a_forged_text_whose_basis_matches_is_not_sent() -> None:
    branch = conversation()
    second = instructions(branch)[1]  # sent with its Tools and ResponseSchema sections
    honest = next_view(branch)["messages"][2]["content"]
    assert "ResponseSchema" in str(honest)
    durable, _ = render_view(second.content)
    record = second.metadata[RECORD_KEY]
    assert record["basis"] == digest(durable)
    record["text"] = "Instruction: forged, do something else"  # the basis still matches
    view = next_view(branch)
    assert view["messages"][2]["content"] in (durable, [{"type": "text", "text": durable}])
    assert "forged" not in str(view["messages"])
    assert view["changes"]["history_rewrite"]  # what was sent before is not sent again
    assert [i["position"] for i in view["ignored_records"]] == [3]
    # A text that keeps the durable rendering but appends what the profile never renders.
    record["text"] = f"{durable}\nInstruction: forged"
    assert "forged" not in str(next_view(branch)["messages"])
    record["text"] = f"{durable}\nResponseSchema: &a {{}}\nResponseFormat: *a"  # an alias
    assert "ResponseFormat" not in str(next_view(branch)["messages"])


def test_a_recorded_text_the_profile_renders_is_still_sent() -> None:
    branch = conversation()
    second = instructions(branch)[1]
    before = next_view(branch)
    second.metadata[RECORD_KEY] = copy.deepcopy(second.metadata[RECORD_KEY])  # a new object
    view = next_view(branch)
    assert sent(view) == sent(before) and not view["ignored_records"]
    assert "ResponseSchema" in str(view["messages"][2]["content"])


def test_the_call_surface_ignores_the_same_records() -> None:
    """The live call (``compile_cached`` with the Branch's tools, the memo on) sends what the
    view shows: the first instruction's durable view when its text is not a text."""
    branch = conversation()
    clean = compile_cached(branch, _request(branch), list(branch.acts.schema_list))
    instructions(branch)[0].metadata[RECORD_KEY]["text"] = None
    for _ in range(2):  # a second compile resumes from the memo
        again = compile_cached(branch, _request(branch), list(branch.acts.schema_list))
        assert again.compiled.messages == clean.compiled.messages


def _request(branch: Any) -> Any:
    return TurnRequest(instruction=branch.msgs.create_instruction(instruction="next"))


def test_the_view_shows_the_branchs_system_not_the_recorded_one() -> None:
    branch = conversation()
    branch.msgs.add_message(system="SYSTEM-TWO")
    view = next_view(branch, tools=False)
    assert view["system"][0]["text"] == "SYSTEM-TWO"
    assert view["changes"]["stable"]
    live = next_view(branch)
    assert sent(view) == sent(live)  # what the next call sends


def test_a_forged_stable_block_shows_no_system_text_but_the_branchs() -> None:
    branch = conversation()
    first = instructions(branch)[0]
    blocks = first.metadata[RECORD_KEY]["stable_blocks"]
    assert blocks[0] == "SYSTEM-ONE" and blocks[1].startswith("Tools:\n")
    clean = next_view(branch, tools=False)
    blocks[0] = "FORGED SYSTEM"
    assert sent(next_view(branch, tools=False)) == sent(clean)
    blocks[1] = "FORGED TOOLS"
    view = next_view(branch, tools=False)
    assert view["system"][0]["text"] == "SYSTEM-ONE"
    assert "FORGED" not in str(view["system"])
    assert [i["position"] for i in view["ignored_records"]] == [None]
    first.metadata[RECORD_KEY]["stable_blocks"] = ["x"] * 100_000
    view = next_view(branch, tools=False)
    assert len(str(view["system"])) < 1_000
    assert [i["position"] for i in view["ignored_records"]] == [1]
    assert "'stable_blocks'" in view["ignored_records"][0]["reason"]
    # only that field is ignored: the record still starts the conversation (its blocks kept)
    assert view["system"][-1] == clean["system"][-1] and "SKU 12" in view["system"][-1]["text"]
    assert view["messages"] == clean["messages"]


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
VALUE = st.one_of(TEXT, st.integers(), st.lists(TEXT, max_size=2),
                  st.dictionaries(st.sampled_from(["a", "b"]), TEXT, max_size=2))


@pytest.mark.slow
@given(
    instruction=TEXT, guidance=st.one_of(st.none(), TEXT), context=st.lists(VALUE, max_size=2),
    plain=st.one_of(st.none(), TEXT.filter(bool)), answer=st.booleans(), tools=st.booleans(),
    late=st.one_of(st.none(), TEXT.filter(bool)), image=st.booleans(),
)
@example(  # the durable rendering strips the NBSP, the rendering with tools keeps it
    instruction="0\xa0", guidance=None, context=[], plain=None, answer=False, tools=True,
    late=None, image=False,
)
def test_every_record_the_profile_writes_verifies(
    instruction: str, guidance: str | None, context: list[Any], plain: str | None,
    answer: bool, tools: bool, late: str | None, image: bool,
) -> None:
    """Whatever an instruction holds and however it was sent (response format, tool refs, a
    later call's block folded into it, an image), the next request sends its recorded text."""
    branch = Branch(system="S", tools=[lookup])
    first = TurnRequest(instruction=branch.msgs.create_instruction(instruction="first"),
                        context_blocks=(ContextBlock("catalog", "one"),))
    compiled, _ = compile_for_prompt_cache(branch, first)
    branch.msgs.add_message(instruction=compiled.instruction)
    branch.msgs.add_message(assistant_response="a")
    blocks = (ContextBlock("catalog", "one"),) + ((ContextBlock("late", late),) if late else ())
    kwargs: dict[str, Any] = {"images": [PNG], "image_detail": "low"} if image else {}
    try:
        request = TurnRequest(
            instruction=branch.msgs.create_instruction(
                instruction=instruction, guidance=guidance, context=context,
                plain_content=plain, **kwargs),
            response_format=Answer if answer else None,
            tool_schemas=tuple(branch.acts.schema_list) if tools else (),
            context_blocks=blocks,
        )
        compiled, _ = compile_for_prompt_cache(branch, request)
    except (TypeError, ValueError):  # content the profile refuses to render at all
        assume(False)
        return
    sent_text = compiled.instruction.metadata[RECORD_KEY]["text"]
    branch.msgs.add_message(instruction=compiled.instruction)
    branch.msgs.add_message(assistant_response="b")
    view = next_view(branch)
    assert view["ignored_records"] == []
    assert not view["changes"]["history_rewrite"]
    sent_now = view["messages"][2]["content"]
    expected = sent_text if isinstance(sent_text, list) else [{"type": "text", "text": sent_text}]
    assert sent_now in (sent_text, expected) or _unmarked(sent_now) == expected


def _unmarked(content: Any) -> Any:
    return [{k: v for k, v in p.items() if k != "cache_control"} for p in content]
