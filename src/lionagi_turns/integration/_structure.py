"""The Structure hand-over from the compiled request to lionagi's parse, and the caller's
``Instruction`` kept unchanged.

Compiled instructions carry no response_format (ADR-0007 D1), so lionagi's
``_try_propagate_structure`` finds no Structure on them. The adapter hands the Structure the
request rendered to parsing through a mapping from the recorded content's id to a weak reference
to the recorded Instruction that owns it. Nothing is evicted while that Instruction lives (a
finalizer drops the entry when it is collected), and a lookup matches only while that very
Instruction still holds that very content object, so a reused id can never hand over another
call's Structure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lionagi_turns.core.values import JsonObject
from lionagi_turns.integration._adapters import isolate_instruction
from lionagi_turns.integration._handover import Handover
from lionagi_turns.integration._in_call import note_built
from lionagi_turns.integration._originals import PARSE, PREPARE, original

if TYPE_CHECKING:
    from lionagi.operations.schema.structure import Structure
    from lionagi.operations.types import ChatParam, ParseParam
    from lionagi.protocols.messages import Instruction
    from lionagi.session.branch import Branch
    from pydantic import BaseModel

__all__ = ("build_instruction", "propagate_structure", "remember_structure", "structures")

structures: Handover[Structure] = Handover(lambda owner: owner.content)


def remember_structure(
    owner: Instruction,
    response_format: type[BaseModel] | JsonObject | BaseModel | None,
    structure: type[Structure] | str | None,
) -> None:
    """Keep the Structure lionagi builds for ``response_format`` for ``owner``'s content (no-op
    without a response format or when lionagi builds none)."""
    if response_format is None:
        return
    from lionagi.protocols.messages.instruction import _build_structure, _resolve_structure_cls

    instance = _build_structure(response_format, _resolve_structure_cls(structure))
    if instance is None:
        return
    structures.put(owner, instance)


def propagate_structure(content: object, parse_param: ParseParam) -> ParseParam:
    """lionagi's ``_try_propagate_structure``, then, when it found no Structure, the one this
    package's adapter rendered for the recorded instruction ``content``."""
    result: ParseParam = original(PARSE, "_try_propagate_structure")(content, parse_param)
    from lionagi.operations.schema.structure import Structure

    if isinstance(result.structure, Structure) or content is None:
        return result
    instance = structures.get(content)
    if instance is None:
        return result
    updated: ParseParam = result.with_updates(structure=instance)
    return updated


def build_instruction(branch: Branch, instruction: object, param: ChatParam) -> Instruction:
    """lionagi's ``_build_instruction`` on a copy of a caller-supplied ``Instruction``, so the
    caller's object is never updated in place."""
    built: Instruction = original(PREPARE, "_build_instruction")(
        branch, isolate_instruction(instruction), param
    )
    note_built(branch, built, param)
    return built
