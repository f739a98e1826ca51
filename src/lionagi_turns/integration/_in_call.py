"""The request of the call in progress, while lionagi's API_PRE_CALL hook runs.

lionagi's ``chat`` fires API_PRE_CALL after it built the call's instruction and gathered its
context providers, and before it compiles the request (so a handler that curates the active
view, the host-side context fold, shapes the request it precedes); ``run`` fires it once the
request is compiled. ``install()`` replaces the name ``emit_api_pre_call`` in both modules by
``emit_api_pre_call`` below, which marks the call in progress for the duration of the emit.

Contract:

- ``note_built`` (the installed ``_build_instruction``) and ``note_compiled`` (the installed
  ``_prepare_run_kwargs``) remember, in the calling task's context, the instruction and
  options a call built for a branch and the kwargs it compiled. Neither writes to the branch.
- ``request_in_call(branch)`` is None outside an API_PRE_CALL emit for ``branch``. Inside one
  it is the call's model and the kwargs its request sends: in ``run``, the kwargs already
  compiled; in ``chat``, the adapter's compile (``_compile.compile_call``) of the built
  instruction against the branch's view as it is at the moment of asking, so a fold made by an
  earlier hook handler is reflected, with the context blocks of the branch's
  ``last_context_report`` (lionagi set it for this call before the emit).
  ``payload_in_call(branch)`` is the provider payload the call's model endpoint builds from
  those kwargs.
- The marks are cleared when the emit ends (raised or not), so they never outlive the call.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lionagi_turns.integration._compile import compile_call

if TYPE_CHECKING:
    from lionagi.operations.types import ChatParam
    from lionagi.protocols.messages import Instruction
    from lionagi.service.imodel import iModel
    from lionagi.session.branch import Branch

__all__ = (
    "emit_api_pre_call",
    "note_built",
    "note_compiled",
    "payload_in_call",
    "request_in_call",
)


@dataclass(frozen=True, slots=True)
class _Built:
    branch: Branch
    instruction: Instruction
    param: ChatParam


@dataclass(frozen=True, slots=True)
class _Compiled:
    branch: Branch
    instruction: Instruction
    kwargs: dict[str, object]


@dataclass(frozen=True, slots=True)
class _Calling:
    branch: Branch
    imodel: iModel | None
    built: _Built | None
    compiled: _Compiled | None


_built: ContextVar[_Built | None] = ContextVar("lionagi_turns_built", default=None)
_compiled: ContextVar[_Compiled | None] = ContextVar("lionagi_turns_compiled", default=None)
_calling: ContextVar[_Calling | None] = ContextVar("lionagi_turns_calling", default=None)


def note_built(branch: Branch, instruction: Instruction, param: ChatParam) -> None:
    """Remember the instruction and options the call in this task built for ``branch`` (a new
    call: what an earlier call compiled is forgotten)."""
    _built.set(_Built(branch, instruction, param))
    _compiled.set(None)


def note_compiled(branch: Branch, instruction: Instruction, kwargs: dict[str, object]) -> None:
    """Remember the kwargs the call in this task compiled for ``instruction`` on ``branch``."""
    _compiled.set(_Compiled(branch, instruction, dict(kwargs)))


async def emit_api_pre_call(branch: Branch, imodel: iModel | None) -> None:
    """lionagi's ``emit_api_pre_call``, with this call marked in progress while it runs."""
    from lionagi.operations import _api_hooks

    built = _built.get()
    compiled = _compiled.get()
    token = _calling.set(
        _Calling(
            branch=branch,
            imodel=imodel,
            built=built if built is not None and built.branch is branch else None,
            compiled=compiled if compiled is not None and compiled.branch is branch else None,
        )
    )
    try:
        await _api_hooks.emit_api_pre_call(branch, imodel)
    finally:
        _calling.reset(token)
        _built.set(None)
        _compiled.set(None)


def request_in_call(branch: Branch) -> tuple[iModel, dict[str, object]] | None:
    """The call in progress's model and the kwargs it sends (``messages`` included), or None
    outside an API_PRE_CALL emit for ``branch`` (see the contract)."""
    calling = _calling.get()
    if calling is None or calling.branch is not branch:
        return None
    kwargs = _kwargs(calling)
    if kwargs is None:
        return None
    model = calling.imodel if calling.imodel is not None else branch.chat_model
    return model, dict(kwargs)


def payload_in_call(branch: Branch) -> dict[str, object] | None:
    """The provider payload of the request the call in progress sends (see the contract)."""
    found = request_in_call(branch)
    if found is None:
        return None
    model, kwargs = found
    payload, _headers = model.endpoint.create_payload(request=kwargs)
    result: dict[str, object] = payload
    return result


def _kwargs(calling: _Calling) -> dict[str, object] | None:
    built, compiled = calling.built, calling.compiled
    if compiled is not None and (built is None or compiled.instruction is built.instruction):
        return compiled.kwargs
    if built is None:
        return None
    call = compile_call(
        calling.branch,
        built.instruction,
        built.param,
        context_blocks=_report_blocks(calling.branch),
        imodel=calling.imodel,
    )
    return call.kwargs


def _report_blocks(branch: Branch) -> list[str] | None:
    """The blocks lionagi's chat hands its preparation: none without providers, else those of
    the report its gather (or its skip for want of a system message) just set."""
    if not branch._context_providers:
        return None
    report = branch.last_context_report
    return None if report is None else report.blocks
