"""Resumed CLI turns: the view the CLI session does not already hold (issue 9 item 6).

A CLI model resumed with ``--resume`` (lionagi's ``iModel`` adds it whenever the endpoint holds a
session id) is sent only the last message of the request (lionagi's claude_code request model;
the session keeps the earlier turns itself). ADR-0007 D2 §4 folds the system text and the D3
context section into the *first* retained instruction, so on a resumed turn the context blocks
gathered for it would never reach the model.

Choice: a resumed CLI turn that carries context blocks is compiled against the records the
session does not already hold, i.e. ``TurnRequest.progression`` becomes the selected view's ids
after its last instruction or assistant response (in practice empty; action responses recorded
after the last exchange stay and fold into the current instruction, D2 §2). With no retained
instruction, D2 §4 makes the current instruction the fold target, so the one message the CLI
receives carries system text, the context section and the turn's guidance. Nothing the session
already holds is re-sent except the system text, which D2 §4 puts into every fold. A resumed
turn without context blocks is compiled as before (the session holds the whole fold already).

Not within one of ReAct's later calls (``react_context`` set): there the view without history
holds no carrier of the caller's context, so amended D2 §2 would have the current instruction
show it again on every round (measured: 46,950 vs lionagi's 24,257 prompt characters over five
rounds). Such a call keeps the whole view, as lionagi does (its blocks do not reach the session),
and ``resumed_view`` reports that it held back (a known gap, warned once by the adapter).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from lionagi.protocols.messages import AssistantResponse, Instruction

from .._contracts import TurnRequest
from .._history import select_ids

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("is_resumed_cli", "resumed_view")


def is_resumed_cli(model: Any) -> bool:
    """Whether a turn on ``model`` resumes a CLI session (only the last message is sent)."""
    return bool(getattr(model, "is_cli", False)) and (
        getattr(model, "provider_session_id", None) is not None
    )


def resumed_view(
    branch: Branch, model: Any, request: TurnRequest, *, react_context: Any = None
) -> tuple[TurnRequest, bool]:
    """``(request, held_back)``: ``request`` restricted to what a resumed CLI session does not
    hold when it carries context blocks on a resumed CLI model; otherwise ``request``
    unchanged. ``held_back`` is True when only ``react_context`` kept it from restricting."""
    if not request.context_blocks or not is_resumed_cli(model):
        return request, False
    if react_context:
        return request, True
    ids = select_ids(branch, request.progression)
    pile: dict[Any, Any] = branch.msgs.messages.collections  # type: ignore[has-type]
    cut = 0
    for i, uid in enumerate(ids):
        if isinstance(pile.get(uid), AssistantResponse | Instruction):
            cut = i + 1
    return dataclasses.replace(request, progression=tuple(ids[cut:])), False
