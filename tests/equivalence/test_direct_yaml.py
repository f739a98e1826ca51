"""The directly written YAML text (``_fast.direct``): when it decides a document, its text is
lionagi's ``minimal_yaml`` byte for byte; it decides the documents instructions really hold;
and what it does not decide goes on to the event path unchanged.

The differential property runs in the ``fuzz`` profile (8,000 examples in CI) over the
project's value strategies and over values whose strings avoid TAB (so most are decided here).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lionagi.libs.schema.minimal_yaml import minimal_yaml as lionagi_yaml
from lionagi.protocols.messages.instruction import InstructionContent

from lionagi_turns.memo import direct as _direct
from lionagi_turns.memo import yaml as _fastyaml

from ._strategies import ANY_VALUE, DOMAIN_VALUE, SAFE, SPECIAL, nested, outcome
from .conftest import FUZZ_PARTS

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import workload  # the benchmark's branch: what instructions really hold

pytestmark = pytest.mark.skipif(
    not _fastyaml.C_EMITTER_AVAILABLE, reason="PyYAML built without libyaml: no fast path"
)

NO_TAB = SAFE.replace("\t", "")
_LINES = st.one_of(
    st.text(st.sampled_from(NO_TAB), max_size=14),
    st.text(st.sampled_from(NO_TAB + "\n\n\n"), min_size=3, max_size=40),
    st.sampled_from([s for s in SPECIAL if "\t" not in s]),
)
_KEYS = st.text(st.sampled_from(NO_TAB.replace("\n", "")), min_size=1, max_size=12)
NO_TAB_VALUE = st.one_of(
    st.dictionaries(_KEYS, nested(_KEYS, _LINES), min_size=1, max_size=4),
    st.lists(nested(_KEYS, _LINES), min_size=1, max_size=4),
)


def tracked(value: Any) -> Any:
    return InstructionContent(prompt_context=[value]).prompt_context


def _agrees(value: Any) -> bool:
    """Whether the direct text, when there is one, is lionagi's; True when it decided."""
    text = _direct.direct_yaml(value)
    if text is None:
        return False
    assert ("ok", text) == outcome(lionagi_yaml, value), value
    return True


@pytest.mark.slow
@pytest.mark.parametrize("part", range(FUZZ_PARTS))
@settings(settings.get_profile("fuzz"))
@given(st.one_of(NO_TAB_VALUE, NO_TAB_VALUE.map(tracked), DOMAIN_VALUE, ANY_VALUE))
def test_fuzz_direct_text_is_lionagis(part: int, value: Any) -> None:
    _agrees(value)
    assert outcome(_fastyaml.minimal_yaml, value) == outcome(lionagi_yaml, value)


def test_the_fuzz_values_are_mostly_decided_here() -> None:
    """The property above is not vacuous: most values without TAB are written directly."""
    examples: list[Any] = []

    @settings(max_examples=300, database=None, derandomize=True)
    @given(NO_TAB_VALUE)
    def collect(value: Any) -> None:
        examples.append(value)

    collect()
    decided = sum(_agrees(v) for v in examples)
    assert decided >= len(examples) // 2, (decided, len(examples))


def test_every_benchmark_instruction_is_decided_here() -> None:
    branch = workload.build_branch(200)
    docs = [
        _fastyaml.section_doc(c.guidance, c.instruction, c.prompt_context, [])
        for c in (m.content for m in branch.msgs.messages)
        if isinstance(c, InstructionContent)
    ]
    assert len(docs) == 67
    assert all(_agrees(doc) for doc in docs)


# Each written directly, and exactly lionagi's text (which is shown, to pin the layout).
DECIDED: list[tuple[Any, str]] = [
    ({"a": "plain"}, "a: plain\n"),
    ({"a": "x: y"}, "a: 'x: y'\n"),
    ({"a": "it's"}, "a: it's\n"),
    ({"a": "'q' it's"}, "a: '''q'' it''s'\n"),
    ({"a": " lead"}, "a: ' lead'\n"),
    ({"a": "trail "}, "a: 'trail '\n"),
    ({"a": "true", "b": "1.5", "c": "~"}, "a: 'true'\nb: '1.5'\nc: '~'\n"),
    ({"a": "a #b", "b": "a#b", "c": "#a"}, "a: 'a #b'\nb: a#b\nc: '#a'\n"),
    ({"a": "- a", "b": "-a", "c": "-", "d": "?a", "e": "? a"},
     "a: '- a'\nb: -a\nc: '-'\nd: ?a\ne: '? a'\n"),
    ({"a": ":a", "b": "a:", "c": "a:b"}, "a: :a\nb: 'a:'\nc: a:b\n"),
    ({"a": "---x", "b": "...", "c": "a---"}, "a: '---x'\nb: '...'\nc: a---\n"),
    ({"a": "x\ny"}, "a: |-\n  x\n  y\n"),
    ({"a": "x\ny\n"}, "a: |\n  x\n  y\n"),
    ({"a": "x\n\n y"}, "a: |-\n  x\n\n   y\n"),
    ({"k": 1, "f": 1.5, "n": -0.0, "b": False, "i": float("inf"), "e": 1e17},
     "k: 1\nf: 1.5\nn: -0.0\nb: false\ni: .inf\ne: 1.0e+17\n"),
    ({"a": {"b": {"c": "d"}}}, "a:\n  b:\n    c: d\n"),
    ({"a": ["x", "y"]}, "a:\n- x\n- y\n"),
    ({"a": [{"b": 1, "c": [2, 3]}]}, "a:\n- b: 1\n  c:\n  - 2\n  - 3\n"),
    ([["a", ["b"]], "c"], "- - a\n  - - b\n- c\n"),
    ([{"a": "x\ny"}, "p\nq"], "- a: |-\n    x\n    y\n- |-\n  p\n  q\n"),
    ({"a": None, "b": " ", "c": [], "d": {"e": None}, "f": "kept"}, "f: kept\n"),
    ([None, {"a": None, "b": 1}], "- b: 1\n"),
    ({"true": 1, "x: y": 2, " k": 3}, "'true': 1\n'x: y': 2\n' k': 3\n"),
    ({"§6 — é": "中 文\u3000x"}, "§6 — é: 中 文\u3000x\n"),
]


@pytest.mark.parametrize("value, text", DECIDED, ids=[repr(v)[:40] for v, _ in DECIDED])
def test_decided_here_and_lionagis(value: Any, text: str) -> None:
    assert lionagi_yaml(value) == text
    assert _direct.direct_yaml(value) == text
    assert _direct.direct_yaml(tracked(value)) == lionagi_yaml(tracked(value))


# Not decided here (None); the event path or lionagi renders them, exactly as before.
UNDECIDED: list[Any] = [
    {"a": "tab\there"},  # TAB: double-quoted
    {"a": "x \ny"},  # a space before a line feed: double-quoted
    {"a": "x\ny "},  # a trailing space in a block: double-quoted
    {"a": " x\ny"},  # a block needing an indentation hint
    {"a": "\nx"},
    {"a": "x\n\n"},  # keep-chomping ("|+") is outside the domain
    {"a\nb": 1},  # a multi-line key
    {"k" * 130: 1},  # not a simple key
    {"": 1},
    {1: "a"},
    {"a": 2**1001},
    {"a": (1, 2)},
    {"a": "\u2028"},  # outside the proven domain
    {"\ud800": 1},  # a surrogate key is checked before its length is measured
    {},
    {"a": None},  # nothing kept: the event path writes the empty root
    "a: b",
    3,
]


@pytest.mark.parametrize("value", UNDECIDED, ids=[repr(v)[:40] for v in UNDECIDED])
def test_undecided_goes_on_to_the_event_path(value: Any) -> None:
    assert _direct.direct_yaml(value) is None
    assert outcome(_fastyaml.minimal_yaml, value) == outcome(lionagi_yaml, value)


def test_depth_and_size_limits_are_left_to_the_event_path() -> None:
    deep: Any = "x"
    for _ in range(_fastyaml.MAX_DEPTH + 2):
        deep = [deep]
    assert _direct.direct_yaml(deep) is None
    wide = {"a": list(range(_direct.DIRECT_ITEMS))}
    assert _direct.direct_yaml(wide) is None
    assert _fastyaml.minimal_yaml(wide) == lionagi_yaml(wide)


def test_fast_yaml_takes_the_direct_text(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_: Any) -> Any:
        raise AssertionError("the event path ran for a directly written document")

    monkeypatch.setattr(_fastyaml, "_events", fail)
    value = {"Instruction": "Step 1: go", "Context": [{"a": "x\ny", "b": [1, 2.5, True]}]}
    assert _fastyaml.fast_yaml(value) == lionagi_yaml(value)
