"""``_fastyaml`` is byte-identical to lionagi's ``minimal_yaml`` and instruction renderer."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lionagi.libs.schema.minimal_yaml import _prune
from lionagi.libs.schema.minimal_yaml import minimal_yaml as lionagi_yaml
from lionagi.protocols.messages.instruction import InstructionContent
from pydantic import BaseModel

from lionagi_turns.memo import yaml as _fastyaml
from lionagi_turns.memo.switch import no_fast_path

from ._strategies import ANY_VALUE, DOMAIN_VALUE, SAFE, outcome, texts

pytestmark = pytest.mark.skipif(
    not _fastyaml.C_EMITTER_AVAILABLE, reason="PyYAML built without libyaml: no fast path"
)


@pytest.mark.slow
@given(DOMAIN_VALUE)
def test_domain_values_take_the_c_emitter_and_match(value: Any) -> None:
    assert _fastyaml.in_domain(_prune(value)), "strategy must stay inside the proven domain"
    assert _fastyaml.minimal_yaml(value) == lionagi_yaml(value)


@settings(max_examples=300)
@given(ANY_VALUE)
def test_any_value_matches_lionagi(value: Any) -> None:
    assert outcome(_fastyaml.minimal_yaml, value) == outcome(lionagi_yaml, value)


# Values where libyaml and PyYAML's Python emitter were seen to disagree: each must fall
# outside the domain (so lionagi renders it) and the result must still be identical.
DIVERGENT = [
    pytest.param(1, id="root-scalar"),
    pytest.param({"": 1}, id="empty-key"),
    pytest.param({1: "a"}, id="non-str-key"),
    pytest.param({"a": "emoji \U0001f600"}, id="astral"),
    pytest.param({"a": "x\x85y"}, id="nel"),
    pytest.param({"a": "x\u2028y"}, id="line-separator"),
    pytest.param({"a": "x\ufeffy"}, id="bom"),
    pytest.param({"a": "x\ry"}, id="carriage-return"),
    pytest.param({"a": "keep\n\n"}, id="keep-chomping"),
    pytest.param({"\n": 1}, id="lone-newline-key"),
    pytest.param({"0" * 116 + "\xa0" * 3 + "\u2014" * 3: False}, id="key-128-bytes"),
    pytest.param({"k" * 128: 1}, id="key-128-chars"),
    pytest.param({"a": (1, 2)}, id="tuple"),
    pytest.param({"a": {1, 2}}, id="set"),
    pytest.param({"a": b"bytes"}, id="bytes"),
]


@pytest.mark.parametrize("value", DIVERGENT)
def test_values_outside_the_domain_fall_back(value: Any) -> None:
    assert not _fastyaml.in_domain(_prune(value))
    assert outcome(_fastyaml.minimal_yaml, value) == outcome(lionagi_yaml, value)


def test_json_string_root_is_lionagis() -> None:
    assert _fastyaml.minimal_yaml('{"a": [1, 2]}') == lionagi_yaml('{"a": [1, 2]}')


def test_switch_off_never_uses_the_c_emitter(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_: Any, **__: Any) -> bool:
        raise AssertionError("fast path taken while switched off")

    monkeypatch.setattr(_fastyaml, "in_domain", fail)
    with no_fast_path():
        assert _fastyaml.minimal_yaml({"a": [1]}) == "a:\n- 1\n"
    monkeypatch.setenv("LIONAGI_TURNS_NO_FAST_PATH", "1")
    assert _fastyaml.minimal_yaml({"a": [1]}) == "a:\n- 1\n"


class Answer(BaseModel):
    text: str


strings = texts(SAFE + "\U0001f600\x85")
contents = st.builds(
    InstructionContent,
    instruction=st.one_of(st.none(), strings),
    guidance=st.one_of(st.none(), strings, DOMAIN_VALUE),
    prompt_context=st.one_of(st.none(), st.lists(st.one_of(DOMAIN_VALUE, strings), max_size=3)),
    plain_content=st.one_of(st.none(), st.just(""), strings),
    tool_schemas=st.one_of(st.none(), st.lists(st.dictionaries(strings, strings), max_size=2)),
    response_format=st.sampled_from([None, None, {"answer": "str"}, Answer]),
)


@pytest.mark.slow
@given(contents)
def test_instruction_text_matches_format_text_content(content: InstructionContent) -> None:
    assert outcome(_fastyaml.instruction_text, content) == outcome(
        InstructionContent._format_text_content, content
    )
