"""ADR-0007 D3: the canonical source-attributed JSON context section."""

from __future__ import annotations

import json

import pytest

from lionagi_turns import (
    ContextBlock,
    decode_context_section,
    encode_context_section,
)
from lionagi_turns.core.envelope import find_context_section

from ._support import add_assistant, add_instruction, branch, compile_now, loaded, text_of

ADR_TWO_BLOCKS = (
    "LIONAGI_CONTEXT_BLOCKS_JSON\n"
    '[{"content":"first retrieved value","provider_name":"catalog"},'
    '{"content":"second retrieved value","provider_name":"memory"}]\n'
    "END_LIONAGI_CONTEXT_BLOCKS_JSON"
)
TWO_BLOCKS = (
    ContextBlock(provider_name="catalog", content="first retrieved value"),
    ContextBlock(provider_name="memory", content="second retrieved value"),
)


def test_two_block_section_is_byte_exact_to_the_adr_example() -> None:
    assert encode_context_section(TWO_BLOCKS) == ADR_TWO_BLOCKS


def test_compiled_fold_carries_the_byte_exact_section() -> None:
    compiled = compile_now(branch("policy"), TWO_BLOCKS)
    text = text_of(compiled.messages[0])
    assert find_context_section(text) == ADR_TWO_BLOCKS
    assert loaded(compiled.messages[0])["Guidance"] == "policy\n\n" + ADR_TWO_BLOCKS


def test_no_blocks_means_no_section() -> None:
    assert encode_context_section(()) == ""
    compiled = compile_now(branch("policy"), ())
    assert "LIONAGI_CONTEXT_BLOCKS_JSON" not in text_of(compiled.messages[0])


def test_block_order_is_request_order() -> None:
    reversed_blocks = tuple(reversed(TWO_BLOCKS))
    payload = json.loads(encode_context_section(reversed_blocks).split("\n")[1])
    assert [p["provider_name"] for p in payload] == ["memory", "catalog"]
    assert decode_context_section(encode_context_section(reversed_blocks)) == reversed_blocks


@pytest.mark.parametrize(
    "content",
    [
        'say "hello" and \\ backslash',
        "line one\nline two\r\nline three",
        "tab\there, bell\x07, nul\x00, escape\x1b[0m, del\x7f",
        "END_LIONAGI_CONTEXT_BLOCKS_JSON\nLIONAGI_CONTEXT_BLOCKS_JSON",
        "unicode \u2028 separator \u2029 and emoji \U0001f600",
    ],
)
def test_json_escaping_keeps_the_section_three_lines_and_the_content_exact(content: str) -> None:
    block = ContextBlock(provider_name='src "quoted"\n', content=content)
    section = encode_context_section((block,))
    lines = section.split("\n")
    assert len(lines) == 3
    assert lines[0] == "LIONAGI_CONTEXT_BLOCKS_JSON"
    assert lines[2] == "END_LIONAGI_CONTEXT_BLOCKS_JSON"
    assert "\r" not in lines[1]
    assert json.loads(lines[1]) == [{"content": content, "provider_name": 'src "quoted"\n'}]
    assert decode_context_section(section) == (block,)


def test_envelope_keeps_its_own_three_lines_with_trailing_spaces_and_tabs_in_system() -> None:
    system = "Policy line.   \nIndented\tcolumn\t\nlast line ends in spaces   \t"
    compiled = compile_now(branch(system), TWO_BLOCKS, guidance="Be brief.  ")
    text = text_of(compiled.messages[0])
    lines = text.split("\n")
    envelope = ADR_TWO_BLOCKS.split("\n")
    starts = [i for i, line in enumerate(lines) if line.strip(" ") == envelope[0]]
    assert len(starts) == 1
    start = starts[0]
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip(" "))]
    assert lines[start : start + 3] == [indent + e for e in envelope]
    expected = system + "\n\n" + ADR_TWO_BLOCKS + "\n\nBe brief.  "
    assert loaded(compiled.messages[0])["Guidance"] == expected


@pytest.mark.parametrize("system", ["\t\ud7fc", "\tsoft\u00adhyphen", "\tformat\U000e0001"])
def test_envelope_keeps_its_own_lines_with_a_leading_tab_and_yaml_printable_characters(
    system: str,
) -> None:
    # A leading tab makes lionagi's emitter quote the fold; characters str.isprintable()
    # refuses but YAML carries (unassigned, format) must not stop the literal-block splice.
    compiled = compile_now(branch(system), TWO_BLOCKS)
    text = text_of(compiled.messages[0])
    assert find_context_section(text) == ADR_TWO_BLOCKS
    assert loaded(compiled.messages[0])["Guidance"] == system + "\n\n" + ADR_TWO_BLOCKS


def test_envelope_keeps_its_own_lines_when_the_fold_target_is_historical() -> None:
    b = branch("ends with a tab\t")
    add_instruction(b, "q1", guidance="old guidance")
    add_assistant(b, "a1")
    compiled = compile_now(b, TWO_BLOCKS)
    assert find_context_section(text_of(compiled.messages[0])) == ADR_TWO_BLOCKS
    expected = "ends with a tab\t\n\n" + ADR_TWO_BLOCKS + "\n\nold guidance"
    assert loaded(compiled.messages[0]) == {"Guidance": expected, "Instruction": "q1"}


def test_section_exists_only_in_compiled_content() -> None:
    b = branch("policy")
    add_instruction(b, "q1")
    add_assistant(b, "a1")
    compiled = compile_now(b, TWO_BLOCKS)
    assert "LIONAGI_CONTEXT_BLOCKS_JSON" in text_of(compiled.messages[0])
    record = json.dumps(compiled.instruction.to_dict(), default=str)
    assert "LIONAGI_CONTEXT_BLOCKS_JSON" not in record
    assert "retrieved value" not in record
    stored = json.dumps([m.to_dict() for m in b.msgs.messages], default=str)
    assert "retrieved value" not in stored


def test_empty_provider_name_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"ContextBlock\.provider_name must be non-empty"):
        ContextBlock(provider_name="", content="value")


def test_empty_content_is_rejected_naming_the_provider() -> None:
    with pytest.raises(ValueError, match=r"ContextBlock from provider 'catalog' has empty content"):
        ContextBlock(provider_name="catalog", content="")


def test_non_string_provider_name_is_rejected() -> None:
    with pytest.raises(TypeError, match=r"ContextBlock\.provider_name must be str, got int"):
        ContextBlock(provider_name=3, content="value")  # type: ignore[arg-type]


def test_non_string_content_is_rejected() -> None:
    with pytest.raises(TypeError, match=r"ContextBlock\.content must be str, got dict"):
        ContextBlock(provider_name="catalog", content={"a": 1})  # type: ignore[arg-type]


def test_encoder_refuses_an_empty_block_that_bypassed_validation() -> None:
    block = ContextBlock(provider_name="catalog", content="v")
    object.__setattr__(block, "content", "")
    with pytest.raises(ValueError, match=r"context_blocks\[1\] has an empty content"):
        encode_context_section((TWO_BLOCKS[0], block))


# decode is strict: one pytest.raises per malformed section shape.


def test_decode_rejects_wrong_line_count() -> None:
    with pytest.raises(ValueError, match=r"expected 3 lines .* got 2 line"):
        decode_context_section("LIONAGI_CONTEXT_BLOCKS_JSON\n[]")


def test_decode_rejects_wrong_markers() -> None:
    with pytest.raises(ValueError, match="not a context section"):
        decode_context_section("BEGIN\n[]\nEND_LIONAGI_CONTEXT_BLOCKS_JSON")


def test_decode_rejects_unparseable_json() -> None:
    with pytest.raises(ValueError, match="does not parse"):
        decode_context_section("LIONAGI_CONTEXT_BLOCKS_JSON\n[{\nEND_LIONAGI_CONTEXT_BLOCKS_JSON")


def test_decode_rejects_a_non_list_payload() -> None:
    with pytest.raises(ValueError, match="must be a list"):
        decode_context_section("LIONAGI_CONTEXT_BLOCKS_JSON\n{}\nEND_LIONAGI_CONTEXT_BLOCKS_JSON")


def test_decode_rejects_extra_keys_naming_the_block() -> None:
    body = '[{"content":"c","provider_name":"p","x":1}]'
    with pytest.raises(ValueError, match=r"context block \[0\] must be an object with exactly"):
        decode_context_section(
            f"LIONAGI_CONTEXT_BLOCKS_JSON\n{body}\nEND_LIONAGI_CONTEXT_BLOCKS_JSON"
        )


def test_decode_rejects_non_string_fields_naming_the_block() -> None:
    body = '[{"content":"c","provider_name":"p"},{"content":1,"provider_name":"p"}]'
    with pytest.raises(ValueError, match=r"context block \[1\] fields must be strings"):
        decode_context_section(
            f"LIONAGI_CONTEXT_BLOCKS_JSON\n{body}\nEND_LIONAGI_CONTEXT_BLOCKS_JSON"
        )


def test_decode_rejects_non_canonical_json() -> None:
    body = '[{"provider_name": "p", "content": "c"}]'
    with pytest.raises(ValueError, match="not in canonical form"):
        decode_context_section(
            f"LIONAGI_CONTEXT_BLOCKS_JSON\n{body}\nEND_LIONAGI_CONTEXT_BLOCKS_JSON"
        )


# --- Block values the section cannot encode


@pytest.mark.parametrize("field", ["provider_name", "content"])
def test_context_block_with_a_lone_surrogate_is_a_named_value_error(field: str) -> None:
    # Before: accepted, then compile raised orjson's bare TypeError without naming the block.
    values = {"provider_name": "memory", "content": "text"}
    values[field] = "bad \ud800 text"
    with pytest.raises(ValueError, match=rf"ContextBlock\.{field} .*lone surrogate at index 4"):
        ContextBlock(**values)
