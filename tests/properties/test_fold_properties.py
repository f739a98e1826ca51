"""Hypothesis properties of the D2 step 4 fold and the D3 envelope on real Branches.

For random system texts (any text but surrogates, including CR, controls and Unicode line
separators), random context blocks (any text) and random guidance, the compiled first
instruction either

- loads back (YAML) to a Guidance that is exactly system, section and guidance joined by
  "\\n\\n", or
- when YAML cannot carry that fold intact, starts with the fold verbatim followed by a blank
  line (docs/architecture.md decision 4);

and in both cases holds the D3 section byte-exact as three lines of its own, once, and the
section decodes back to the request's blocks, in order.
"""

from __future__ import annotations

import pytest
import yaml
from hypothesis import Phase, example, given, settings
from hypothesis import strategies as st
from lionagi import Branch
from lionagi.libs.schema.minimal_yaml import minimal_yaml
from unit._support import text_of

from lionagi_turns import (
    ContextBlock,
    TurnRequest,
    compile_chat_request,
    decode_context_section,
    encode_context_section,
)
from lionagi_turns.core.fold import holds_section

SYSTEM_CHARS = st.characters(blacklist_categories=("Cs",)) | st.sampled_from(
    ["\n", "\t", " ", "\r", "\x85", "\u2028", "\x7f", "\ufeff"]
)
SYSTEM = st.text(SYSTEM_CHARS, max_size=40).filter(lambda t: t.strip() != "")
BLOCK_TEXT = st.text(
    st.characters(blacklist_categories=("Cs",)) | st.sampled_from(["\u2028", "\x85", "\x9b"]),
    min_size=1,
    max_size=40,
)
BLOCKS = st.lists(
    st.builds(ContextBlock, provider_name=BLOCK_TEXT, content=BLOCK_TEXT),
    min_size=1,
    max_size=3,
)
GUIDANCE = st.one_of(
    st.none(),
    st.text(SYSTEM_CHARS, min_size=1, max_size=20).filter(lambda t: t.strip() != ""),
    st.dictionaries(
        st.sampled_from(["style", "rules"]), st.sampled_from(["terse", "cite"]), min_size=1
    ),
)


@pytest.mark.slow
@settings(phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink])
@given(system=SYSTEM, blocks=BLOCKS, guidance=GUIDANCE, historical=st.booleans())
# The NEL case that once failed intermittently (lionagi's `|-` block reads NEL back as LF).
@example(system="0\x85", blocks=[ContextBlock("0", "0")], guidance=None, historical=False)
def test_fold_loads_back_exactly_and_keeps_the_envelope_on_its_own_lines(
    system: str, blocks: list[ContextBlock], guidance: object, historical: bool
) -> None:
    b = Branch(system=system)
    assert b.msgs.system is not None
    if historical:
        b.msgs.add_message(instruction="earlier", guidance=guidance)
        b.msgs.add_message(assistant_response="reply")
        current = b.msgs.create_instruction(instruction="now")
    else:
        current = b.msgs.create_instruction(instruction="now", guidance=guidance)
    compiled = compile_chat_request(
        b, TurnRequest(instruction=current, context_blocks=tuple(blocks))
    )
    target = compiled.messages[0]
    section = encode_context_section(blocks)
    guidance_text = (
        ""
        if guidance is None
        else guidance
        if isinstance(guidance, str)
        else minimal_yaml(guidance).strip()
    )
    expected = "\n\n".join(p for p in (b.msgs.system.rendered, section, guidance_text) if p)

    text = text_of(target)
    if not text.startswith(f"{expected}\n\n"):
        assert yaml.safe_load(text)["Guidance"] == expected
    assert holds_section(text, section)
    assert [line.strip(" ") for line in text.split("\n")].count(section.split("\n")[0]) == 1
    assert decode_context_section(section) == tuple(blocks)
