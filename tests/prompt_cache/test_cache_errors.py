"""The prompt-cache profile keeps ADR-0007's named errors where lionagi 0.36's own
prompt-cache path goes on silently (registry entries ``consecutive-instructions`` and
``missing-ids``, which hold in this mode unchanged)."""

import re
from types import SimpleNamespace
from uuid import uuid4

import pytest
from lionagi import Branch
from lionagi.operations.chat._prepare import _prepare_run_kwargs
from lionagi.operations.types import ChatParam

from lionagi_turns import HistoryError, TurnRequest
from lionagi_turns.characterize import registry_entry
from lionagi_turns.core.errors import CONSECUTIVE_INSTRUCTIONS, MissingIdsError
from lionagi_turns.profiles.prompt_cache._compile import compile_cached

CACHE_MODEL = SimpleNamespace(endpoint=SimpleNamespace(places_prompt_cache=True))


def test_consecutive_instructions_raise_the_adr_error_where_lionagi_drops_one() -> None:
    branch = Branch(system="s")
    branch.msgs.add_message(instruction="a")
    branch.msgs.add_message(instruction="b")
    ins = branch.msgs.create_instruction(instruction="c")
    _, kw = _prepare_run_kwargs(branch, None, ChatParam(), ins=ins, imodel=CACHE_MODEL)
    assert "Instruction: b" not in str(kw["messages"])  # lionagi: "b" silently dropped
    with pytest.raises(HistoryError) as caught:
        compile_cached(branch, TurnRequest(instruction=ins), [])
    assert type(caught.value) is HistoryError
    assert str(caught.value) == CONSECUTIVE_INSTRUCTIONS
    assert registry_entry("consecutive-instructions").adr_clause == "D2.3"


def test_missing_ids_are_one_error_naming_them() -> None:
    branch = Branch(system="s")
    ins = branch.msgs.create_instruction(instruction="c")
    missing = uuid4()
    exact = (
        f"1 progression id(s) not found in branch.msgs.messages: {missing} (position 0: id "
        f"{missing} is not in branch.msgs.messages). Remove them from the progression or add "
        "the messages first."
    )
    with pytest.raises(MissingIdsError, match=f"^{re.escape(exact)}$"):
        compile_cached(branch, TurnRequest(instruction=ins, progression=(missing,)), [])
