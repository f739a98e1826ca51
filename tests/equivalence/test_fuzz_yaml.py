"""Differential proof of the fast YAML path: byte-identical to lionagi's ``minimal_yaml``.

One fuzz over every value strategy of the project (in-domain values, arbitrary values, values
inside lionagi's tracked containers) in the ``fuzz`` profile (8,000 examples in CI), and the
fixed edge cases: empties, YAML-special strings, NaN/inf, 1e17, -0.0, ``": "``, leading
spaces, trailing newlines and characters of every Unicode general category, as values and
as keys.
"""

from __future__ import annotations

import math
import sys
import unicodedata
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lionagi.libs.schema.minimal_yaml import minimal_yaml as lionagi_yaml
from lionagi.protocols.messages.instruction import InstructionContent

from lionagi_turns.memo import yaml as _fastyaml

from ._strategies import ANY_VALUE, DOMAIN_VALUE, outcome
from .conftest import FUZZ_PARTS

pytestmark = pytest.mark.skipif(
    not _fastyaml.C_EMITTER_AVAILABLE, reason="PyYAML built without libyaml: no fast path"
)


def tracked(value: Any) -> Any:
    """``value`` as lionagi holds it in a stored record: inside tracked lists and dicts."""
    return InstructionContent(prompt_context=[value]).prompt_context


FUZZ_VALUES = st.one_of(
    DOMAIN_VALUE,
    ANY_VALUE,
    DOMAIN_VALUE.map(tracked),
    ANY_VALUE.map(tracked),
    st.dictionaries(st.sampled_from(["Guidance", "Instruction", "Context"]), ANY_VALUE),
)


@pytest.mark.slow
@pytest.mark.parametrize("part", range(FUZZ_PARTS))
@settings(settings.get_profile("fuzz"))
@given(FUZZ_VALUES)
def test_fuzz_fast_yaml_equals_lionagi(part: int, value: Any) -> None:
    assert outcome(_fastyaml.minimal_yaml, value) == outcome(lionagi_yaml, value)


# --- fixed edge cases -----------------------------------------------------------------------

SCALARS: list[Any] = [
    "", " ", "\n", "\t", "  \n ", "true", "True", "false", "yes", "no", "on", "off", "y", "n",
    "null", "Null", "~", "1e3", "1E3", "1.5", ".5", "0x1F", "0o17", "017", "1_000", "+1", "-1",
    ".inf", "-.inf", ".nan", "2001-12-14", "12:30:00", "<<", "=", ": ", "a: b", "a:b", "- a",
    "-", "?", "? a", "#", "a #b", "a#b", "'q'", '"q"', "&a", "*a", "!t", "%", "@", "`", "|",
    ">", "{a}", "[a]", ",", "---", "...", " lead", "  lead two", "\tlead tab", "trail ",
    "trail\t", "a\n", "a\n\n", "a\n\n\n", "\na", "\n\na", "a\n b", "a\r\nb", "x" * 200,
    0, 1, -1, 10**20, -(10**20), True, False, None, 0.0, -0.0, 1.5, 1e17, 1e16, 1e-7, 1e300,
    -1e17, float("nan"), float("inf"), float("-inf"), math.pi, 2.0**53, 123456789.125,
]


def _category_samples() -> dict[str, list[str]]:
    """Up to three characters of every Unicode general category (BMP and astral)."""
    found: dict[str, list[str]] = {}
    for code in range(sys.maxunicode + 1):
        category = unicodedata.category(chr(code))
        bucket = found.setdefault(category, [])
        if len(bucket) < 3 or (code > 0xFFFF and len(bucket) < 4):
            bucket.append(chr(code))
    return found


CATEGORIES = _category_samples()


def test_every_unicode_category_is_sampled() -> None:
    expected = {"Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd",
                "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc",
                "Cf", "Cs", "Co", "Cn"}
    assert set(CATEGORIES) == expected


def _shapes(leaf: Any) -> list[Any]:
    shapes: list[Any] = [{"k": leaf}, [leaf], {"k": [leaf, {"n": leaf}]}, tracked(leaf)]
    if isinstance(leaf, str):
        shapes += [{leaf: 1}, {leaf: {leaf: leaf}}, {"k": f"a{leaf}b"}, {"k": f"{leaf} x\ny"}]
    return shapes


@pytest.mark.parametrize("leaf", SCALARS, ids=[repr(s)[:24] for s in SCALARS])
def test_edge_scalars(leaf: Any) -> None:
    for value in _shapes(leaf):
        assert outcome(_fastyaml.minimal_yaml, value) == outcome(lionagi_yaml, value), value


@pytest.mark.parametrize("category", sorted(CATEGORIES))
def test_every_unicode_category(category: str) -> None:
    for char in CATEGORIES[category]:
        for value in _shapes(char):
            assert outcome(_fastyaml.minimal_yaml, value) == outcome(lionagi_yaml, value), (
                category, hex(ord(char)), value,
            )


EMPTIES: list[Any] = [
    {}, [], {"a": None}, {"a": ""}, {"a": "  "}, {"a": []}, {"a": {}}, {"a": {"b": None}},
    {"a": [None, "", [], {}]}, [[[]]], [{"a": [{}]}], {"a": ()}, {"a": set()},
    {"a": 0, "b": False, "c": 0.0}, [None], ["", "x"], {"a": [[], "x", {}]},
]


@pytest.mark.parametrize("value", EMPTIES, ids=[repr(v) for v in EMPTIES])
def test_empties(value: Any) -> None:
    assert outcome(_fastyaml.minimal_yaml, value) == outcome(lionagi_yaml, value)
    assert outcome(_fastyaml.minimal_yaml, tracked(value)) == outcome(lionagi_yaml, tracked(value))


def test_in_domain_values_really_take_the_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_: Any, **__: Any) -> str:
        raise AssertionError("lionagi's renderer used for an in-domain value")

    value = {"Guidance": "g", "Context": tracked({"a": [1, 2.5, True, "x\ny"], "b": None})}
    expected = lionagi_yaml(value)
    monkeypatch.setattr(_fastyaml._lionagi_yaml, "minimal_yaml", fail)
    monkeypatch.setattr(_fastyaml, "_LIONAGI_FUNCS", (fail, *_fastyaml._LIONAGI_FUNCS[1:]))
    assert _fastyaml.minimal_yaml(value) == expected
