"""ADR-0007 D2 step 4: fold system, context section and guidance into one instruction."""

from __future__ import annotations

import pytest
from lionagi import Branch
from lionagi.libs.schema.minimal_yaml import minimal_yaml
from lionagi.protocols.messages.instruction import InstructionContent

from lionagi_turns import ContextBlock, TurnRequest, compile_chat_request, encode_context_section
from lionagi_turns.core.envelope import find_context_section

from ._support import add_assistant, add_instruction, branch, compile_now, loaded, text_of

BLOCKS = (
    ContextBlock(provider_name="catalog", content="first retrieved value"),
    ContextBlock(provider_name="memory", content="second retrieved value"),
)
SECTION = encode_context_section(BLOCKS)


def test_system_context_and_guidance_are_joined_by_exactly_two_newlines() -> None:
    b = branch("System policy.")
    compiled = compile_now(b, blocks=BLOCKS, guidance="Be brief.")
    guidance = loaded(compiled.messages[0])["Guidance"]
    assert guidance == "System policy.\n\n" + SECTION + "\n\nBe brief."


def test_system_rendered_text_is_what_folds() -> None:
    b = branch("System policy.")
    assert b.msgs.system is not None
    compiled = compile_now(b, guidance="g")
    assert loaded(compiled.messages[0])["Guidance"] == b.msgs.system.rendered + "\n\ng"


def test_system_alone_becomes_the_guidance() -> None:
    compiled = compile_now(branch("System policy."))
    assert loaded(compiled.messages[0]) == {"Guidance": "System policy.", "Instruction": "now"}


def test_system_and_context_without_guidance() -> None:
    compiled = compile_now(branch("System policy."), blocks=BLOCKS)
    assert loaded(compiled.messages[0])["Guidance"] == "System policy.\n\n" + SECTION


def test_context_compiles_on_a_systemless_branch() -> None:
    compiled = compile_now(branch(), blocks=BLOCKS, guidance="Be brief.")
    assert loaded(compiled.messages[0])["Guidance"] == SECTION + "\n\nBe brief."


def test_non_string_guidance_renders_through_minimal_yaml_before_joining() -> None:
    guidance = {"style": "terse", "rules": ["cite", "no guessing"]}
    compiled = compile_now(branch("System policy."), guidance=guidance)
    expected = "System policy.\n\n" + minimal_yaml(guidance).strip()
    assert loaded(compiled.messages[0])["Guidance"] == expected


def test_fold_applies_to_the_first_retained_instruction() -> None:
    b = branch("System policy.")
    add_instruction(b, "q1", guidance="old guidance")
    add_assistant(b, "a1")
    add_instruction(b, "q2", guidance="second guidance")
    add_assistant(b, "a2")
    compiled = compile_now(b, blocks=BLOCKS, guidance="current guidance")
    first, second, current = (loaded(compiled.messages[i]) for i in (0, 2, 4))
    assert first["Guidance"] == "System policy.\n\n" + SECTION + "\n\nold guidance"
    assert second["Guidance"] == "second guidance"
    assert current["Guidance"] == "current guidance"


def test_fold_applies_to_the_first_instruction_of_a_selected_view() -> None:
    b = branch("System policy.")
    add_instruction(b, "q1")
    add_assistant(b, "a1")
    i2 = add_instruction(b, "q2")
    a2 = add_assistant(b, "a2")
    compiled = compile_now(b, progression=(i2.id, a2.id))
    assert loaded(compiled.messages[0]) == {"Guidance": "System policy.", "Instruction": "q2"}
    assert "Guidance" not in loaded(compiled.messages[-1])


def test_fold_applies_to_the_current_instruction_without_history() -> None:
    b = branch("System policy.")
    add_instruction(b, "q1")
    add_assistant(b, "a1")
    compiled = compile_now(b, progression=(), blocks=BLOCKS, guidance="g")
    (only,) = compiled.messages
    assert loaded(only)["Guidance"] == "System policy.\n\n" + SECTION + "\n\ng"


def test_without_system_or_context_guidance_renders_as_lionagi_renders_it() -> None:
    guidance = {"style": "terse"}
    compiled = compile_now(branch(), guidance=guidance)
    expected = InstructionContent(instruction="now", guidance=guidance).rendered  # type: ignore[arg-type]
    assert compiled.messages[0].content == expected


def test_the_fold_is_not_recorded_on_the_compiled_instruction() -> None:
    b = branch("System policy.")
    compiled = compile_now(b, blocks=BLOCKS, guidance="g")
    assert compiled.instruction.content.guidance == "g"
    record = str(compiled.instruction.to_dict())
    assert "System policy." not in record
    assert "LIONAGI_CONTEXT_BLOCKS_JSON" not in record
    assert "retrieved value" not in record


# The fold plan: computed once, its encoding decided by the round-trip check.


def test_nel_in_the_system_sends_the_fold_first_regression() -> None:
    # Regression (issue 8): lionagi's own emitter writes this fold as a `|-` block holding
    # the section's three lines, but YAML reads NEL back as a line feed, so the Guidance did
    # not load back to the fold. The round-trip check now sends it to the verbatim fold-first
    # encoding (registry entry fold-first), which keeps the section and the text exact.
    import yaml

    from lionagi_turns.core.pipeline import compile_traced

    block = (ContextBlock(provider_name="p", content="c"),)
    section = encode_context_section(block)
    b = branch("0\x85")
    ins = b.msgs.create_instruction(instruction="now")
    trace = compile_traced(b, TurnRequest(instruction=ins, context_blocks=block))
    assert trace.fold is not None and trace.fold.encoding == "fold-first"
    fold = f"0\x85\n\n{section}"
    text = trace.compiled.messages[0].content
    assert text == f"{fold}\n\nInstruction: now"
    # lionagi's emitter output is what the check refused: it does not load back.
    emitted = minimal_yaml({"Guidance": fold})
    assert yaml.safe_load(emitted)["Guidance"] != fold


def test_fold_plan_names_target_parts_and_encoding() -> None:
    from lionagi_turns.core.pipeline import compile_traced

    b = branch("System policy.")
    add_instruction(b, "q", guidance="Be brief.")
    add_assistant(b, "a")
    ins = b.msgs.create_instruction(instruction="now")
    trace = compile_traced(b, TurnRequest(instruction=ins, context_blocks=BLOCKS))
    plan = trace.fold
    assert plan is not None
    assert plan.target == 0  # the first retained instruction turn
    assert (plan.parts.system, plan.parts.context, plan.parts.guidance) == (
        "System policy.",
        SECTION,
        "Be brief.",
    )
    assert plan.encoding == "emitter"
    assert plan.rendered == trace.compiled.messages[0].content
    assert trace.fold_message_index == 0
    assert [p.folded for p in trace.rendered] == [True, False, False]


def test_nothing_is_planned_without_a_system_or_context() -> None:
    from lionagi_turns.core.pipeline import compile_traced

    b = branch()
    ins = b.msgs.create_instruction(instruction="now", guidance="g")
    trace = compile_traced(b, TurnRequest(instruction=ins))
    assert trace.fold is None and trace.fold_message_index is None
    assert trace.parts.sections() == [("guidance", "g")]


def test_trailing_spaces_take_the_literal_block_encoding() -> None:
    from lionagi_turns.core.pipeline import compile_traced

    b = branch("policy   ")  # lionagi's emitter would double-quote it
    ins = b.msgs.create_instruction(instruction="now")
    trace = compile_traced(b, TurnRequest(instruction=ins, context_blocks=BLOCKS))
    assert trace.fold is not None and trace.fold.encoding == "literal"
    assert loaded(trace.compiled.messages[0])["Guidance"] == f"policy   \n\n{SECTION}"


# --- Encodings that keep the D3 section on its own lines; falsy guidance

ONE_BLOCK = ContextBlock(provider_name="catalog", content="retrieved")
ONE_SECTION = encode_context_section((ONE_BLOCK,))


@pytest.mark.parametrize("system", ["line one\r\nline two", "bell\x07 in policy"])
def test_envelope_keeps_its_lines_with_carriage_returns_or_controls_in_system(system: str) -> None:
    compiled = compile_now(branch(system), blocks=(ONE_BLOCK,))
    text = text_of(compiled.messages[0])
    assert find_context_section(text) == ONE_SECTION
    assert text == f"{system}\n\n{ONE_SECTION}\n\nInstruction: now"


@pytest.mark.parametrize("char", ["\x7f", "\x9b", "\x85", "\u2028"])
def test_envelope_is_byte_exact_with_any_character_in_block_content(char: str) -> None:
    block = ContextBlock(provider_name="web", content=f"a{char}b")
    compiled = compile_now(branch("policy"), blocks=(block,))
    text = text_of(compiled.messages[0])
    section = encode_context_section((block,))
    assert find_context_section(text) == section
    assert text == f"policy\n\n{section}\n\nInstruction: now"


@pytest.mark.parametrize("where", ["instruction", "context"])
def test_a_quoted_copy_of_the_section_does_not_stand_in_for_the_fold(where: str) -> None:
    # Before: the check that the fold kept the D3 section on its own lines also accepted a copy
    # of the section in the Instruction or Context block, so with trailing spaces in the system
    # text the real fold went out as one double-quoted line.
    from lionagi_turns.core.envelope import encode_context_section, find_context_section

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


@pytest.mark.parametrize("falsy", [{}, [], 0])
def test_falsy_non_string_guidance_adds_nothing_to_the_fold(falsy: object) -> None:
    b = Branch(system="Sys")
    ins = b.msgs.create_instruction(instruction="q")
    ins.content.guidance = falsy
    compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    text = compiled.messages[0].content
    assert isinstance(text, str)
    assert text.startswith("Guidance: Sys\nInstruction: q")
