"""Hostile values in what the compiler renders: each attack is one named ValueError/TypeError
(naming the record and the place inside the value), never RecursionError, yaml's
RepresenterError or a value's own exception, and the branch is left exactly as it was."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
import yaml
from lionagi import Branch
from lionagi.libs.schema.minimal_yaml import minimal_yaml
from lionagi.protocols.messages import Instruction

from lionagi_turns import TurnRequest, compile_chat_request
from lionagi_turns.core.values import MAX_DEPTH, MAX_SHARED_ITEMS, check_value

from ._hostile import fingerprint
from ._support import add_action_pair, add_assistant, add_instruction, branch


def _current(b: Branch, **kwargs: Any) -> Instruction:
    return b.msgs.create_instruction(instruction="now", **kwargs)


def _refused(
    b: Branch, request: TurnRequest, kind: type[Exception], *parts: str
) -> pytest.ExceptionInfo[Exception]:
    """Compile must raise exactly ``kind`` with every one of ``parts`` in its text, and leave
    ``b`` unchanged."""
    before = fingerprint(b)
    with pytest.raises(kind) as info:
        compile_chat_request(b, request)
    assert type(info.value) is kind
    for part in parts:
        assert part in str(info.value)
    assert fingerprint(b) == before
    return info


def _current_with(b: Branch, value: Any) -> Instruction:
    """A current instruction whose prompt_context holds ``value`` as its only item, put in with
    ``list.append`` (lionagi's tracking would otherwise copy it)."""
    ins = _current(b, context=["seed"])
    context = ins.content.prompt_context
    list.clear(context)
    list.append(context, value)
    return ins


def _history_with(b: Branch, value: Any) -> Instruction:
    ins = add_instruction(b, "asked", context=["seed"])
    context = ins.content.prompt_context
    list.clear(context)
    list.append(context, value)
    add_assistant(b, "answered")
    return ins


# --------------------------------------------------------------------------- cycles and depth


def test_prompt_context_containing_itself_is_refused_naming_the_current_instruction() -> None:
    b = branch()
    ins = _current(b, context=["x"])
    context = ins.content.prompt_context
    list.append(context, context)
    _refused(
        b, TurnRequest(instruction=ins), ValueError,
        "prompt_context contains itself (a cycle: prompt_context[1] is the same object)",
        f"current instruction, id {ins.id}",
    )


def test_cycle_through_a_tuple_is_refused() -> None:
    b = branch()
    loop: list[Any] = []
    loop.append((loop,))
    ins = _current(b, context=[loop])
    _refused(
        b, TurnRequest(instruction=ins), ValueError,
        # lionagi copied the outer list into a tracked one; the original list is at [0][0]
        "prompt_context[0][0] contains itself (a cycle: prompt_context[0][0][0][0] is the same",
        f"current instruction, id {ins.id}",
    )


def test_cyclic_history_context_is_refused_naming_its_position_and_id() -> None:
    b = branch()
    add_instruction(b, "first")
    add_assistant(b, "one")
    loop: dict[str, Any] = {}
    loop["self"] = loop
    stored = _history_with(b, {"outer": (loop,)})
    _refused(
        b, TurnRequest(instruction=_current(b)), ValueError,
        "prompt_context[0]['outer'][0] contains itself (a cycle: "
        "prompt_context[0]['outer'][0]['self'] is the same object)",
        f"history position 2, instruction id {stored.id}",
    )


def test_cyclic_tool_schema_is_refused() -> None:
    b = branch()
    schema: dict[str, Any] = {"type": "function", "function": {"name": "f"}}
    schema["function"]["parameters"] = schema
    ins = _current(b)
    _refused(
        b, TurnRequest(instruction=ins, tool_schemas=[schema]), ValueError,
        # TurnRequest copied the schema's top-level dict
        "TurnRequest.tool_schemas[0]['function'] contains itself (a cycle: "
        "TurnRequest.tool_schemas[0]['function']['parameters']['function'] is the same object)",
        f"current instruction, id {ins.id}",
    )


def test_cyclic_response_format_is_refused() -> None:
    b = branch()
    fmt: dict[str, Any] = {"answer": "str"}
    fmt["nested"] = [fmt]
    ins = _current(b)
    _refused(
        b, TurnRequest(instruction=ins, response_format=fmt), ValueError,
        "TurnRequest.response_format['nested'] contains itself (a cycle: "
        "TurnRequest.response_format['nested'][0]['nested'] is the same object)",
        f"current instruction, id {ins.id}",
    )


def test_cyclic_guidance_of_the_fold_target_is_refused() -> None:
    b = branch("policy")
    stored = add_instruction(b, "asked")
    add_assistant(b, "answered")
    guidance: dict[str, Any] = {"rule": "be brief"}
    guidance["again"] = guidance
    object.__setattr__(stored.content, "guidance", guidance)
    _refused(
        b, TurnRequest(instruction=_current(b)), ValueError,
        "guidance contains itself (a cycle: guidance['again'] is the same object)",
        f"history position 1, instruction id {stored.id}",
    )


def _nested_through_tracking(ins: Instruction, levels: int) -> None:
    """Nest ``levels`` dicts inside prompt_context[0], one level at a time, each write going
    through lionagi's tracked dicts."""
    node = ins.content.prompt_context[0]
    for _ in range(levels):
        node["k"] = {}
        node = node["k"]


def test_nesting_built_through_tracked_dicts_300_deep_is_refused_with_the_limit() -> None:
    b = branch()
    ins = _current(b, context=[{}])
    _nested_through_tracking(ins, 300)
    info = _refused(
        b, TurnRequest(instruction=ins), ValueError,
        f"nests more than {MAX_DEPTH} containers",
        f"current instruction, id {ins.id}",
    )
    # the path names the first container past the limit: prompt_context is level 1
    assert str(info.value).startswith("prompt_context[0]" + "['k']" * (MAX_DEPTH - 1) + " nests")


def test_nesting_up_to_the_limit_renders_as_lionagi_renders_it() -> None:
    b = branch()
    ins = _current(b, context=[{}])
    _nested_through_tracking(ins, MAX_DEPTH - 2)  # prompt_context + MAX_DEPTH - 1 dicts
    compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    assert compiled.messages[-1].content == ins.content._format_text_content()
    deeper = _current(b, context=[{}])
    _nested_through_tracking(deeper, MAX_DEPTH - 1)
    _refused(b, TurnRequest(instruction=deeper), ValueError, f"more than {MAX_DEPTH}")


def test_a_shared_but_acyclic_value_is_not_a_cycle() -> None:
    b = branch()
    shared = {"a": 1}
    ins = _current(b, context=[[shared, shared]])
    compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    assert compiled.messages[-1].content == ins.content._format_text_content()


# --------------------------------------------------------------------------- unrenderable values


class _BadRepr:
    def __repr__(self) -> str:
        raise RuntimeError("repr refused")


class _BadCopy:
    def __deepcopy__(self, memo: Any) -> Any:
        raise RuntimeError("deepcopy refused")


class _CopyRefusingList(list):  # type: ignore[type-arg]
    """Renders as a list (lionagi's pruning makes it one) but cannot be deep-copied."""

    def __deepcopy__(self, memo: Any) -> Any:
        raise RuntimeError("deepcopy refused")


@pytest.mark.parametrize(
    ("value", "type_name"),
    [
        (object(), "object"),
        (frozenset({"a"}), "frozenset"),
        (_BadRepr(), f"{__name__}._BadRepr"),
        (_BadCopy(), f"{__name__}._BadCopy"),
    ],
    ids=["object", "frozenset", "raising-repr", "raising-deepcopy"],
)
def test_values_yaml_cannot_represent_are_a_type_error_naming_the_path(
    value: Any, type_name: str
) -> None:
    b = branch()
    ins = _current_with(b, {"rows": [1, value]})
    info = _refused(
        b, TurnRequest(instruction=ins), TypeError,
        f"prompt_context[0]['rows'][1] is of type {type_name}, which lionagi's YAML renderer "
        "cannot represent",
        f"current instruction, id {ins.id}",
    )
    assert info.value.__cause__ is not None


def test_a_class_is_refused_as_a_class() -> None:
    b = branch()
    ins = _current_with(b, [Branch])
    _refused(
        b, TurnRequest(instruction=ins), TypeError,
        "prompt_context[0][0] is the class lionagi.session.branch.Branch, not a value",
        f"current instruction, id {ins.id}",
    )


def test_unrenderable_history_value_names_the_history_record() -> None:
    b = branch()
    stored = _history_with(b, object())
    _refused(
        b, TurnRequest(instruction=_current(b)), TypeError,
        "prompt_context[0] is of type object", f"history position 0, instruction id {stored.id}",
    )


def test_unrenderable_dict_key_is_named() -> None:
    b = branch()
    ins = _current_with(b, {frozenset({1}): "v"})
    _refused(
        b, TurnRequest(instruction=ins), TypeError,
        "prompt_context[0] (a key of type frozenset) is of type frozenset",
    )


def test_renderable_value_whose_deepcopy_raises_is_a_named_type_error() -> None:
    b = branch()
    ins = _current(b, context=[(_CopyRefusingList([1, 2]),)])
    info = _refused(
        b, TurnRequest(instruction=ins), TypeError,
        "a value raised RuntimeError: deepcopy refused",
        f"current instruction, id {ins.id}",
    )
    assert isinstance(info.value.__cause__, RuntimeError)


def test_integer_longer_than_pythons_digit_limit_is_named() -> None:
    b = branch()
    ins = _current(b, context=[{"n": 10 ** (sys.get_int_max_str_digits() + 5)}])
    _refused(
        b, TurnRequest(instruction=ins), ValueError,
        f"prompt_context[0]['n'] is an integer of more than {sys.get_int_max_str_digits()} digits",
    )


def test_check_value_accepts_everything_lionagi_renders() -> None:
    import datetime

    value = {
        "text": "x", "n": 1, "f": 1.5, "nan": float("nan"), "b": True, "none": None,
        "bytes": b"\x00", "date": datetime.date(2020, 1, 2), "tuple": (1, [2]),
        "empty set": set(), 3: "int key", (1, 2): "tuple key",
    }
    check_value(value, "v")
    minimal_yaml(value)  # lionagi renders it too


# --------------------------------------------------------------------------- sets


def test_a_set_in_prompt_context_is_refused_by_name() -> None:
    b = branch()
    ins = _current(b, context=[{"tags": {"b", "a"}}])
    _refused(
        b, TurnRequest(instruction=ins), TypeError,
        "prompt_context[0]['tags'] is a set; lionagi renders a set's items in hash order",
        f"current instruction, id {ins.id}",
    )


def test_an_empty_set_is_pruned_as_lionagi_prunes_it() -> None:
    b = branch()
    ins = _current(b, context=[{"tags": set(), "k": 1}])
    compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    assert compiled.messages[-1].content == ins.content._format_text_content()


_SEED_SCRIPT = """
import json
from lionagi import Branch
from lionagi.libs.schema.minimal_yaml import minimal_yaml
from lionagi_turns import TurnRequest, compile_chat_request
tags = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"}
b = Branch()
ins = b.msgs.create_instruction(instruction="now", context=[{"tags": tags}])
try:
    compile_chat_request(b, TurnRequest(instruction=ins))
    outcome = "compiled"
except TypeError as exc:
    outcome = str(exc).split(" (current instruction")[0]
print(json.dumps({"lionagi": minimal_yaml({"tags": tags}), "compiled": outcome}))
"""


def test_set_outcome_is_the_same_under_every_hash_seed_while_lionagis_text_is_not() -> None:
    outputs = []
    for seed in ("1", "2"):  # these two seeds order the eight tags differently
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _SEED_SCRIPT], env=env, capture_output=True, text=True,
            check=True, timeout=120,
        )
        outputs.append(json.loads(done.stdout))
    assert len({o["lionagi"] for o in outputs}) > 1  # lionagi: hash order differs by seed
    assert {o["compiled"] for o in outputs} == {
        "prompt_context[0]['tags'] is a set; lionagi renders a set's items in hash order, "
        "which changes from process to process. Pass a list (for example sorted(...)) in the "
        "order the model should see."
    }


# --------------------------------------------------------------------------- result folding


class _EqRaises(dict):  # type: ignore[type-arg]
    """Renders as a dict; comparing it raises."""

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq refused")

    __hash__ = None  # type: ignore[assignment]


def test_item_whose_eq_raises_with_a_pending_result_is_a_named_type_error() -> None:
    b = branch()
    add_instruction(b, "q")
    add_assistant(b, "a")
    add_action_pair(b, "lookup", {"term": "x"}, output=1)
    ins = _current_with(b, _EqRaises(a=1))
    info = _refused(
        b, TurnRequest(instruction=ins), TypeError,
        f"prompt_context[0] (of type {__name__}._EqRaises) raised RuntimeError when compared "
        "with a folded action result",
        f"current instruction, id {ins.id}",
    )
    assert isinstance(info.value.__cause__.__cause__, RuntimeError)


def test_item_whose_eq_raises_in_a_history_instruction_names_that_record() -> None:
    b = branch()
    add_instruction(b, "q")
    add_assistant(b, "a")
    add_action_pair(b, "lookup", {"term": "x"}, output=1)
    stored = _history_with(b, _EqRaises(a=1))
    _refused(
        b, TurnRequest(instruction=_current(b)), TypeError,
        "raised RuntimeError when compared", f"history position 4, instruction id {stored.id}",
    )


def test_unrenderable_action_output_names_the_folded_result() -> None:
    b = branch()
    add_instruction(b, "q")
    add_assistant(b, "a")
    add_action_pair(b, "lookup", {"term": "x"}, output={"rows": {"b", "a"}})
    ins = _current(b)
    _refused(
        b, TurnRequest(instruction=ins), TypeError,
        "folded action result 0['output']['rows'] is a set",
        f"current instruction, id {ins.id}",
    )


def test_many_results_fold_with_lionagis_equality() -> None:
    b = branch()
    add_instruction(b, "q")
    add_assistant(b, "a")
    for n in range(1_500):
        add_action_pair(b, "f", {"n": n % 500}, output=n % 500)
    ins = _current(b, context=[{"function": "f", "arguments": {"n": 0}, "output": 0.0}])
    compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    context = yaml.safe_load(compiled.messages[-1].content)["Context"]
    # 500 distinct results; the one equal to the item already present (0 == 0.0) is skipped
    assert context == [{"function": "f", "arguments": {"n": 0}, "output": 0.0}] + [
        {"function": "f", "arguments": {"n": n}, "output": n} for n in range(1, 500)
    ]


# --------------------------------------------------------------------------- size and field types


def test_shared_sub_values_that_expand_exponentially_are_refused() -> None:
    b = branch()
    level: Any = ["leaf"]
    for _ in range(40):  # 2**40 leaves once every reference is written out
        level = [level, level]
    ins = _current_with(b, level)
    _refused(
        b, TurnRequest(instruction=ins), ValueError,
        f"prompt_context holds the same containers so many times that it expands to more "
        f"than {MAX_SHARED_ITEMS:,} repeated items",
        f"current instruction, id {ins.id}",
    )


def test_a_value_shared_a_few_times_renders_as_lionagi_renders_it() -> None:
    b = branch()
    row = {"a": [1, 2, 3]}
    ins = _current(b, context=[[row] * 1000])
    compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    assert compiled.messages[-1].content == ins.content._format_text_content()


def test_non_text_plain_content_is_a_type_error() -> None:
    b = branch()
    ins = _current(b)
    object.__setattr__(ins.content, "plain_content", {"text": "hi"})
    _refused(
        b, TurnRequest(instruction=ins), TypeError,
        "plain_content is of type dict; give text or None",
        f"current instruction, id {ins.id}",
    )


def test_images_that_are_not_a_list_are_a_type_error() -> None:
    b = branch()
    stored = add_instruction(b, "old")
    object.__setattr__(stored.content, "images", "QkFT")  # would be four one-letter images
    add_assistant(b, "seen")
    _refused(
        b, TurnRequest(instruction=_current(b)), TypeError,
        "images is of type str; give a list of image strings",
        f"history position 0, instruction id {stored.id}",
    )


def test_a_stored_assistant_response_that_is_not_text_is_named() -> None:
    b = branch()
    add_instruction(b, "q")
    reply = add_assistant(b, "a")
    object.__setattr__(reply.content, "assistant_response", {"text": "a"})
    _refused(
        b, TurnRequest(instruction=_current(b)), TypeError,
        f"assistant_response is of type dict, not text (history position 1, assistant response "
        f"id {reply.id}); store the reply as a string",
    )


@pytest.mark.parametrize(
    "change",
    [
        lambda b, ins: ins.content.prompt_context[0].update({"k": 2}),  # tracked in-place edit
        lambda b, ins: dict.__setitem__(ins.content.prompt_context[0], "k", 3),  # untracked
        lambda b, ins: object.__setattr__(ins.content, "guidance", "other"),
        lambda b, ins: ins.metadata.update({"note": 1}),
        lambda b, ins: b.msgs.progression.remove(ins.id),
        lambda b, ins: b.metadata.update({"current_progression": []}),
    ],
    ids=["tracked", "untracked", "field", "record-metadata", "progression", "branch-metadata"],
)
def test_the_fingerprint_sees_every_kind_of_change(change) -> None:
    """The helper the hostile tests compare before/after is not blind: each change differs."""
    b = branch(system="policy")
    ins = add_instruction(b, "old", context=[{"k": 1}])
    add_assistant(b, "seen")
    before = fingerprint(b)
    change(b, ins)
    assert fingerprint(b) != before
