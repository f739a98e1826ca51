"""The adapter: lionagi's preparation of a chat or run call, compiled by this package.

Contract (the replacements ``install()`` puts in place, see ``_install``):

- ``prepare_run_kwargs`` compiles once (``_compile.compile_call``), checks image hosts, and
  returns ``(compiled.instruction, {**compiled.provider_kwargs, "messages": [...]})``; it raises
  before returning (so before any model call or recording) on any compile error.
- ``prepare_run_turn_kwargs`` is the same for lionagi's run operation, and marks the compiled
  instruction as a turn in flight until the run ends.
- ``apply_context_providers`` marks the unanswered instructions the branch holds before
  lionagi gathers its context providers.
- ``run_recording_outcome`` is lionagi's ``run()`` plus one explicit record when the turn ends
  unanswered.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio

from lionagi_turns.core.providers import check_image_hosts
from lionagi_turns.integration._capture import note_call
from lionagi_turns.integration._compaction import compact_before_call
from lionagi_turns.integration._compile import (
    IN_FLIGHT_LEFT_OUT,
    compile_call,
    endpoint_places_cache,
    places_prompt_cache,
)
from lionagi_turns.integration._estimate import remember_turn_options
from lionagi_turns.integration._in_call import note_compiled
from lionagi_turns.integration._originals import PREPARE, RUN, original
from lionagi_turns.integration._registry import current
from lionagi_turns.integration._repair import (
    REPAIR_WARNING,
    call_starting,
    note_call_instruction,
    note_run_instruction,
    repair_before_call,
    run_turn_ended,
    run_turn_starting,
)
from lionagi_turns.integration._structure import build_instruction, remember_structure
from lionagi_turns.integration._unanswered import record_unanswered, unanswered_reason
from lionagi_turns.integration._warnings import REACT_RESUME_BLOCKS_GAP, note_gaps, warn_once

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator
    from uuid import UUID

    from lionagi.operations.types import ChatParam, RunParam
    from lionagi.protocols.context_providers import ProviderReport
    from lionagi.protocols.messages import Instruction, RoledMessage
    from lionagi.session.branch import Branch

__all__ = (
    "apply_context_providers",
    "prepare_run_kwargs",
    "prepare_run_turn_kwargs",
    "run_recording_outcome",
)


async def apply_context_providers(
    branch: Branch, instruction: object, param: ChatParam, *, ins: Instruction | None = None
) -> tuple[Instruction | None, ProviderReport | None]:
    """lionagi's ``_apply_context_providers``, after marking the unanswered instructions the
    branch already holds (``_repair.repair_before_call``; a repair is announced with
    ``TurnsCompatibilityWarning`` once per branch). lionagi's chat and run operations await it
    before the pre-call hook and before compiling, so the fold's estimate, the context
    providers and the compiler all see the repaired branch. Then, under an Amendment 1
    ceiling with ``compaction``, the turns a drop step is about to leave out are summarized
    (``_compaction``)."""
    call_starting()
    markers = await repair_before_call(branch)
    if markers:
        warn_once(
            f"unanswered:{branch.id}", REPAIR_WARNING.format(branch=branch.id, count=len(markers))
        )
    found: tuple[Instruction | None, ProviderReport | None] = await original(
        PREPARE, "_apply_context_providers"
    )(branch, instruction, param, ins=ins)
    await compact_before_call(branch, ins, param, found)  # tier 3, before the compile
    return found


def prepare_run_kwargs(
    branch: Branch,
    instruction: object,
    param: ChatParam,
    *,
    ins: Instruction | None = None,
    context_blocks: Sequence[str] | None = None,
    imodel: object = None,
    _use_render_cache: bool = True,
) -> tuple[Instruction, dict[str, Any]]:
    """Drop-in for lionagi's ``_prepare_run_kwargs``: compile once, check image hosts, return
    ``(compiled.instruction, {**compiled.provider_kwargs, "messages": [...]})``.

    ``ins`` is the instruction lionagi built (built here from a copy of ``instruction`` when
    absent). ``context_blocks`` must be ``branch.last_context_report.blocks``; provider names
    come from that report's ``fired`` list. ``_use_render_cache`` is accepted and ignored.
    Raises before returning (so before any model call or recording) on any compile error.
    """
    del _use_render_cache
    if ins is None:
        ins = build_instruction(branch, instruction, param)
    note_gaps(endpoint_places_cache(imodel), places_prompt_cache(imodel))
    call = compile_call(branch, ins, param, context_blocks=context_blocks, imodel=imodel)
    if call.held_back:
        warn_once("react_resume_blocks", REACT_RESUME_BLOCKS_GAP)
    if call.in_flight_left_out:
        warn_once(f"in_flight:{branch.id}", IN_FLIGHT_LEFT_OUT.format(branch=branch.id))
    check_image_hosts(call.kwargs["messages"])
    compiled = call.compiled
    remember_structure(compiled.instruction, call.request.response_format, call.request.structure)
    remember_turn_options(compiled.instruction, call.request)
    note_call_instruction(compiled.instruction.id)
    note_compiled(branch, ins, call.kwargs)
    note_call(branch, call, current().profile.name)
    return compiled.instruction, dict(call.kwargs)


def prepare_run_turn_kwargs(
    branch: Branch,
    instruction: object,
    param: ChatParam,
    *,
    ins: Instruction | None = None,
    context_blocks: Sequence[str] | None = None,
    imodel: object = None,
    _use_render_cache: bool = True,
) -> tuple[Instruction, dict[str, Any]]:
    """``prepare_run_kwargs`` for lionagi's run operation: the compiled instruction, which
    lionagi records before the model call, is also a turn in flight until the run ends
    (``_repair.note_run_instruction``), so no other call on the branch marks it unanswered."""
    compiled, kwargs = prepare_run_kwargs(
        branch,
        instruction,
        param,
        ins=ins,
        context_blocks=context_blocks,
        imodel=imodel,
        _use_render_cache=_use_render_cache,
    )
    note_run_instruction(compiled.id)
    return compiled, kwargs


async def run_recording_outcome(
    branch: Branch, instruction: object, param: RunParam
) -> AsyncGenerator[RoledMessage]:
    """lionagi's ``run()``, unchanged, plus one record when the turn ends unanswered.

    Every message lionagi's run yields is passed through as is. When the run raises (or the
    caller closes the stream) after lionagi recorded the turn's instruction and before any
    assistant response to it was recorded, an explicit marker response is recorded right after
    the turn's records (``_unanswered.record_unanswered``), then the exception propagates
    unchanged. So the branch stays well-formed for the next call, nothing recorded is removed,
    and the next request is exactly what the compiler (and ``lionagi-turns compile``) shows for
    the saved branch. A failure to record the marker is noted on the original exception.
    """
    from lionagi.protocols.messages import Instruction

    stream = original(RUN, "run")(branch, instruction, param)
    recorded: Instruction | None = None
    turn: list[UUID] = []
    try:
        with run_turn_starting(turn):  # lionagi compiles and records the instruction here
            msg = await anext(stream, None)
        while msg is not None:
            if recorded is None and isinstance(msg, Instruction):
                recorded = msg
            yield msg
            msg = await anext(stream, None)
    except BaseException as exc:
        # Shielded: under a cancelled anyio scope every await would be cancelled again.
        with anyio.CancelScope(shield=True):
            await stream.aclose()
            if recorded is not None:
                await _record_or_note(branch, recorded, exc)
        raise
    finally:
        run_turn_ended(turn)


async def _record_or_note(branch: Branch, recorded: Instruction, exc: BaseException) -> None:
    try:
        await record_unanswered(branch, recorded, unanswered_reason(exc))
    except Exception as record_exc:
        exc.add_note(
            "lionagi-turns could not record that this turn ended unanswered "
            f"({type(record_exc).__name__}: {record_exc}); the next call on this "
            "branch will refuse the unanswered instruction"
        )
