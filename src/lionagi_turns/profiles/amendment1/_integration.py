"""``install(profile="amendment1")``: lionagi's call surfaces compile through this profile.

- ``activate(budgets)`` / ``deactivate()``: called by ``integration.install``/``uninstall``.
  Activation replaces ``lionagi.tools.context.context.ContextTool.bind`` with the recording
  wrapper (``_views.record_context_tool``), so every evict/compact done through lionagi's
  context tool records its reason at the source; it refuses (``IntegrationError``) when
  ``bind`` is not lionagi's own function. Deactivation restores exactly lionagi's function.
- ``amended_request(branch, request)``: the default adapter's ``TurnRequest`` (lionagi's call
  arguments, built by ``integration._adapters``) as this profile's request: its blocks as
  material ``ContextBlock`` values and ``skipped`` read exactly from the branch's registry
  and ``last_context_report`` (``read_skips``; names whose reason lionagi does not determine
  are not guessed: ``last_skip_reading(branch)`` lists them, per branch object).
- ``compile_installed(branch, request)``: compiles under the installed budgets with the
  caller's ReAct items taken from lionagi's ``_react_context`` (read here, in the adapter;
  the compiler itself takes them as an argument).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from lionagi_turns.core.contracts import TurnRequest as DefaultRequest
from lionagi_turns.core.history import branch_system
from lionagi_turns.core.support import IntegrationError
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
from lionagi_turns.profiles.amendment1._views import record_context_tool
from lionagi_turns.profiles.composed import SegmentedBlocks, compile_cached_amended

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = (
    "activate",
    "amended_request",
    "budgets",
    "ceiling",
    "compile_installed",
    "compile_installed_cached",
    "deactivate",
    "last_skip_reading",
)

_lock = threading.RLock()
_state: dict[str, Any] = {"budgets": None, "bind": None, "ceiling": None}
# keyed by the branch object itself (not its id: a copy restored with from_dict shares it)
_readings: BranchSlot[SkipReading] = BranchSlot("amendment1.skips")


def _context_tool() -> Any:
    from lionagi.tools.context.context import ContextTool

    return ContextTool


def activate(budgets_: SectionBudgets | None, ceiling: InputCeiling | None = None) -> None:
    if budgets_ is not None and not isinstance(budgets_, SectionBudgets):
        raise TypeError(
            f"install(budgets=...) takes an amendment1.SectionBudgets, got "
            f"{type(budgets_).__name__}"
        )
    if ceiling is not None:
        if not isinstance(ceiling, InputCeiling):
            raise TypeError(
                f"install(ceiling=...) takes an amendment1.InputCeiling, got "
                f"{type(ceiling).__name__}"
            )
        ceiling_budgets(ceiling, budgets_ or SectionBudgets(), 0, 0)  # refuses a bad pairing
    with _lock:
        tool = _context_tool()
        current = tool.__dict__["bind"]
        if _state["bind"] is None:
            if getattr(current, "__qualname__", "") != "ContextTool.bind" or getattr(
                current, "__module__", ""
            ) != "lionagi.tools.context.context":
                raise IntegrationError(
                    "cannot install the amendment1 profile: lionagi's ContextTool.bind is "
                    f"{current!r}, not lionagi 0.36's own; undo the other patch first"
                )
            tool.bind = record_context_tool(current)
            _state["bind"] = current
        _state["budgets"] = budgets_
        _state["ceiling"] = ceiling


def deactivate() -> None:
    with _lock:
        original = _state["bind"]
        if original is None:
            return
        tool = _context_tool()
        if not getattr(tool.__dict__["bind"], "__lionagi_turns_recording__", False):
            raise IntegrationError(
                "cannot uninstall the amendment1 profile: ContextTool.bind was replaced after "
                "install(); undo that patch first"
            )
        tool.bind = original
        _state["bind"] = None
        _state["budgets"] = None
        _state["ceiling"] = None


def budgets() -> SectionBudgets | None:
    """The budgets the installed profile compiles with."""
    return _state["budgets"]


def ceiling() -> InputCeiling | None:
    """The input ceiling the installed profile compiles with."""
    return _state["ceiling"]


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


def _check_excluded(branch: Branch) -> None:
    """Warns about an excluded tool name the branch has not registered (``_clearing``)."""
    installed = ceiling()
    if installed is not None:
        warn_unknown_tools(installed.clearing, branch.acts.registry)


def compile_installed(branch: Branch, request: DefaultRequest) -> CompiledChatRequest:
    from lionagi.operations.chat._prepare import _react_context

    _check_excluded(branch)
    return compile_chat_request(
        branch,
        amended_request(branch, request),
        budgets=budgets(),
        react_context=_react_context.get() or None,
        ceiling=ceiling(),
    )


def compile_installed_cached(
    branch: Branch, request: DefaultRequest
) -> tuple[CompiledChatRequest, SegmentedBlocks]:
    """``compile_installed`` on an endpoint that places the prompt cache: Amendment 1 composed
    with the ADR-0127 layout (``_cached``), over the Branch's tool set; returns the compiled
    request and the adapter's ``system_blocks``."""
    from lionagi.operations.chat._prepare import _react_context

    _check_excluded(branch)
    compiled, blocks, _ = compile_cached_amended(
        branch,
        amended_request(branch, request),
        list(branch.acts.schema_list),
        budgets=budgets(),
        react_context=_react_context.get() or None,
        ceiling=ceiling(),
    )
    return compiled, blocks
