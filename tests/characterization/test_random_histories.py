"""Random histories: every difference between lionagi 0.36 and the compiler is a registered one.

Hypothesis builds real Branches from instructions (guidance text or dict, context, plain content,
images), assistant responses and action results, with or without a system, then a turn with
random call options, context blocks and history selection (None, (), or ids with repeats and
missing ones). ``compare`` must explain every difference, errors included.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lionagi import Branch
from scenarios import GIF, TOOL, VERDICT_DICT, Verdict

from lionagi_turns import ContextBlock, TurnRequest
from lionagi_turns.characterize import compare

text = st.text(alphabet=st.sampled_from(list("ab :-#\n\t\r'\"{}é|>\\")), min_size=1, max_size=10)
guidance = st.none() | text | st.fixed_dictionaries({"k": text})
instruction = st.tuples(
    st.just("I"), text, guidance, st.none() | st.lists(text, max_size=2), st.none() | text,
    st.booleans(),
)
record = st.one_of(
    instruction,
    st.tuples(st.just("A"), text),
    st.tuples(st.just("R"), text, st.sampled_from([0, 1, "out\nput", {"k": [1]}])),
)
selection = st.one_of(st.none(), st.just(()), st.lists(st.integers(-1, 8), max_size=7))


def _record(branch: Branch, item: tuple[Any, ...]) -> None:
    if item[0] == "I":
        _, ins, guide, context, plain, image = item
        branch.msgs.add_message(
            instruction=ins, guidance=guide, context=context, plain_content=plain,
            images=[GIF] if image else None, sender="user", recipient=branch.id,
        )
    elif item[0] == "A":
        branch.msgs.add_message(assistant_response=item[1], sender=branch.id, recipient="user")
    else:
        call = branch.msgs.add_message(
            action_function="lookup", action_arguments={"term": item[1]},
            sender=branch.id, recipient="tools",
        )
        branch.msgs.add_message(action_request=call, action_output=item[2])


@pytest.mark.slow
@given(
    system=st.none() | text,
    history=st.lists(record, max_size=6),
    blocks=st.lists(st.tuples(text, text), max_size=2),
    current=st.tuples(st.none() | text, guidance, st.none() | text, st.booleans()),
    response_format=st.sampled_from([None, VERDICT_DICT, Verdict, Verdict(answer="a")]),
    tools=st.booleans(),
    pick=selection,
)
def test_every_difference_is_registered(
    system, history, blocks, current, response_format, tools, pick
):
    branch = Branch(system=system) if system and system.strip() else Branch()
    for item in history:
        _record(branch, item)
    ids = list(branch.msgs.progression)
    progression = (
        tuple(ids[i] if 0 <= i < len(ids) else uuid.uuid4() for i in pick) or None
        if isinstance(pick, list)
        else pick
    )
    ins, guide, plain, image = current
    request = TurnRequest(
        instruction=branch.msgs.create_instruction(
            instruction=ins or "q", guidance=guide, plain_content=plain,
            images=[GIF] if image else None, sender="user", recipient=branch.id,
        ),
        progression=progression,
        tool_schemas=(TOOL,) if tools else (),
        response_format=response_format,
        context_blocks=tuple(ContextBlock(name, content) for name, content in blocks),
    )
    result = compare(branch, request)
    assert result.ok, (result.unexplained, result.legacy_error, result.compiled_error)
