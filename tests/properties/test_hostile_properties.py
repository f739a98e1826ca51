"""Hypothesis properties over hostile values.

1. ``compile_chat_request`` on random hostile values (cycles, deep nesting, sets, objects YAML
   cannot represent, values whose ``__eq__``/``__repr__``/``__deepcopy__``/``__iter__`` raise,
   huge integers, odd image strings and image_detail values) in history and current
   instructions, guidance, assistant responses, action outputs, tool schemas and response
   formats raises nothing but ValueError or TypeError (lionagi's EmptyOutgoingContentError is
   a ValueError), never
   resolves a host, and leaves the branch exactly as it was, raising or not.
2. ``merge_results`` gives exactly the result of the plain ``result not in merged`` fold for
   random values, including ones that are equal across types (``1``, ``1.0``, ``True``), NaN
   and values compared with ``==`` only.
"""

from __future__ import annotations

import datetime
import math
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from lionagi import Branch
from unit._hostile import fingerprint, no_dns
from unit._support import add_action_pair, add_assistant

from lionagi_turns import TurnRequest, compile_chat_request
from lionagi_turns.core.merge import merge_results


class _Opaque:
    """Something YAML cannot represent."""


class _EqRaises(dict):  # type: ignore[type-arg]
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    __hash__ = None  # type: ignore[assignment]


class _EqAlways:
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


class _ReprRaises:
    def __repr__(self) -> str:
        raise RuntimeError("repr")


class _IterRaises(list):  # type: ignore[type-arg]
    def __iter__(self) -> Any:
        raise RuntimeError("iter")


class _CopyRaises(list):  # type: ignore[type-arg]
    def __deepcopy__(self, memo: Any) -> Any:
        raise RuntimeError("deepcopy")


def _deep(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = {"k": value}
    return value


def _cyclic_list() -> Any:
    loop: list[Any] = [1]
    loop.append((loop,))
    return loop


def _cyclic_dict() -> Any:
    loop: dict[str, Any] = {}
    loop["self"] = [loop]
    return loop


_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.builds(lambda: 10**5000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.binary(max_size=4),
    st.just(datetime.date(2020, 1, 2)),
    st.sets(st.text(max_size=3), max_size=3),
    st.frozensets(st.integers(), max_size=2),
    st.builds(_Opaque),
    st.builds(_ReprRaises),
    st.just(_Opaque),
    st.builds(lambda: _EqRaises(a=1)),
    st.builds(_EqAlways),
    st.builds(lambda: _IterRaises([1])),
    st.builds(lambda: _CopyRaises([1])),
    st.builds(_cyclic_list),
    st.builds(_cyclic_dict),
    st.integers(95, 105).map(_deep),
)

_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers()), inner, max_size=3),
    ),
    max_leaves=6,
)

_images = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "Https://example.com/a.png",
                " https://example.com/a.png",
                "HTTP://10.0.0.1/x",
                "https://exa\tmple.com/x",
                "//host/x",
                "../etc/passwd",
                "/etc/passwd",
                "/9j/4AAQ",
                "QkFTRTY0",
                "data:image/png;base64,AAAA",
                "data:text/html;base64,AAAA",
                "file:///etc/passwd",
                "http:///x",
                "https://[::1/x",
            ]
        ),
        st.text(alphabet=" /:.HhTtPpSs9j", max_size=12),
    ),
    max_size=2,
)
_details = st.sampled_from([None, "low", "high", "auto", "ultra", 3])


def _put(values: list[Any], value: Any) -> None:
    """Store ``value`` as the only item of a tracked list without lionagi copying it."""
    list.clear(values)
    list.append(values, value)


@st.composite
def _attack(draw: st.DrawFn) -> dict[str, Any]:
    """The drawn values; the branch and request are built in the test (lionagi objects are
    not built inside a strategy)."""
    plan: dict[str, Any] = {"system": draw(st.booleans())}
    if draw(st.booleans()):
        plan["history"] = {
            "context": draw(_values),
            "guidance": draw(st.one_of(st.none(), _values)),
            "images": draw(_images),
            "detail": draw(_details),
            "reply": draw(st.one_of(st.just("seen"), _values)),
        }
    if draw(st.booleans()):
        plan["output"] = draw(_values)
    plan["current"] = {
        "context": draw(_values),
        "guidance": draw(st.one_of(st.none(), _values)),
        "images": draw(_images),
        "detail": draw(_details),
    }
    if draw(st.booleans()):
        plan["tool_schemas"] = [{"type": "function", "function": {"p": draw(_values)}}]
    if draw(st.booleans()):
        plan["response_format"] = {"answer": draw(_values)}
    return plan


def _branch(plan: dict[str, Any]) -> Branch:
    b = Branch(system="policy") if plan["system"] else Branch()
    if "history" in plan:
        history = plan["history"]
        stored = b.msgs.add_message(instruction="old", context=["x"])
        _put(stored.content.prompt_context, history["context"])
        if history["guidance"] is not None:
            object.__setattr__(stored.content, "guidance", history["guidance"])
        object.__setattr__(stored.content, "images", history["images"])
        object.__setattr__(stored.content, "image_detail", history["detail"])
        reply = add_assistant(b, "seen")
        object.__setattr__(reply.content, "assistant_response", history["reply"])
    if "output" in plan:
        _, response = add_action_pair(b, "f", {"q": 1}, output=1)
        object.__setattr__(response.content, "output", plan["output"])
    return b


@pytest.mark.slow
@given(_attack())
def test_compile_on_hostile_values_raises_only_value_or_type_errors(plan: dict[str, Any]) -> None:
    b = _branch(plan)
    current = b.msgs.create_instruction(instruction="now", context=["x"])
    _put(current.content.prompt_context, plan["current"]["context"])
    object.__setattr__(current.content, "images", plan["current"]["images"])
    object.__setattr__(current.content, "image_detail", plan["current"]["detail"])
    if plan["current"]["guidance"] is not None:
        object.__setattr__(current.content, "guidance", plan["current"]["guidance"])
    options = {k: plan[k] for k in ("tool_schemas", "response_format") if k in plan}
    before = fingerprint(b)
    with pytest.MonkeyPatch.context() as patch, no_dns(patch):
        try:
            compile_chat_request(b, TurnRequest(instruction=current, **options))
            event("compiled")
        except (ValueError, TypeError) as exc:
            event(f"refused: {type(exc).__name__}")
    assert fingerprint(b) == before


_comparable = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-2, 2),
        st.sampled_from([0.0, 1.0, -0.0, math.nan, math.inf]),
        st.sampled_from(["a", "b"]),
        st.builds(_EqAlways),
        st.just(b"a"),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=2),
        st.lists(inner, max_size=2).map(tuple),
        st.dictionaries(st.sampled_from(["a", "b", 1, True]), inner, max_size=2),
    ),
    max_leaves=4,
)


def _plain_fold(context: list[Any], results: list[Any]) -> list[Any]:
    merged = list(context)
    for result in results:
        if result not in merged:
            merged.append(result)
    return merged


@pytest.mark.slow
@given(st.lists(_comparable, max_size=5), st.lists(_comparable, max_size=8))
def test_merge_results_folds_exactly_as_the_plain_membership_test(
    context: list[Any], results: list[Any]
) -> None:
    expected = _plain_fold(context, results)
    merged = merge_results(context, results)
    assert len(merged) == len(expected)
    assert all(a is b for a, b in zip(merged, expected, strict=True))
