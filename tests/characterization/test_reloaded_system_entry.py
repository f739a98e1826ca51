"""The ``reloaded-system`` entry: a branch reloaded with lionagi's ``Branch.from_dict``."""

from __future__ import annotations

import json

import pytest
from lionagi import Branch
from lionagi.protocols.messages import Instruction

from lionagi_turns import ContextBlock, TurnRequest
from lionagi_turns.characterize import REGISTRY, compare
from lionagi_turns.characterize.legacy import legacy_messages

SYSTEM = "You answer for the Northwind depot."


def reloaded(guidance: str | None) -> Branch:
    branch = Branch(system=SYSTEM)
    branch.msgs.add_message(instruction="first", guidance=guidance)
    branch.msgs.add_message(assistant_response="one")
    back = Branch.from_dict(json.loads(json.dumps(branch.to_dict(), default=str)))
    assert back.msgs.system is None  # lionagi 0.36's from_dict
    return back


@pytest.mark.parametrize(("guidance", "blocks", "entries"), [
    (None, (), ("reloaded-system",)),
    ("Be brief.", (), ("reloaded-system", "fold-separators")),
    (None, (ContextBlock("news", "n1"),), ("reloaded-system", "context-envelope",
                                          "fold-separators")),
])
def test_a_reloaded_branch_differs_from_lionagi_only_by_its_folded_system(
    guidance: str | None, blocks: tuple[ContextBlock, ...], entries: tuple[str, ...]
) -> None:
    branch = reloaded(guidance)
    request = TurnRequest(instruction=Instruction(content={"instruction": "next"}),
                          context_blocks=blocks)
    assert SYSTEM not in json.dumps(legacy_messages(branch, request))
    result = compare(branch, request)
    assert result.ok, result.unexplained
    assert set(result.entries) == set(entries)
    without = tuple(e for e in REGISTRY if e.id != "reloaded-system")
    assert not compare(branch, request, registry=without).ok
