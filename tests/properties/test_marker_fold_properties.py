"""Amendment 1's fold with skip markers (D7) above the D3 envelope: lionagi's own rendering of
the fold target is what the compiler sends exactly when it round-trips, markers included.

"Round-trips" is read here with PyYAML and plain line search, independently of the compiler's
encoding ladder: lionagi's text (``InstructionContent._format_text_content`` with the fold as
guidance) loads back to a ``Guidance`` equal to the fold, and the context section's lines
(markers and envelope) stand in it as consecutive whole lines with one indentation.
"""

from __future__ import annotations

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st
from lionagi import Branch
from lionagi.protocols.messages.instruction import InstructionContent
from unit._support import text_of

from lionagi_turns import amendment1 as am
from lionagi_turns.profiles.amendment1._sections import context_section

SYSTEM_CHARS = st.characters(blacklist_categories=("Cs",)) | st.sampled_from(
    ["\n", "\t", " ", "\r", "\x85", "\u2028", "\x7f", "\ufeff", "#", ":", "'", '"']
)
SYSTEM = st.text(SYSTEM_CHARS, max_size=30).filter(lambda t: t.strip() != "")
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20)
BLOCKS = st.lists(st.builds(am.ContextBlock, provider_name=TEXT, content=TEXT), max_size=2)
SKIPPED = st.lists(
    st.builds(am.LeftOut, name=TEXT, reason=st.sampled_from(["per_provider_limit",
                                                             "section_budget"])),
    min_size=1,
    max_size=3,
)
GUIDANCE = st.none() | st.text(SYSTEM_CHARS, min_size=1, max_size=15).filter(
    lambda t: t.strip() != ""
)


def _round_trips(text: str, fold: str, section: str) -> bool:
    try:
        loaded = yaml.load(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return False
    if not isinstance(loaded, dict) or loaded.get("Guidance") != fold:
        return False
    lines = section.split("\n")
    padded = f"\n{text}\n"
    return any(
        "\n" + "\n".join(indent + line for line in lines) + "\n" in padded
        for indent in ("", "  ")
    )


@pytest.mark.slow
@given(system=SYSTEM, blocks=BLOCKS, skipped=SKIPPED, guidance=GUIDANCE)
@example(system="SYS", blocks=[am.ContextBlock("catalog", "row")],
         skipped=[am.LeftOut("memory", "section_budget")], guidance=None)
@example(system="SYS\x85", blocks=[am.ContextBlock("catalog", "row")],
         skipped=[am.LeftOut("memory", "section_budget")], guidance=None)
def test_lionagis_rendering_is_chosen_iff_it_round_trips_with_the_markers(
    system: str, blocks: list[am.ContextBlock], skipped: list[am.LeftOut], guidance: str | None
) -> None:
    b = Branch(system=system)
    assert b.msgs.system is not None
    current = b.msgs.create_instruction(instruction="Q", guidance=guidance)
    request = am.TurnRequest(
        instruction=current, context_blocks=tuple(blocks), skipped=tuple(skipped)
    )
    sent = text_of(am.compile_chat_request(b, request).messages[0])

    section = context_section(blocks, skipped)
    assert section.startswith("[LIONAGI_SECTION_TRUNCATED section=context left_out=")
    fold = "\n\n".join(p for p in (b.msgs.system.rendered, section, guidance or "") if p)
    lionagis = InstructionContent(instruction="Q", guidance=fold)._format_text_content()

    assert (sent == lionagis) == _round_trips(lionagis, fold, section)
    if sent != lionagis:  # the hand-written ladder still carries the fold exactly
        assert sent.startswith(f"{fold}\n\n") or yaml.safe_load(sent)["Guidance"] == fold
