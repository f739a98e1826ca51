"""Amendment 1's tool_results JSON (``canonical_json``): where lionagi's ``json_dumps`` encodes a
value exactly, the item-by-item encoder writes the same bytes; every value lionagi's YAML sends
(NaN/infinity, keys that are not text, bytes, integers beyond 64 bits) encodes to one text that
does not depend on the dicts' insertion order, and that Python's ``json`` reads back."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given
from hypothesis import strategies as st
from lionagi.ln import json_dumps

from lionagi_turns.profiles.amendment1._sections import _encode, canonical_json

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=6)
JSON_LEAVES = (
    st.none() | st.booleans() | TEXT | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
)
JSON = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=12,
)
KEYS = st.none() | st.booleans() | TEXT | st.integers() | st.floats()
LEAVES = JSON_LEAVES | st.floats() | st.integers() | st.binary(max_size=6)
SENT = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)


def _reversed(value: Any) -> Any:
    """``value`` with every dict's insertion order reversed (and fresh containers)."""
    if isinstance(value, dict):
        return {k: _reversed(v) for k, v in reversed(list(value.items()))}
    if isinstance(value, list):
        return [_reversed(v) for v in value]
    return value


@given(JSON)
def test_the_item_encoder_writes_what_lionagi_writes_for_plain_json(value: Any) -> None:
    assert _encode(value, 0) == json_dumps(value, sort_keys=True)
    assert canonical_json(value) == json_dumps(value, sort_keys=True)


@given(SENT)
def test_every_sent_value_encodes_independently_of_insertion_order(value: Any) -> None:
    text = canonical_json(value)
    assert canonical_json(_reversed(value)) == text
    json.loads(text)  # NaN/Infinity tokens included


@given(st.dictionaries(KEYS, st.integers(), min_size=1, max_size=5))
def test_no_value_of_a_dict_is_dropped(value: dict[Any, int]) -> None:
    loaded = json.loads(canonical_json({"output": value}))["output"]
    values = list(loaded.values()) if isinstance(loaded, dict) else [v for _, v in loaded]
    assert sorted(values) == sorted(value.values())
    if isinstance(loaded, list):  # colliding keys: each key in its own JSON form
        keys = [k for k, _ in loaded]
        assert len(keys) == len(value)
        for key in value:
            assert any(k == key or (isinstance(key, float) and math.isnan(key)
                                    and isinstance(k, float) and math.isnan(k)) for k in keys)
