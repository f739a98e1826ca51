"""The render cache holds nothing a dropped branch owns past one collection, and at most one
entry per live, compiled instruction (non-timed; the benchmark measures 1,000 branches)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import pytest
from lionagi import Branch
from lionagi.ln.concurrency.utils import _is_coro_func_cached
from lionagi.protocols.messages import Instruction

from lionagi_turns.core import pipeline as _compiler_module
from lionagi_turns.memo import renders as _cache
from lionagi_turns.memo import resume as _resume

from ._support import current, outcome


def _branch(i: int, turns: int) -> Branch:
    branch = Branch(system=f"system {i}")
    m = branch.msgs
    for j in range(turns):
        m.add_message(instruction=f"ask {i}.{j}", context=[{"j": j, "tags": ["a", "b"]}])
        if j % 2:
            request = m.add_message(action_function="f", action_arguments={"q": j})
            m.add_message(action_request=request, action_output={"rows": [j]})
        m.add_message(assistant_response=f"answer {i}.{j}")
    return branch


def _content_probes(branch: Branch) -> list[weakref.ReferenceType[Any]]:
    """Liveness probes for every instruction content: a content holds its tracked
    ``prompt_context``, which holds a callback bound to the content, so the callback dies
    with the content."""
    return [
        weakref.ref(m.content.prompt_context._touch)
        for m in branch.msgs.messages
        if isinstance(m, Instruction)
    ]


@pytest.mark.slow
def test_dropped_branches_are_released_in_one_collection() -> None:
    """The render cache alone (no walk kept: see the next test) holds nothing past the
    collection that frees the branch."""
    _cache.clear()
    gc.collect()
    probes: list[weakref.ReferenceType[Any]] = []
    for i in range(20):
        branch = _branch(i, 10)
        with _no_walks():
            assert outcome(branch, current(branch))[0] == "ok"
        assert _resume._walks_of(branch) is None
        probes += _content_probes(branch)
        del branch
    assert _cache.cache_size() == 20 * 9  # the fold target (first instruction) is not cached
    # lionagi 0.36 keeps every Branch alive in an unbounded functools.cache of bound hook
    # methods; clearing it is what "dropping" a branch takes with plain lionagi too.
    _is_coro_func_cached.cache_clear()
    gc.collect()  # one collection
    assert _cache.cache_size() == 0
    assert [p for p in probes if p() is not None] == []


def test_a_dropped_branchs_walk_goes_in_one_collection_and_its_contents_in_the_next() -> None:
    """A kept walk (``_fast.resume``) holds the records strongly: it is dropped in the
    collection that frees its branch, and the records' self-cyclic contents in the next one."""
    _cache.clear()
    gc.collect()
    probes: list[weakref.ReferenceType[Any]] = []
    owners: list[weakref.ReferenceType[Any]] = []
    for i in range(20):
        branch = _branch(i, 10)
        assert outcome(branch, current(branch))[0] == "ok"
        assert _resume._walks_of(branch) is not None
        probes += _content_probes(branch)
        owners.append(weakref.ref(branch))
        del branch
    _is_coro_func_cached.cache_clear()
    gc.collect()
    # the branches are gone, and no entry of the walk table outlived its branch
    assert [r for r in owners if r() is not None] == []
    assert _resume._walks.dead() == 0
    gc.collect()
    assert _cache.cache_size() == 0
    assert [p for p in probes if p() is not None] == []


@contextmanager
def _no_walks() -> Iterator[None]:
    """Compiles in this block keep no walk (the default profile without its reuse key)."""
    real = _compiler_module.compile_traced

    def without_reuse(branch: Any, request: Any, **options: Any) -> Any:
        profile = options.pop("profile", _compiler_module.SEED_PROFILE)
        return real(branch, request, profile=replace(profile, reuse=None), **options)

    _compiler_module.compile_traced = without_reuse  # type: ignore[assignment]
    try:
        yield
    finally:
        _compiler_module.compile_traced = real  # type: ignore[assignment]


def test_cache_size_is_bounded_by_live_instructions() -> None:
    _cache.clear()
    branch = _branch(0, 30)
    request = current(branch)
    instructions = sum(isinstance(m, Instruction) for m in branch.msgs.messages)
    cached = instructions - 1  # the first instruction is the fold target, never cached
    for _ in range(5):  # repeated compiles replace entries, never add
        outcome(branch, request)
        assert _cache.cache_size() == cached
    second = [m for m in branch.msgs.messages if isinstance(m, Instruction)][1]
    for k in range(5):  # edits replace the edited record's entry
        second.content.prompt_context.append({"k": k})
        outcome(branch, request)
        assert _cache.cache_size() == cached


def test_a_replaced_content_is_a_miss_even_at_the_same_revision() -> None:
    msg = Instruction(content={"instruction": "old", "context": [{"a": 1}]})
    assert _cache.render_durable(msg) == "Instruction: old\nContext:\n- a: 1"
    replacement = type(msg.content)(instruction="new", prompt_context=[{"a": 1}])
    object.__setattr__(replacement, "_revision", msg.content._revision)
    msg.content = replacement
    object.__setattr__(msg.content, "_revision", replacement._revision)
    assert _cache.render_durable(msg) == "Instruction: new\nContext:\n- a: 1"
