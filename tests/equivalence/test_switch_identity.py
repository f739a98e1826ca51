"""Compiled output is byte-identical with and without the fast path (cache + libyaml)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lionagi import Branch
from scenarios import SCENARIOS, Scenario, request_for

from lionagi_turns import TurnRequest
from lionagi_turns.memo import renders as _cache
from lionagi_turns.memo.switch import ENV_VAR, fast_path_enabled, no_fast_path

from ._strategies import DOMAIN_VALUE, texts
from ._support import PNG, Convo, current, outcome, slow_outcome


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenarios_identical_with_and_without_fast_path(scenario: Scenario) -> None:
    branch = scenario.build()
    request = request_for(branch, scenario, provider_kwargs=False)
    slow = slow_outcome(branch, request)
    cold = outcome(branch, request)
    warm = outcome(branch, request)
    assert cold == slow
    assert warm == slow


def test_env_var_disables_the_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    convo = Convo()
    request = current(convo.branch)
    expected = outcome(convo.branch, request)
    before = _cache.cache_size()
    calls: list[Any] = []
    monkeypatch.setattr(_cache, "_store", lambda *a: calls.append(a))
    for off in ("1", "true", "yes"):
        monkeypatch.setenv(ENV_VAR, off)
        assert not fast_path_enabled()
        assert outcome(convo.branch, request) == expected
    assert calls == [] and _cache.cache_size() == before
    monkeypatch.setenv(ENV_VAR, "0")
    assert fast_path_enabled()


def test_no_fast_path_is_scoped_to_its_block() -> None:
    assert fast_path_enabled()
    with no_fast_path():
        assert not fast_path_enabled()
    assert fast_path_enabled()


# --- random histories -----------------------------------------------------------------------

# Strings from the proven domain plus some that force lionagi's renderer (emoji, NEL, CR).
TEXT = st.one_of(
    texts(" ab\n\t:#-é\u2014"), st.sampled_from(["emoji \U0001f600", "x\x85y", "a\rb"])
)
VALUE = st.one_of(DOMAIN_VALUE, TEXT, st.integers(), st.booleans())
UNTRACKED = st.builds(lambda v: ("tuple", [v]), VALUE)  # a list inside a tuple: untracked

RECORD = st.one_of(
    st.tuples(
        st.just("instruction"),
        TEXT.filter(lambda s: s.strip() != ""),
        st.lists(st.one_of(VALUE, UNTRACKED), max_size=3),
        st.one_of(st.none(), TEXT, DOMAIN_VALUE),
        st.one_of(st.none(), TEXT),
        st.booleans(),
    ),
    st.tuples(st.just("assistant"), TEXT.filter(lambda s: s.strip() != "")),
    st.tuples(st.just("action"), st.dictionaries(st.sampled_from("abc"), VALUE, max_size=2),
              st.one_of(VALUE, UNTRACKED, st.none())),
)


def build(system: str | None, records: list[tuple[Any, ...]]) -> Branch:
    branch = Branch(system=system) if system else Branch()
    m = branch.msgs
    for record in records:
        if record[0] == "instruction":
            _, text, context, guidance, plain, image = record
            kwargs: dict[str, Any] = {"instruction": text, "context": context}
            if guidance is not None:
                kwargs["guidance"] = guidance
            if plain:
                kwargs["plain_content"] = plain
            if image:
                kwargs["images"] = [PNG]
            m.add_message(**kwargs)
        elif record[0] == "assistant":
            m.add_message(assistant_response=record[1])
        else:
            request = m.add_message(action_function="tool", action_arguments=record[1])
            m.add_message(action_request=request, action_output=record[2])
    return branch


@pytest.mark.slow
@given(
    system=st.one_of(st.none(), TEXT.filter(lambda s: s.strip() != "")),
    records=st.lists(RECORD, max_size=10),
)
def test_random_histories_identical_with_and_without_fast_path(
    system: str | None, records: list[tuple[Any, ...]]
) -> None:
    branch = build(system, records)
    request = current(branch)
    slow = slow_outcome(branch, request)
    assert outcome(branch, request) == slow  # cold
    assert outcome(branch, request) == slow  # warm: cache hits
    # The next turn: the same history plus one more exchange, compiled warm.
    if slow[0] == "ok":
        branch.msgs.add_message(instruction=request.instruction)
        branch.msgs.add_message(assistant_response="ok")
        nxt = TurnRequest(instruction=branch.msgs.create_instruction(instruction="again"))
        assert outcome(branch, nxt) == slow_outcome(branch, nxt)
