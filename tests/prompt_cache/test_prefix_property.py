"""ADR-0127 D1 as a property: over random turn sequences, each request is a prefix of the next
(system blocks equal, messages extended) unless the next request counted a segment change or a
history rewrite — and a counted change really changed what it names."""



from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lionagi import Branch
from pydantic import BaseModel

from lionagi_turns import ContextBlock, TurnRequest, to_provider_messages
from lionagi_turns.profiles.prompt_cache._compile import compile_cached

from ._tools import convert, lookup


class Answer(BaseModel):
    answer: str


class Plan(BaseModel):
    steps: list[str]


STEP = st.one_of(
    st.tuples(st.just("turn"), st.booleans(), st.sampled_from([None, Answer, Plan]),
              st.lists(st.sampled_from(["a", "b", "c"]), max_size=2, unique=True)),
    st.tuples(st.just("tool")),
    st.tuples(st.just("edit"), st.integers(min_value=0, max_value=20)),
)


def record_turn(branch: Branch, compiled: Any, i: int, act: bool) -> None:
    branch.msgs.add_message(instruction=compiled.instruction)
    branch.msgs.add_message(assistant_response=f"answer {i}")
    if act:
        request = branch.msgs.add_message(action_function="lookup",
                                          action_arguments={"term": str(i)},
                                          sender=branch.id, recipient="tools")
        branch.msgs.add_message(action_request=request, action_output=f"out {i}",
                                sender="tools", recipient=branch.id)


@pytest.mark.slow
@given(st.lists(STEP, min_size=1, max_size=8))
def test_prefix_holds_unless_a_counted_change(steps: list[tuple[Any, ...]]) -> None:
    branch = Branch(system="You are terse.", tools=[lookup])
    previous: tuple[list[str], list[dict[str, Any]]] | None = None
    for i, step in enumerate(steps):
        if step[0] == "tool":
            if "convert" not in {s["function"]["name"] for s in branch.acts.schema_list}:
                branch.register_tools(convert)
            continue
        if step[0] == "edit":
            instructions = [m for m in branch.messages if type(m).__name__ == "Instruction"]
            if instructions:
                target = instructions[step[1] % len(instructions)]
                target.content.prompt_context.append(f"edited {i}")
            continue
        _, act, fmt, names = step
        request = TurnRequest(
            instruction=branch.msgs.create_instruction(instruction=f"q{i}"),
            tool_schemas=tuple(branch.acts.schema_list) if act else (),
            response_format=fmt,
            context_blocks=tuple(ContextBlock(n, f"block {n}") for n in names),
        )
        result = compile_cached(branch, request, branch.acts.schema_list)
        current = (result.layout.system_blocks, to_provider_messages(result.compiled))
        changes = result.layout.changes
        if previous is not None:
            same_system = previous[0] == current[0]
            n = len(previous[1])
            prefix = current[1][:n] == previous[1] and len(current[1]) > n
            assert same_system == (not changes.stable and not changes.conversation)
            assert prefix == (not changes.rewrite)
        previous = current
        record_turn(branch, result.compiled, i, act)
