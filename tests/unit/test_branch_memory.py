"""The one compile memory (issue 26): every per-branch table is a named slot of one table of
live branches, dropped with the branch."""

from __future__ import annotations

import gc

import pytest
from lionagi import Branch

from lionagi_turns import TurnRequest, compile_chat_request
from lionagi_turns import amendment1 as a1
from lionagi_turns.memo import branch_memory
from lionagi_turns.memo.branch_memory import SLOTS, BranchSlot, slot_names
from lionagi_turns.profiles.prompt_cache._compile import compile_cached


def test_the_compile_memories_are_slots_of_one_table() -> None:
    import lionagi_turns.integration._capture  # the modules that make the slots
    import lionagi_turns.integration._repair
    import lionagi_turns.profiles.amendment1._integration  # noqa: F401

    assert set(slot_names()) >= {
        "resume", "prompt-cache", "amendment1", "amendment1.skips", "capture", "repair"}


def test_a_branch_compiled_by_every_profile_has_one_entry_holding_every_slot() -> None:
    b = Branch(system="s")
    b.msgs.add_message(instruction="q")
    b.msgs.add_message(assistant_response="a")
    for _ in range(2):  # the second compile of each is a next turn: every memory is written
        compile_chat_request(b, TurnRequest(instruction=b.msgs.create_instruction(instruction="n")))
        a1.compile_chat_request(b, a1.TurnRequest(
            instruction=b.msgs.create_instruction(instruction="n")), ceiling=a1.InputCeiling(9000))
        compile_cached(b, TurnRequest(instruction=b.msgs.create_instruction(instruction="n")), [])
    entry = SLOTS.get(b)
    assert entry is not None and {"resume", "prompt-cache", "amendment1"} <= set(entry)


def test_an_entry_goes_with_its_owner_whatever_its_slots() -> None:
    class Owner:
        pass

    one: BranchSlot[int] = BranchSlot("test.lifetime.one")
    two: BranchSlot[int] = BranchSlot("test.lifetime.two")
    owner = Owner()
    one.put(owner, 1)
    two.put(owner, 2)
    slot = id(owner)
    assert slot in one and slot in two
    del owner
    gc.collect()
    # other tests' branches may go in the same collection: only this entry is checked
    assert slot not in SLOTS and slot not in one and slot not in two
    branch_memory._names.remove("test.lifetime.one")
    branch_memory._names.remove("test.lifetime.two")


def test_a_slot_name_is_taken_once_and_forget_clears_only_its_own() -> None:
    with pytest.raises(ValueError, match="already has a slot named 'resume'"):
        BranchSlot("resume")
    one: BranchSlot[int] = BranchSlot("test.one")
    two: BranchSlot[int] = BranchSlot("test.two")
    owner = Branch()
    one.put(owner, 1)
    two.put(owner, 2)
    one.forget(owner)
    assert (one.get(owner), two.get(owner), id(owner) in two, id(owner) in one) == (
        None, 2, True, False)
    branch_memory._names.remove("test.one")
    branch_memory._names.remove("test.two")
