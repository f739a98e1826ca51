"""``install(profile="amendment1")``: lionagi's call surfaces compile through this profile.

- ``check_settings(budgets, ceiling)``: called by ``integration.install`` before it installs
  anything; refuses (``TypeError``) a value that is not an ``amendment1.SectionBudgets`` /
  ``InputCeiling``, and a ceiling the budgets cannot meet. The settings themselves live in
  the integration's installed cell; lionagi's ``ContextTool.bind`` is rebound (to
  ``_views.record_context_tool``'s wrapper) through the integration's patch table.
- ``amended_request(branch, request)``: the default adapter's ``TurnRequest`` (lionagi's call
  arguments, built by ``integration._adapters``) as this profile's request: its blocks as
  material ``ContextBlock`` values and ``skipped`` read exactly from the branch's registry
  and ``last_context_report`` (``read_skips``; names whose reason lionagi does not determine
  are not guessed: ``last_skip_reading(branch)`` lists them, per branch object).
- ``compile_installed(branch, request, budgets, ceiling)``: compiles under the installed
  budgets and ceiling (passed by the integration) with the
  caller's ReAct items taken from lionagi's ``_react_context`` (read here, in the adapter;
  the compiler itself takes them as an argument).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lionagi_turns.core.contracts import TurnRequest as DefaultRequest
from lionagi_turns.core.history import branch_system
from lionagi_turns.memo.branch_memory import BranchSlot
from lionagi_turns.profiles.amendment1._ceiling import InputCeiling, ceiling_budgets
from lionagi_turns.profiles.amendment1._clearing import warn_unknown_tools
from lionagi_turns.profiles.amendment1._compile import compile_chat_request
from lionagi_turns.profiles.amendment1._contracts import (
    CompiledChatRequest,
    ContextBlock,
    SectionBudgets,
    TurnRequest,
)
from lionagi_turns.profiles.amendment1._skips import SkipReading, read_skips
from lionagi_turns.profiles.composed import SegmentedBlocks, compile_cached_amended

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

    from lionagi_turns.core.trace import Trace

__all__ = (
    "amended_request",
    "check_settings",
    "compile_installed",
    "compile_installed_cached",
    "last_skip_reading",
)

# keyed by the branch object itself (not its id: a copy restored with from_dict shares it)
_readings: BranchSlot[SkipReading] = BranchSlot("amendment1.skips")


def check_settings(budgets: object, ceiling: object) -> None:
    """Refuse ``install(budgets=..., ceiling=...)`` values this profile cannot compile with."""
    if budgets is not None and not isinstance(budgets, SectionBudgets):
        raise TypeError(
            f"install(budgets=...) takes an amendment1.SectionBudgets, got "
            f"{type(budgets).__name__}"
        )
    if ceiling is not None:
        if not isinstance(ceiling, InputCeiling):
            raise TypeError(
                f"install(ceiling=...) takes an amendment1.InputCeiling, got "
                f"{type(ceiling).__name__}"
            )
        ceiling_budgets(ceiling, budgets or SectionBudgets(), 0, 0)  # refuses a bad pairing


def amended_request(branch: Branch, request: DefaultRequest) -> TurnRequest:
    """``request`` (the default adapter's) as an amendment1 request for ``branch``."""
    report = branch.last_context_report
    reading = read_skips(
        branch._context_providers, report, system_present=branch_system(branch) is not None
    )
    _readings.put(branch, reading)
    return TurnRequest(
        instruction=request.instruction,
        progression=request.progression,
        tool_schemas=request.tool_schemas,
        response_format=request.response_format,
        structure=request.structure,
        context_blocks=tuple(
            ContextBlock(b.provider_name, b.content) for b in request.context_blocks
        ),
        skipped=reading.skipped,
        provider_kwargs=request.provider_kwargs,
    )


def last_skip_reading(branch: Branch) -> SkipReading | None:
    """The skip reading of this very branch object's latest compile under the installed
    profile; None when it has none. Another branch with the same id (a copy restored with
    ``Branch.from_dict``) has its own."""
    return _readings.get(branch)


def _check_excluded(branch: Branch, ceiling: InputCeiling | None) -> None:
    """Warns about an excluded tool name the branch has not registered (``_clearing``)."""
    if ceiling is not None:
        warn_unknown_tools(ceiling.clearing, branch.acts.registry)


def compile_installed(
    branch: Branch,
    request: DefaultRequest,
    budgets: SectionBudgets | None,
    ceiling: InputCeiling | None,
) -> CompiledChatRequest:
    from lionagi.operations.chat._prepare import _react_context

    _check_excluded(branch, ceiling)
    return compile_chat_request(
        branch,
        amended_request(branch, request),
        budgets=budgets,
        react_context=_react_context.get() or None,
        ceiling=ceiling,
    )


def compile_installed_cached(
    branch: Branch,
    request: DefaultRequest,
    budgets: SectionBudgets | None,
    ceiling: InputCeiling | None,
) -> tuple[CompiledChatRequest, SegmentedBlocks, Trace]:
    """``compile_installed`` on an endpoint that places the prompt cache: Amendment 1 composed
    with the ADR-0127 layout (``_cached``), over the Branch's tool set; returns the compiled
    request, the adapter's ``system_blocks`` and the compile's trace (its fold plan)."""
    from lionagi.operations.chat._prepare import _react_context

    _check_excluded(branch, ceiling)
    compiled, blocks, result = compile_cached_amended(
        branch,
        amended_request(branch, request),
        list(branch.acts.schema_list),
        budgets=budgets,
        react_context=_react_context.get() or None,
        ceiling=ceiling,
    )
    return compiled, blocks, result.trace
