"""The adapter's compile of one call (no side effect), and the choice of the prompt-cache
layout.

Contract:

- ``compile_call`` is what the installed ``_prepare_run_kwargs`` compiles for the same
  arguments, with no warning, no hand-over and no image-host check: the request the call
  describes (context blocks from the branch's report, a resumed CLI session's view), compiled
  by the installed profile (``_registry``), composed with the prompt-cache layout exactly when
  ``places_prompt_cache(imodel)``.
- ``places_prompt_cache`` is lionagi's ``endpoint.places_prompt_cache``, False inside
  ``seed_profile_forced()`` (a context-local switch: other threads and tasks are unaffected).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from lionagi_turns.core.history import branch_system, select_ids
from lionagi_turns.core.providers import to_provider_messages
from lionagi_turns.core.sections import system_block_sections
from lionagi_turns.integration._adapters import context_blocks_from_report, turn_request_from_param
from lionagi_turns.integration._react import react_context_now
from lionagi_turns.integration._registry import (
    compile_installed_cached,
    compile_installed_traced,
)
from lionagi_turns.integration._repair import others_in_flight
from lionagi_turns.integration._resume import resumed_view
from lionagi_turns.integration._unanswered import open_turn_ends

if TYPE_CHECKING:
    from uuid import UUID

    from lionagi.operations.types import ChatParam
    from lionagi.protocols.messages import Instruction
    from lionagi.session.branch import Branch

    from lionagi_turns.core.contracts import CompiledChatRequest, TurnRequest
    from lionagi_turns.core.trace import Trace
    from lionagi_turns.integration._registry import Compiled

__all__ = (
    "IN_FLIGHT_LEFT_OUT",
    "CompiledCall",
    "compile_call",
    "places_prompt_cache",
    "provider_kwargs",
    "seed_profile_forced",
)


@dataclass(frozen=True, slots=True)
class CompiledCall:
    """One call compiled as the adapter compiles it: the request it described, the compiled
    request, the kwargs lionagi sends (``messages`` included), whether a resumed ReAct
    round held its context blocks back, its fold (the message that carries it and its
    ``(label, text)`` parts, ``FoldParts.sections()``) when the installed profile hands back
    its trace, and, laid out for the prompt cache, each system block's section and text
    (``core.sections.system_block_sections``)."""

    request: TurnRequest
    compiled: Compiled
    kwargs: dict[str, Any]
    held_back: bool
    in_flight_left_out: tuple[UUID, ...] = ()
    fold: tuple[int | None, tuple[tuple[str, str], ...]] | None = None
    # laid out for the prompt cache: each system block's section and text
    system_sections: tuple[tuple[str, str], ...] = ()


def provider_kwargs(compiled: Compiled) -> dict[str, Any]:
    """``compiled``'s provider kwargs plus its ``messages`` in provider form."""
    # Both compiled types carry the instruction/messages/provider_kwargs the projection reads.
    messages = to_provider_messages(cast("CompiledChatRequest", compiled))
    return {**compiled.provider_kwargs, "messages": messages}


def compile_call(
    branch: Branch,
    ins: Instruction,
    param: ChatParam,
    *,
    context_blocks: Sequence[str] | None,
    imodel: object,
) -> CompiledCall:
    """The adapter's compile of one call (see the module contract)."""
    blocks = context_blocks_from_report(context_blocks, branch.last_context_report)
    request = turn_request_from_param(branch, ins, param, context_blocks=blocks)
    model = imodel if imodel is not None else getattr(branch, "chat_model", None)
    request, held_back = resumed_view(branch, model, request, react_context=react_context_now())
    request, left_out = _without_other_calls(branch, request)
    extra: dict[str, object] = {}
    compiled: Compiled
    trace: Trace | None
    system_sections: tuple[tuple[str, str], ...] = ()
    if places_prompt_cache(imodel):
        compiled, system_blocks, trace = compile_installed_cached(branch, request)
        extra["system_blocks"] = system_blocks
        system = branch_system(branch)
        names = system_block_sections(system is not None and bool(system.rendered),
                                      system_blocks.stable_count, len(system_blocks))
        system_sections = tuple(zip(names, system_blocks, strict=True))
    else:
        compiled, trace = compile_installed_traced(branch, request)
    fold = None
    if trace is not None:
        parts = trace.fold.parts.sections() if trace.fold is not None else []
        fold = (trace.fold_message_index, tuple(parts))
    kwargs = {**provider_kwargs(compiled), **extra}
    return CompiledCall(
        request=request,
        compiled=compiled,
        kwargs=kwargs,
        held_back=held_back,
        in_flight_left_out=left_out,
        fold=fold,
        system_sections=system_sections,
    )


def _without_other_calls(
    branch: Branch, request: TurnRequest
) -> tuple[TurnRequest, tuple[UUID, ...]]:
    """``request`` with the open turns of other calls in flight on the branch left out of its
    view (their instruction and the records up to the turn's end), and the instruction ids
    left out; ``request`` itself when no such turn is in its view."""
    flying = others_in_flight()
    if not flying:
        return request, ()
    pile: dict[UUID, Any] = branch.msgs.messages.collections  # type: ignore[has-type]
    ids = list(select_ids(branch, request.progression))
    ends = open_turn_ends(pile, ids)
    left_out = tuple(uid for uid in ends if uid in flying)
    if not left_out:
        return request, ()
    dropped: set[int] = set()
    for uid in left_out:
        start = ids.index(uid)
        dropped.update(range(start, ends[uid]))
    kept = tuple(uid for index, uid in enumerate(ids) if index not in dropped)
    return dataclasses.replace(request, progression=kept), left_out


IN_FLIGHT_LEFT_OUT = (
    "lionagi-turns: calls overlap on branch {branch}: a call's request leaves out the "
    "instructions other calls recorded and are still awaiting an answer for (each call sees the "
    "records up to its own instruction without those open turns; a capture record lists their "
    "ids as in_flight_left_out). Nothing was removed from the branch, and each answer is "
    "recorded in its own turn."
)

_seed_forced: ContextVar[bool] = ContextVar("lionagi_turns_seed_forced", default=False)


def places_prompt_cache(imodel: object) -> bool:
    """Whether the call's endpoint places the prompt cache (lionagi's ``places_prompt_cache``)
    and the seed profile is not forced. Such a call uses the prompt-cache profile (ADR-0127),
    composed with Amendment 1's bounds under ``install(profile="amendment1")``."""
    if _seed_forced.get():
        return False
    return endpoint_places_cache(imodel)


def endpoint_places_cache(imodel: object) -> bool:
    """lionagi's ``imodel.endpoint.places_prompt_cache`` (False when absent)."""
    return bool(getattr(getattr(imodel, "endpoint", None), "places_prompt_cache", False))


@contextmanager
def seed_profile_forced() -> Iterator[None]:
    """Compile with the seed profile even on a prompt-cache endpoint, in this context (for the
    benchmark's before/after figures and tests; the system is then folded, as ADR-0007 says)."""
    token = _seed_forced.set(True)
    try:
        yield
    finally:
        _seed_forced.reset(token)
