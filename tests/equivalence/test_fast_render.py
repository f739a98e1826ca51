"""History renders without InstructionContent, the exact-type trackability walk, and the
fallback when lionagi's YAML tables change after import."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from lionagi.libs.schema.minimal_yaml import MinimalDumper
from lionagi.libs.schema.minimal_yaml import minimal_yaml as lionagi_yaml
from lionagi.protocols.messages.action_response import ActionResponseContent
from lionagi.protocols.messages.instruction import InstructionContent
from lionagi.protocols.messages.message import _content_has_untracked_mutable
from pydantic import BaseModel

from lionagi_turns.core.render import render_instruction
from lionagi_turns.memo import yaml as _fastyaml
from lionagi_turns.memo.history import render_history
from lionagi_turns.memo.switch import fast_path_enabled, no_fast_path
from lionagi_turns.memo.track import trackable

from ._strategies import ANY_VALUE, DOMAIN_VALUE, SAFE, texts
from ._support import PNG, Convo, current, outcome, slow_outcome

# --- render_history == render_instruction ---------------------------------------------------

strings = texts(SAFE + "\U0001f600\x85")
RESULT = st.fixed_dictionaries(
    {"function": strings, "arguments": st.one_of(DOMAIN_VALUE, st.just({})),
     "output": st.one_of(ANY_VALUE, st.none())}
)


@st.composite
def contents(draw: st.DrawFn) -> InstructionContent:
    content = InstructionContent(
        instruction=draw(st.one_of(st.none(), strings)),
        guidance=draw(st.one_of(st.none(), strings, DOMAIN_VALUE)),
        prompt_context=draw(st.one_of(st.none(), st.lists(st.one_of(ANY_VALUE, strings),
                                                           max_size=3))),
        plain_content=draw(st.sampled_from([None, None, None, "", "plain text"])),
        images=draw(st.sampled_from([None, None, [PNG]])),
    )
    odd = draw(st.sampled_from([None, None, None, "a string", ("t", 1), 0, {"k": "v"}]))
    if odd is not None:
        content.prompt_context = odd  # not a list: list(...) of it changes it
    if draw(st.booleans()):
        content.guidance = draw(st.sampled_from([0, False, [], {}, "", " ", ["g"]]))
    # Stored records written around lionagi's tracking can hold anything in any field.
    for name in draw(st.lists(st.sampled_from(_FIELDS), max_size=2)):
        object.__setattr__(content, name, draw(_STORED_ODD))
    return content


_FIELDS = ("instruction", "guidance", "prompt_context", "plain_content", "images",
           "image_detail", "tool_schemas")
_STORED_ODD = st.sampled_from([
    None, "", 0, False, [], (), {}, "text", ["x"], ("x",), {"k": "v"}, [("t", ["x"])],
    "ultra", "low", b"", b"x", 1.5, [[[]]], [{1, 2}], [set()], [PNG],
])


def _attempt(render: Any, *, text: bool = True) -> tuple[Any, ...]:
    """``("ok", rendering)`` or ``("error", type name[, text])``: what a differential render
    test compares, so both renderers succeed alike or fail alike."""
    try:
        return ("ok", render())
    except Exception as exc:
        return ("error", type(exc).__name__, str(exc)) if text else ("error", type(exc).__name__)


@pytest.mark.slow
@given(contents(), st.lists(RESULT, max_size=3))
def test_history_render_equals_render_instruction(
    content: InstructionContent, results: list[dict[str, Any]]
) -> None:
    def run(render: Any) -> tuple[Any, ...]:
        return _attempt(render, text=False)

    with no_fast_path():
        expected = run(lambda: render_instruction(content, results=results))
    assert run(lambda: render_history(content, results)) == expected


# --- trackable == not _content_has_untracked_mutable ----------------------------------------


class Model(BaseModel):
    x: int = 1


class Thing:
    pass


def _cyclic() -> list[Any]:
    loop: list[Any] = [1]
    loop.append(loop)
    return loop


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = [value]
    return value


ODD = st.sampled_from([
    ("tuple", ["list in tuple"]), ("just", "a tuple"), frozenset({1, 2}), {1, 2}, Thing(),
    Model(), Model, b"bytes", 1.5, None, _deep(70), ("t", _deep(1100)), ("t", _cyclic()),
    bytearray(b"x"),
])
FIELD_VALUE = st.one_of(ANY_VALUE, ODD, st.lists(st.one_of(ANY_VALUE, ODD), max_size=3),
                        st.dictionaries(st.text(max_size=3), st.one_of(ANY_VALUE, ODD),
                                        max_size=3))


@st.composite
def any_content(draw: st.DrawFn) -> Any:
    if draw(st.booleans()):
        content: Any = InstructionContent(instruction="x")
        names = ("prompt_context", "guidance", "tool_schemas", "response_format", "images")
    else:
        content = ActionResponseContent(function="f", arguments={}, output=None)
        names = ("arguments", "output", "error")
    for name in draw(st.lists(st.sampled_from(names), max_size=3)):
        setattr(content, name, draw(FIELD_VALUE))
    if draw(st.booleans()):  # a value shared by two fields: seen twice, not a cycle
        shared = draw(FIELD_VALUE)
        setattr(content, names[0], [shared, shared])
    return content


@pytest.mark.slow
@given(any_content())
def test_trackable_equals_lionagis_check(content: Any) -> None:
    assert trackable(content) is (not _content_has_untracked_mutable(content))


def test_trackable_on_a_plain_object_is_lionagis() -> None:
    for value in (Thing(), {"a": [1]}, ("t", [1]), None):
        assert trackable(value) is (not _content_has_untracked_mutable(value))


# --- lionagi's YAML tables changed after import ---------------------------------------------


@pytest.fixture
def float_representer() -> Iterator[None]:
    """A representer registered on lionagi's MinimalDumper after import (3 decimals)."""
    table = MinimalDumper.yaml_representers
    old = table[float]

    def three_places(dumper: Any, data: float) -> Any:
        return dumper.represent_scalar("tag:yaml.org,2002:float", f"{data:.3f}")

    MinimalDumper.add_representer(float, three_places)
    try:
        yield
    finally:
        table[float] = old
    assert _fastyaml.tables_unchanged()


def test_a_representer_registered_after_import_is_honoured(float_representer: None) -> None:
    value = {"pi": 3.14159}
    assert lionagi_yaml(value) == "pi: 3.142\n"
    assert not _fastyaml.tables_unchanged() and not fast_path_enabled()
    assert _fastyaml.minimal_yaml(value) == "pi: 3.142\n"


def test_a_changed_table_disables_the_cache_too() -> None:
    convo = Convo()
    m = convo.branch.msgs
    m.add_message(instruction="measure", context=[{"pi": 3.14159}])
    m.add_message(assistant_response="ok")
    request = current(convo.branch)
    before = outcome(convo.branch, request)
    assert outcome(convo.branch, request) == before  # the cache now holds the rendering
    table = MinimalDumper.yaml_representers
    old = table[float]
    MinimalDumper.add_representer(
        float, lambda d, x: d.represent_scalar("tag:yaml.org,2002:float", f"{x:.3f}")
    )
    try:
        after = outcome(convo.branch, request)
        assert after == slow_outcome(convo.branch, request)
        assert "pi: 3.142" in str(after) and after != before
    finally:
        table[float] = old
    assert outcome(convo.branch, request) == before


def test_an_implicit_resolver_registered_after_import_is_honoured() -> None:
    assert "tag:demo" not in str(MinimalDumper.__dict__.get("yaml_implicit_resolvers", ""))
    MinimalDumper.add_implicit_resolver("tag:demo", __import__("re").compile("^dem$"), ["d"])
    try:
        assert not _fastyaml.tables_unchanged()
        value = {"a": "dem"}
        assert _fastyaml.minimal_yaml(value) == lionagi_yaml(value) == "a: 'dem'\n"
    finally:
        del MinimalDumper.yaml_implicit_resolvers  # back to the inherited table
    assert _fastyaml.tables_unchanged()
    assert _fastyaml.minimal_yaml({"a": "dem"}) == "a: dem\n"


def test_replacing_lionagis_renderer_disables_the_fast_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from lionagi.libs.schema import minimal_yaml as module

    monkeypatch.setattr(module, "minimal_yaml", lambda value, **_: "patched\n")
    assert not fast_path_enabled()
    assert _fastyaml.minimal_yaml({"a": 1}) == "patched\n"


_TABLES_SCRIPT = r"""
from lionagi.libs.schema.minimal_yaml import MinimalDumper

def tables():
    out = {}
    for cls in MinimalDumper.__mro__:  # lionagi's dumper and every PyYAML class under it
        names = vars(cls)
        out[cls.__qualname__] = sorted(names)
        for name in ("yaml_representers", "yaml_multi_representers",
                     "yaml_implicit_resolvers", "yaml_path_resolvers"):
            if name in names:
                out[(cls.__qualname__, name)] = sorted(map(repr, names[name].items()))
    return out

before = tables()
from lionagi_turns.memo import yaml as fast
shown = fast.minimal_yaml({"a": [1, 2.5, None, True, "x\ny"]})
assert shown == "a:\n- 1\n- 2.5\n- true\n- |-\n  x\n  y\n", shown
assert fast.tables_unchanged()
print("untouched" if tables() == before else "changed")
"""


def test_yaml_module_stays_untouched(tmp_path: Path) -> None:
    """The fast path registers nothing on PyYAML or lionagi classes: a fresh interpreter
    snapshots every YAML table of lionagi's ``MinimalDumper`` and its PyYAML bases before
    importing and using the fast emitter, and finds them all as they were."""
    assert yaml.SafeDumper.yaml_representers is yaml.representer.SafeRepresenter.yaml_representers
    env = {**os.environ, "LIONAGI_HOME": str(tmp_path / "home"), "LOG_AUTO_SAVE_ON_EXIT": "false"}
    done = subprocess.run([sys.executable, "-c", _TABLES_SCRIPT], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "untouched"


class _RaisingEq:
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("no comparison")

    __hash__ = None  # type: ignore[assignment]


def _shared(levels: int) -> list[Any]:
    level: list[Any] = ["leaf"]
    for _ in range(levels):
        level = [level, level]
    return level


HOSTILE_CONTEXTS: list[Any] = [
    [_shared(10)], [_shared(40)],
    [_deep(49)], [_deep(60)], [_deep(99)], [_deep(120)], [("t", _cyclic())], [{1, 2}],
    [frozenset({1})], [Thing()], [Model()], [10**400], [2**1000], [2**1001], [{"k": set()}],
    [{"": "empty key"}], [{"k" * 130: 1}], [_RaisingEq()],
]


@pytest.mark.parametrize(
    "context", HOSTILE_CONTEXTS, ids=[str(i) for i in range(len(HOSTILE_CONTEXTS))]
)
@pytest.mark.parametrize("with_result", [False, True])
def test_history_render_raises_what_render_instruction_raises(
    context: list[Any], with_result: bool
) -> None:
    content = InstructionContent(instruction="x")
    object.__setattr__(content, "prompt_context", list(context))  # as stored, untracked
    results = [{"function": "f", "arguments": {}, "output": context[0]}] if with_result else []

    run = _attempt

    with no_fast_path():
        expected = run(lambda: render_instruction(content, results=results))
    assert run(lambda: render_history(content, results)) == expected


def test_bad_image_detail_in_history_raises_like_render_instruction() -> None:
    content = InstructionContent(instruction="x")
    object.__setattr__(content, "image_detail", "ultra")
    with no_fast_path(), pytest.raises(ValueError) as slow:
        render_instruction(content)
    with pytest.raises(ValueError) as fast:
        render_history(content)
    assert str(fast.value) == str(slow.value)


class _AlwaysEqual:
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = None  # type: ignore[assignment]


R1 = {"function": "f", "arguments": {"q": 1}, "output": [1, 2]}
R2 = {"function": "g", "arguments": {}, "output": "done"}
MERGES: list[tuple[list[Any], list[Any]]] = [
    ([dict(R1)], [dict(R1)]),  # a result already in the context is skipped
    ([], [dict(R1), dict(R1), dict(R2)]),  # and one repeated within the batch
    ([dict(R1), "x", [R1]], [dict(R2), dict(R1)]),
    ([{"function": "f", "arguments": {"q": True}, "output": [1.0, 2]}], [dict(R1)]),  # 1 == True
    ([dict(R1)], [{**R1, "output": _AlwaysEqual()}]),  # skipped, but not renderable: refused
    ([{**R1, "output": _AlwaysEqual()}], [dict(R1)]),
    ([{**R1, "output": _RaisingEq()}], [dict(R1)]),
    ([dict(R1)] * 20, [dict(R2)] * 20),  # past the shortcut's comparison budget
]


@pytest.mark.parametrize("context, results", MERGES, ids=[str(i) for i in range(len(MERGES))])
def test_history_fold_equals_render_instruction(context: list[Any], results: list[Any]) -> None:
    content = InstructionContent(instruction="x")
    object.__setattr__(content, "prompt_context", list(context))

    run = _attempt

    with no_fast_path():
        expected = run(lambda: render_instruction(content, results=results))
    assert run(lambda: render_history(content, results)) == expected
    tracked_content = InstructionContent(instruction="x", prompt_context=list(context))
    with no_fast_path():
        expected = run(lambda: render_instruction(tracked_content, results=results))
    assert run(lambda: render_history(tracked_content, results)) == expected
