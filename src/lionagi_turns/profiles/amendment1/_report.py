"""Plain-data reports of the Amendment 1 profile, for the CLI and for callers.

- ``bounds_rows(compiled)``: one row per section, in ``bounds`` order: ``section``,
  ``authority``, ``posture``, ``budget`` (None: unbounded), ``kept`` (the references),
  ``left_out`` (``{"name", "reason", "tokens"}`` each).
- ``exclusions_rows(branch)``: the messages the active view excludes but the record keeps,
  each ``{"id", "kind", "reason", "recorded"}`` (``recorded`` False: the reason is the
  fallback reading, see ``_views``).
- ``compile_report(branch, instruction, blocks, budgets, measure)``: compiles a next turn
  with instruction text ``instruction`` and returns ``{"messages", "bounds"}``; raises what
  ``compile_chat_request`` raises (``SectionBudgetRefused`` carries its rows in
  ``bounds_rows(exc)``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any
from uuid import UUID

from lionagi_turns.core.providers import to_provider_messages
from lionagi_turns.profiles.amendment1._compile import compile_chat_request
from lionagi_turns.profiles.amendment1._contracts import ContextBlock, SectionBudgets, TurnRequest
from lionagi_turns.profiles.amendment1._views import view_exclusions

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("bounds_rows", "compile_report", "exclusions_rows")


def bounds_rows(compiled_or_error: Any) -> list[dict[str, Any]]:
    """The bound records of a compiled request or a ``SectionBudgetRefused``, as rows."""
    return [
        {
            "section": b.section,
            "authority": b.authority.value,
            "posture": b.posture,
            "budget": b.budget,
            "kept": list(b.kept),
            "left_out": [
                {"name": e.name, "reason": e.reason, "tokens": e.tokens} for e in b.left_out
            ],
        }
        for b in compiled_or_error.bounds
    ]


def exclusions_rows(branch: Branch) -> list[dict[str, Any]]:
    reading = view_exclusions(branch, None)
    pile = branch.msgs.messages  # type: ignore[has-type]
    unrecorded = set(reading.unrecorded)
    return [
        {
            "id": e.name,
            "kind": type(pile[UUID(e.name)]).__name__,
            "reason": e.reason,
            "recorded": e.name not in unrecorded,
        }
        for e in reading.left_out
    ]


def compile_report(
    branch: Branch,
    instruction: str,
    blocks: Sequence[tuple[str, str]] = (),
    budgets: SectionBudgets | None = None,
    measure: Callable[[str], int] | None = None,
) -> dict[str, Any]:
    ins = branch.msgs.create_instruction(instruction=instruction)
    request = TurnRequest(
        instruction=ins, context_blocks=tuple(ContextBlock(n, c) for n, c in blocks)
    )
    compiled = compile_chat_request(branch, request, budgets=budgets, measure=measure)
    messages = to_provider_messages(compiled)  # type: ignore[arg-type]  # reads .messages only
    return {"messages": messages, "bounds": bounds_rows(compiled)}
