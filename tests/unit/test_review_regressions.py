"""Regressions for defects found in review; each test names the defect it pins down."""

from __future__ import annotations

import copy

import pytest
from lionagi import Branch
from lionagi.libs.schema.minimal_yaml import minimal_yaml as lionagi_minimal_yaml

from lionagi_turns import ContextBlock, TurnRequest, compile_chat_request
from lionagi_turns._fast.yaml import minimal_yaml

from ._support import add_assistant, add_instruction, assert_same_state, branch, branch_state

PNG = "data:image/png;base64,iVBORw0KGgo="


@pytest.mark.parametrize("length", [121, 122, 123, 125, 127, 128])
@pytest.mark.parametrize("tail", ["", "é"])
def test_fast_yaml_matches_lionagi_for_keys_of_123_to_127_characters(
    length: int, tail: str
) -> None:
    # PyYAML counts a key's characters plus its 5-character "!!str" tag and writes keys of 123+
    # characters as explicit "? key"; libyaml allowed up to 127 bytes, so the fast path wrote a
    # simple key where lionagi writes a complex one.
    key = "k" * (length - len(tail)) + tail
    for value in ({key: 1}, [{key: "v"}], {"Context": [{key: {"a": 1}}]}):
        assert minimal_yaml(value) == lionagi_minimal_yaml(value)


def test_compiled_history_with_a_long_context_key_renders_as_lionagi_renders_it() -> None:
    b = branch("Sys")
    context = [{"q" * 124: 1}]
    add_instruction(b, "first", context=context)
    add_assistant(b)
    ins = b.msgs.create_instruction(instruction="now", context=context)
    compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    rendered = [m.content for m in compiled.messages]
    assert rendered[1] == "answer"
    expected = lionagi_minimal_yaml({"Instruction": "now", "Context": context}).strip()
    assert rendered[2] == expected
    assert "? " + "q" * 124 in rendered[2]


@pytest.mark.parametrize("field", ["provider_name", "content"])
def test_context_block_with_a_lone_surrogate_is_a_named_value_error(field: str) -> None:
    # Before: accepted, then compile raised orjson's bare TypeError without naming the block.
    values = {"provider_name": "memory", "content": "text"}
    values[field] = "bad \ud800 text"
    with pytest.raises(ValueError, match=rf"ContextBlock\.{field} .*lone surrogate at index 4"):
        ContextBlock(**values)


@pytest.mark.parametrize(
    "url", ["http:///no-host.png", "file:///etc/passwd", "data:text/html;base64,PHNjcmlwdD4="]
)
def test_refused_history_image_names_the_record_position_and_id(url: str) -> None:
    b = branch("Sys")
    add_instruction(b, "first")
    add_assistant(b)
    bad = add_instruction(b, "second", images=[url])
    add_assistant(b)
    before = branch_state(b)
    ins = b.msgs.create_instruction(instruction="now")
    with pytest.raises(ValueError, match=rf"history position 3, instruction id {bad.id}"):
        compile_chat_request(b, TurnRequest(instruction=ins))
    assert_same_state(before, branch_state(b))


def test_refused_current_image_names_the_current_instruction() -> None:
    b = branch("Sys")
    ins = b.msgs.create_instruction(instruction="now", images=["file:///etc/passwd"])
    with pytest.raises(ValueError, match=rf"(?s)^Image URL .*current instruction, id {ins.id}"):
        compile_chat_request(b, TurnRequest(instruction=ins))


@pytest.mark.parametrize("where", ["instruction", "context"])
def test_a_quoted_copy_of_the_section_does_not_stand_in_for_the_fold(where: str) -> None:
    # Before: the check that the fold kept the D3 section on its own lines also accepted a copy
    # of the section in the Instruction or Context block, so with trailing spaces in the system
    # text the real fold went out as one double-quoted line.
    from lionagi_turns._envelope import encode_context_section, find_context_section

    blocks = (ContextBlock(provider_name="memory", content="fact"),)
    section = encode_context_section(blocks)
    quoted = f"Quote this back:\n{section}\nthanks"
    b = branch("Sys  ")
    if where == "instruction":
        ins = b.msgs.create_instruction(instruction=quoted)
    else:
        ins = b.msgs.create_instruction(instruction="now", context=[quoted])
    compiled = compile_chat_request(b, TurnRequest(instruction=ins, context_blocks=blocks))
    text = compiled.messages[0].content
    assert isinstance(text, str)
    guidance = text.split("\nInstruction:", 1)[0]
    assert find_context_section(guidance) == section, text
    assert '\\nLIONAGI_CONTEXT_BLOCKS_JSON\\n' not in text


# Unordered collections would make the compiled order depend on hash seeds.


@pytest.mark.parametrize("name", ["progression", "context_blocks", "tool_schemas"])
@pytest.mark.parametrize("kind", [set, frozenset])
def test_unordered_collections_are_refused_by_name(name: str, kind: type) -> None:
    b = Branch(system="s")
    ins = b.msgs.create_instruction(instruction="q")
    with pytest.raises(TypeError, match=rf"TurnRequest\.{name} must be an ordered sequence"):
        TurnRequest(instruction=ins, **{name: kind()})


def test_a_dict_is_not_taken_for_its_keys_as_a_progression() -> None:
    b = Branch(system="s")
    ins = b.msgs.create_instruction(instruction="q")
    with pytest.raises(
        TypeError, match=r"TurnRequest\.progression must be None or a sequence of UUIDs, got a "
        r"single dict"
    ):
        TurnRequest(instruction=ins, progression={ins.id: 1})  # type: ignore[arg-type]


# copy.deepcopy of the contracts (a MappingProxyType cannot be deep-copied by copy itself).


def test_deepcopy_of_a_request_and_a_compiled_request_is_equal_and_independent() -> None:
    b = Branch(system="s")
    ins = b.msgs.create_instruction(instruction="q", images=[PNG])
    request = TurnRequest(
        instruction=ins,
        provider_kwargs={"temperature": 0.2, "extra": {"k": [1]}},
        context_blocks=(ContextBlock("p", "v"),),
    )
    clone = copy.deepcopy(request)
    assert clone == request and clone.instruction is not request.instruction
    compiled = compile_chat_request(b, request)
    twin = copy.deepcopy(compiled)
    assert twin.messages == compiled.messages
    assert twin.messages[-1].content is not compiled.messages[-1].content
    assert dict(twin.provider_kwargs) == {"temperature": 0.2, "extra": {"k": [1]}}
    assert twin.provider_kwargs["extra"] is not compiled.provider_kwargs["extra"]


# Falsy guidance is absent from the fold, as in lionagi's own fold (`guidance or ""`).


@pytest.mark.parametrize("falsy", [{}, [], 0])
def test_falsy_non_string_guidance_adds_nothing_to_the_fold(falsy: object) -> None:
    b = Branch(system="Sys")
    ins = b.msgs.create_instruction(instruction="q")
    ins.content.guidance = falsy
    compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    text = compiled.messages[0].content
    assert isinstance(text, str)
    assert text.startswith("Guidance: Sys\nInstruction: q")


def test_a_provider_kwarg_that_cannot_be_copied_is_named() -> None:
    import threading

    b = Branch(system="s")
    ins = b.msgs.create_instruction(instruction="q")
    with pytest.raises(TypeError, match=r"provider_kwargs\['lock'\] \(lock\) cannot be"):
        TurnRequest(instruction=ins, provider_kwargs={"temperature": 0, "lock": threading.Lock()})
