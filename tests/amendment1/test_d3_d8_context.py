"""D3 (amended by D8) and D7's skip posture: the envelope carries ``authority``; a block is
admitted whole or skipped whole; a skipped block's marker is one line above the envelope."""

from __future__ import annotations

import json

import pytest
import yaml
from lionagi.ln import json_dumps
from lionagi.protocols.messages.instruction import InstructionContent

from lionagi_turns.amendment1 import (
    ContextBlock,
    LeftOut,
    SectionBudgets,
    decode_context_section,
    encode_context_section,
    marker,
)

from ._support import all_text, branch, compile_a1, text_of

A = ContextBlock("catalog", "first retrieved value")
B = ContextBlock("memory", "second retrieved value")


def test_the_envelope_matches_the_adrs_two_block_shape() -> None:
    assert encode_context_section((A, B)) == (
        "LIONAGI_CONTEXT_BLOCKS_JSON\n"
        '[{"authority":"material","content":"first retrieved value","provider_name":"catalog"},'
        '{"authority":"material","content":"second retrieved value","provider_name":"memory"}]\n'
        "END_LIONAGI_CONTEXT_BLOCKS_JSON"
    )
    assert decode_context_section(encode_context_section((A, B))) == (A, B)


def test_escaping_keeps_the_envelope_on_three_lines() -> None:
    section = encode_context_section((ContextBlock("p", 'a "quote"\nnew line\x01'),))
    assert len(section.split("\n")) == 3
    assert json.loads(section.split("\n")[1])[0]["content"] == 'a "quote"\nnew line\x01'


def test_blocks_fold_between_system_and_guidance() -> None:
    b = branch("policy")
    compiled = compile_a1(b, context_blocks=(A, B))
    text = text_of(compiled.messages[0])
    assert "policy\n\n  LIONAGI_CONTEXT_BLOCKS_JSON" in text
    assert compiled.bound("context").kept == ("catalog", "memory")
    assert compiled.bound("context").left_out == ()


def test_a_skipped_entry_renders_its_marker_one_line_above_the_envelope() -> None:
    b = branch("policy")
    compiled = compile_a1(
        b, context_blocks=(A,), skipped=(LeftOut("recall", "per_provider_limit"),)
    )
    lines = text_of(compiled.messages[0]).split("\n")
    at = [ln.strip() for ln in lines].index("LIONAGI_CONTEXT_BLOCKS_JSON")
    assert lines[at - 1].strip() == marker("context", 1, "per_provider_limit")
    assert compiled.bound("context").left_out == (LeftOut("recall", "per_provider_limit"),)
    # the array holds retained blocks only
    assert json.loads(lines[at + 1].strip()) == [
        {"authority": "material", "content": A.content, "provider_name": "catalog"}
    ]


def test_one_marker_per_reason_each_counting_its_entries() -> None:
    b = branch("policy")
    skipped = (
        LeftOut("x", "section_budget"),
        LeftOut("y", "per_provider_limit"),
        LeftOut("z", "section_budget"),
    )
    text = text_of(compile_a1(b, context_blocks=(A,), skipped=skipped).messages[0])
    assert marker("context", 1, "per_provider_limit") + "\n  " + marker(
        "context", 2, "section_budget"
    ) + "\n  LIONAGI_CONTEXT_BLOCKS_JSON" in text


def test_the_context_budget_admits_blocks_whole_in_order_and_skips_the_rest_whole() -> None:
    b = branch("policy")
    size_a = len(json_dumps({"authority": "material", "content": A.content,
                             "provider_name": "catalog"}, sort_keys=True))
    small = ContextBlock("tiny", "t")
    compiled = compile_a1(
        b, context_blocks=(A, B, small), budgets=SectionBudgets(context=size_a + 61)
    )
    bound = compiled.bound("context")
    assert bound.kept == ("catalog", "tiny")
    assert [(e.name, e.reason) for e in bound.left_out] == [("memory", "section_budget")]
    text = all_text(compiled)
    assert "second retrieved value" not in text  # never cut: wholly absent
    assert marker("context", 1, "section_budget") in text


def test_all_blocks_skipped_leaves_the_markers_where_the_section_would_be() -> None:
    b = branch("policy")
    compiled = compile_a1(b, context_blocks=(A,), budgets=SectionBudgets(context=0))
    text = text_of(compiled.messages[0])
    assert "LIONAGI_CONTEXT_BLOCKS_JSON" not in text
    assert "policy\n\n  " + marker("context", 1, "section_budget") in text


def test_context_compiles_on_a_systemless_branch() -> None:
    compiled = compile_a1(branch(), context_blocks=(A,))
    assert "LIONAGI_CONTEXT_BLOCKS_JSON" in text_of(compiled.messages[0])


def test_the_envelope_is_never_in_the_durable_instruction() -> None:
    compiled = compile_a1(branch("policy"), context_blocks=(A,),
                          skipped=(LeftOut("r", "section_budget"),))
    dumped = json.dumps(compiled.instruction.to_dict(), default=str)
    assert "LIONAGI" not in dumped and "retrieved" not in dumped


@pytest.mark.parametrize("bad", ['[{"content":"x","provider_name":"p"}]',
                                 '[{"authority":"operator","content":"x","provider_name":"p"}]'])
def test_decode_refuses_entries_without_material_authority(bad: str) -> None:
    with pytest.raises(ValueError):
        decode_context_section(f"LIONAGI_CONTEXT_BLOCKS_JSON\n{bad}\nEND_LIONAGI_CONTEXT_BLOCKS_JSON")


def test_a_marker_keeps_lionagis_own_rendering_of_the_fold() -> None:
    """D2 §5: the target renders with lionagi's renderer; its ``|-`` block loads back to
    exactly the fold, markers included, so a skip marker does not re-encode it."""
    firsts = []
    for skipped in ((), (LeftOut("memory", "section_budget"),)):
        b = branch("SYS")
        compiled = compile_a1(b, "Q", context_blocks=(ContextBlock("catalog", "row"),),
                              skipped=skipped)
        text = text_of(compiled.messages[0])
        guidance = yaml.safe_load(text)["Guidance"]
        assert text == InstructionContent(instruction="Q", guidance=guidance)._format_text_content()
        firsts.append(text.splitlines()[0])
    assert firsts == ["Guidance: |-", "Guidance: |-"]
