"""Resumed CLI turns: the view the CLI session does not already hold (issue 9 item 6).

Which turns are resumed is read from lionagi's own code, never from the presence of a session
id (issue 18): lionagi 0.36's ``iModel.create_api_calling`` adds ``resume=<session id>`` to the
request of every agentic endpoint that holds one, and the endpoint's request model decides what
that does. A turn is resumed when that request model, given a conversation and ``resume``,
builds a prompt of the last message alone (``sends_last_message_only``). Measured on lionagi
0.36: claude_code (``--resume``) and gemini_code (``agy --conversation``) do; codex (its request
model has no ``resume`` field and every ``codex exec`` starts a new thread, although the
endpoint stores the thread id) and pi (no ``resume`` field; it reports no session) render the
whole conversation into every prompt, so their turns are never resumed here.

A resumed CLI model is sent only the last message of the request (the session keeps the
earlier turns itself). ADR-0007 D2 §4 folds the system text and the D3 context section into the
*first* retained instruction, so on a resumed turn the context blocks gathered for it would
never reach the model.

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
import warnings
from typing import TYPE_CHECKING

from lionagi.protocols.messages import AssistantResponse, Instruction
from lionagi.service.connections.agentic_endpoint import AgenticEndpoint
from pydantic import BaseModel, ValidationError

from lionagi_turns.core.contracts import TurnRequest
from lionagi_turns.core.history import select_ids
from lionagi_turns.integration._state import STATE
from lionagi_turns.integration._warnings import TurnsCompatibilityWarning

if TYPE_CHECKING:
    from collections.abc import Sequence
    from uuid import UUID

    from lionagi.session.branch import Branch

__all__ = ("PROBE_CONVERSATION", "is_resumed_cli", "resumed_view", "sends_last_message_only")

#: The conversation ``sends_last_message_only`` hands a request model (three distinct texts).
PROBE_CONVERSATION: tuple[dict[str, str], ...] = (
    {"role": "user", "content": "lionagi-turns probe: first question"},
    {"role": "assistant", "content": "lionagi-turns probe: first answer"},
    {"role": "user", "content": "lionagi-turns probe: current question"},
)
_PROBE_SESSION = "lionagi-turns-probe-session"


def is_resumed_cli(model: object) -> bool:
    """Whether lionagi sends a turn on ``model`` as the last message alone, to a CLI session.

    True exactly when lionagi's ``iModel`` adds ``resume`` to the call (``model.endpoint`` is
    an ``AgenticEndpoint`` holding a session id) and that endpoint's request model then keeps
    only the last message (``sends_last_message_only``)."""
    endpoint = getattr(model, "endpoint", None)
    if not isinstance(endpoint, AgenticEndpoint) or not endpoint.session_id:
        return False
    return sends_last_message_only(type(endpoint))


def sends_last_message_only(endpoint_type: type[AgenticEndpoint]) -> bool:
    """Whether ``endpoint_type``'s request model, given ``PROBE_CONVERSATION`` and the
    ``resume`` lionagi's ``iModel`` adds, builds a prompt of the last message alone.

    ``resume`` reaches the model only where lionagi's ``create_payload`` keeps it: a field of
    the request model, or any key when the endpoint does not filter to the model's fields.
    An endpoint without a request model (its own ``create_payload``) counts as not resuming.
    A request model that refuses the probe counts as not resuming too, and says so with one
    ``TurnsCompatibilityWarning`` (the whole view is then sent, as lionagi itself would).
    Decided once per endpoint class."""
    decided = STATE.resumes.get(endpoint_type)
    if decided is None:
        decided = STATE.resumes[endpoint_type] = _probe(endpoint_type)
    return decided




def _probe(endpoint_type: type[AgenticEndpoint]) -> bool:
    request_model: type[BaseModel] | None = getattr(endpoint_type, "_request_model", None)
    if request_model is None:
        return False
    data: dict[str, object] = {"messages": [dict(m) for m in PROBE_CONVERSATION]}
    if "resume" in request_model.model_fields or not getattr(
        endpoint_type, "_filter_model_fields", True
    ):
        data["resume"] = _PROBE_SESSION
    try:
        prompt = getattr(request_model.model_validate(data), "prompt", None)
    except ValidationError as exc:
        warnings.warn(
            f"lionagi-turns: {endpoint_type.__name__}'s request model refused a probe "
            f"conversation ({exc.error_count()} errors), so its turns are compiled as not "
            "resumed (the whole view, as lionagi sends it)",
            TurnsCompatibilityWarning,
            stacklevel=3,
        )
        return False
    return prompt == PROBE_CONVERSATION[-1]["content"]


def resumed_view(
    branch: Branch,
    model: object,
    request: TurnRequest,
    *,
    react_context: Sequence[object] | None = None,
) -> tuple[TurnRequest, bool]:
    """``(request, held_back)``: ``request`` restricted to what a resumed CLI session does not
    hold when it carries context blocks on a resumed CLI model; otherwise ``request``
    unchanged. ``held_back`` is True when only ``react_context`` kept it from restricting."""
    if not request.context_blocks or not is_resumed_cli(model):
        return request, False
    if react_context:
        return request, True
    ids = select_ids(branch, request.progression)
    pile: dict[UUID, object] = branch.msgs.messages.collections  # type: ignore[has-type]
    cut = 0
    for i, uid in enumerate(ids):
        if isinstance(pile.get(uid), AssistantResponse | Instruction):
            cut = i + 1
    return dataclasses.replace(request, progression=tuple(ids[cut:])), False
