"""lionagi 0.36's own provider messages for a turn, computed live (the characterization baseline).

``legacy_messages(branch, request)`` expresses a ``TurnRequest`` in lionagi 0.36's terms and runs
lionagi's active preparation function, ``lionagi.operations.chat._prepare._prepare_run_kwargs``,
on it. The function object is captured when this module is imported, so a later rebinding of
call-site names (``lionagi_turns.integration.install()``) cannot route the baseline through the
compiler it is compared with.

Translation (``TurnRequest`` -> lionagi call):

- ``progression``: a non-empty tuple -> that list of ids; ``None`` and ``()`` -> ``None`` (lionagi
  then reads ``branch.progression``; it has no way to say "no history").
- ``tool_schemas`` / ``response_format`` / ``structure``: put on a deep copy of
  ``request.instruction`` (lionagi renders them from the instruction's content) and on the
  ``ChatParam``.
- ``context_blocks`` -> their ``content`` strings, in order (lionagi drops provider names).
- ``provider_kwargs`` -> ``ChatParam.imodel_kw``.

Guarantees: ``request.instruction`` is never mutated; the returned list is lionagi's
``kw["messages"]`` as lionagi built it. Whatever lionagi raises propagates unchanged. No model is
passed, so lionagi's prompt-cache placement (ADR-0127) is off, as for ordinary endpoints.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from types import SimpleNamespace
from typing import TYPE_CHECKING
from uuid import UUID

import lionagi.operations.chat._prepare as _lionagi_prepare
from lionagi.operations.types import ChatParam
from lionagi.protocols.messages import Instruction, System

from lionagi_turns.characterize._facts import JsonObject
from lionagi_turns.core.contracts import TurnRequest

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = (
    "LEGACY_PREPARE",
    "legacy_instruction",
    "legacy_messages",
    "legacy_messages_for_view",
    "legacy_messages_with_system",
)

#: lionagi's own ``_prepare_run_kwargs``, as defined by lionagi (captured at import).
LEGACY_PREPARE = _lionagi_prepare._prepare_run_kwargs


def legacy_instruction(request: TurnRequest) -> Instruction:
    """A deep copy of ``request.instruction`` whose content also carries the request's
    tool_schemas, response_format and structure, where lionagi 0.36 reads them."""
    source = request.instruction
    content = copy.deepcopy(source.content).with_updates(
        tool_schemas=[copy.deepcopy(s) for s in request.tool_schemas],
        response_format=copy.deepcopy(request.response_format),
        structure=request.structure,
    )
    copied: Instruction = source.model_copy(deep=True, update={"content": content})
    return copied


def _chat_param(request: TurnRequest, progression: list[UUID] | None) -> ChatParam:
    options: JsonObject = {
        "progression": progression,
        "tool_schemas": [copy.deepcopy(s) for s in request.tool_schemas] or None,
        "response_format": copy.deepcopy(request.response_format),
        "structure": request.structure,
        "imodel_kw": copy.deepcopy(dict(request.provider_kwargs)),
    }
    return ChatParam(**{k: v for k, v in options.items() if v is not None})


def legacy_messages(branch: Branch, request: TurnRequest) -> list[JsonObject]:
    """lionagi 0.36's provider messages for ``request`` on ``branch`` (see the module rules).

    Raises whatever lionagi raises (e.g. ``NotFoundError`` for an id missing from the branch).
    """
    progression = list(request.progression) if request.progression else None
    return _run(branch, request, progression)


def legacy_messages_for_view(
    branch: Branch, request: TurnRequest, view: Sequence[UUID]
) -> list[JsonObject]:
    """lionagi 0.36's provider messages for ``request`` with exactly ``view`` as the history,
    an empty view included.

    lionagi itself cannot be asked for an empty history (it treats an empty progression as
    "use the branch's"); here lionagi reads a stand-in branch whose ``progression`` is ``view``
    and whose messages, system and tools are ``branch``'s own. ``branch`` is not modified.
    """
    stand_in = SimpleNamespace(
        progression=list(view),
        msgs=branch.msgs,
        acts=branch.acts,
        id=branch.id,
        user=branch.user,
    )
    return _run(stand_in, request, None)  # type: ignore[arg-type]


class _SystemShown:
    """``msgs`` as lionagi reads it, with ``system`` replaced (everything else is ``msgs``'s)."""

    def __init__(self, msgs: object, system: object) -> None:
        self._msgs, self.system = msgs, system

    def __getattr__(self, name: str) -> object:
        return getattr(self._msgs, name)


def legacy_messages_with_system(
    branch: Branch, request: TurnRequest, system: System
) -> list[JsonObject]:
    """lionagi 0.36's provider messages for ``request`` on ``branch`` had ``branch.msgs.system``
    been ``system`` (lionagi reads a stand-in branch; ``branch`` is not modified)."""
    stand_in = SimpleNamespace(
        progression=branch.progression,
        msgs=_SystemShown(branch.msgs, system),
        acts=branch.acts,
        id=branch.id,
        user=branch.user,
    )
    progression = list(request.progression) if request.progression else None
    return _run(stand_in, request, progression)  # type: ignore[arg-type]


def _run(
    branch: Branch, request: TurnRequest, progression: list[UUID] | None
) -> list[JsonObject]:
    blocks = [b.content for b in request.context_blocks]
    _, kw = LEGACY_PREPARE(
        branch,
        None,
        _chat_param(request, progression),
        ins=legacy_instruction(request),
        context_blocks=blocks or None,
    )
    messages: list[JsonObject] = kw["messages"]
    return messages
