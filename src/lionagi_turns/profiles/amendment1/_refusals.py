"""Amendment 1's section records and refusals (D7): the five ``SectionBound`` records, and the
system, instruction or current round over its budget refused with all five.

Contract: ``section_bounds`` returns one record per section in ``SECTIONS`` order, what each
kept and left out; ``section_refusals`` the (section, used, budget, note) of each section over
its budget (the system and instruction first, else a current round over the ceiling), empty
when the request fits; ``refused`` the ``SectionBudgetRefused`` naming them, each note added.
Pure: the branch is read, never written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from lionagi_turns.core.history import branch_system
from lionagi_turns.core.render import CallOptions, render_view
from lionagi_turns.profiles.amendment1._bound import BoundDecision
from lionagi_turns.profiles.amendment1._ceiling import CURRENT_ROUND_NOTE, InputCeiling, Stepper
from lionagi_turns.profiles.amendment1._contracts import (
    SECTION_AUTHORITY,
    SECTION_POSTURE,
    SECTIONS,
    ContextBlock,
    LeftOut,
    SectionBound,
    SectionBudgetRefused,
    SectionBudgets,
)
from lionagi_turns.profiles.amendment1._meter import Meter

if TYPE_CHECKING:
    from lionagi.protocols.messages import Instruction
    from lionagi.session.branch import Branch

    from lionagi_turns.core.contracts import TurnRequest

__all__ = ("note", "refused", "section_bounds", "section_refusals")


def section_bounds(
    branch: Branch,
    instruction: Instruction,
    budgets: SectionBudgets,
    stepper: Stepper | None,
    decision: BoundDecision,
    blocks: Sequence[ContextBlock],
    context_left: tuple[LeftOut, ...],
) -> tuple[SectionBound, ...]:
    """D7's five records, in ``SECTIONS`` order: what each section kept and left out."""
    system = branch_system(branch)
    records = {
        "system": ((str(system.id),) if system is not None else (), ()),
        "instruction": ((str(instruction.id),), ()),
        "history": (decision.history_kept, decision.history_left),
        "context": (tuple(b.provider_name for b in blocks), context_left),
        "tool_results": (decision.results_kept, decision.results_left),
    }
    return tuple(
        SectionBound(
            section=name,  # type: ignore[arg-type]
            authority=SECTION_AUTHORITY[name],
            posture=SECTION_POSTURE[name],  # type: ignore[arg-type]
            budget=stepper.room if stepper is not None and name == "history"
            else getattr(budgets, name),
            kept=records[name][0],
            left_out=records[name][1],
        )
        for name in SECTIONS
    )


def section_refusals(
    branch: Branch,
    request: TurnRequest,
    budgets: SectionBudgets,
    meter: Meter,
    ceiling: InputCeiling | None,
    stepper: Stepper | None,
    current_context: list[object] | None,
) -> list[tuple[str, int, int, str]]:
    """(section, used, budget, note) for the system and instruction sections over their
    budgets, else for a current round over the ceiling; empty when the request fits."""
    refusals = []
    system = branch_system(branch)
    if budgets.system is not None and system is not None:
        used = meter.text(system.rendered)
        if used > budgets.system:
            refusals.append(("system", used, budgets.system,
                             note("system", "shorten the system message", ceiling)))
    if budgets.instruction is not None:
        if stepper is not None and stepper.own is not None and current_context is None:
            used = stepper.own  # the ceiling measured this very rendering
        else:
            own, _ = render_view(
                request.instruction.content,
                context=current_context,
                options=CallOptions(
                    request.tool_schemas, request.response_format, request.structure),
            )
            used = meter.content(own)
        if used > budgets.instruction:
            refusals.append(("instruction", used, budgets.instruction, note(
                "instruction", "shorten the instruction, its guidance or its call options",
                ceiling)))
    if not refusals and stepper is not None and stepper.used > stepper.limit:
        refusals.append(("tool_results", stepper.pending,
                         max(0, stepper.limit - stepper.fixed), CURRENT_ROUND_NOTE))
    return refusals


def note(name: str, hint: str, ceiling: InputCeiling | None) -> str:
    if ceiling is None:
        return f"{name}: {hint}, or raise SectionBudgets.{name}"
    return f"{name}: {hint}, or raise InputCeiling.tokens (now {ceiling.tokens})"


def refused(
    refusals: list[tuple[str, int, int, str]], bounds: tuple[SectionBound, ...]
) -> SectionBudgetRefused:
    parts = [
        f"the {name} section measures {used} tokens, over its budget of {budget}"
        for name, used, budget, _ in refusals
    ]
    exc = SectionBudgetRefused("section budget refused: " + "; ".join(parts), bounds)
    for _, _, _, note in refusals:
        exc.add_note(note)
    return exc
