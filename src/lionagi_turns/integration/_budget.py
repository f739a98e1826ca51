"""``get_token_budget`` counting what is sent (replaces lionagi's under ``install()``).

lionagi's ``get_token_budget`` (behind ``Branch.token_budget``, the agent nudge's status line
and the engine's "context critical" check) adds up the tokens of each recorded message's
content. Under ``install()`` a recorded instruction keeps only its durable content (ADR-0007
D1), while each request re-sends the current turn's tool schemas and response format, so that
sum is no longer the size of what the model receives. This version keeps lionagi's ``limit``
and ``model`` (it calls lionagi's own function) and replaces ``used``:

- inside an API_PRE_CALL emit for the branch: the input tokens of the request that call sends
  (``_in_call.payload_in_call``);
- otherwise: the input tokens of the request of the newest instruction in the active view, as
  the view now renders it: the records before that instruction as history, the instruction as
  the current turn with the call options its own call had (tool schemas, response format,
  structure, provider kwargs; none for an instruction no adapter compiled) and the context
  blocks of the branch's ``last_context_report``. While nothing changed since that call, this
  is exactly what it sent; after a fold, what the folded view sends. Records after that
  instruction (its answer, tool calls and results) count from the next request on, which
  ``estimate_next_request_tokens`` estimates. With no instruction in the view: the view with
  an instruction of no text as the current turn (the system message alone, say); 0 for an
  empty view;
- counted with ``estimate_payload_input_tokens``, the count lionagi's input cap and its
  context fold's estimate apply, on the payload the model's endpoint builds; when that count
  is 0 (a CLI endpoint's payload wraps its request object, which the count does not read),
  on the compiled kwargs themselves (their messages), so a CLI branch is not reported empty.

A view the compiler refuses keeps lionagi's own ``used``, with one warning per branch naming
the compiler's error (``get_token_budget``).
It does not write to the branch.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from lionagi_turns.core.contracts import TurnRequest
from lionagi_turns.core.history import HistoryError
from lionagi_turns.integration._compile import provider_kwargs
from lionagi_turns.integration._estimate import current_blocks, newest_instruction, turn_options
from lionagi_turns.integration._in_call import request_in_call
from lionagi_turns.integration._originals import original_token_budget
from lionagi_turns.integration._registry import compile_installed
from lionagi_turns.integration._warnings import warn_once

if TYPE_CHECKING:
    from lionagi.protocols.messages import Instruction
    from lionagi.service.imodel import iModel
    from lionagi.service.token_budget import TokenBudget
    from lionagi.session.branch import Branch

__all__ = ("get_token_budget", "used_tokens")


def get_token_budget(branch: Branch) -> TokenBudget:
    """lionagi's ``TokenBudget`` for ``branch`` with ``used`` as the module contract says.

    A view the compiler refuses (a branch whose turns failed without ``install()``, before the
    next installed call records its markers) keeps lionagi's own ``used`` and warns once per
    branch with the compiler's error: reading a figure never raises where lionagi's does not.
    """
    budget: TokenBudget = original_token_budget()(branch)
    try:
        used = used_tokens(branch)
    except HistoryError as exc:
        warn_once(
            f"token-budget-refused:{branch.id}",
            f"token_budget.used of branch {branch.id} is lionagi's own sum of the recorded "
            f"messages: the compiler refuses this history ({exc}). Next step: the next "
            "installed call records a marker after each unanswered instruction first, or await "
            "lionagi_turns.mark_unanswered_turns(branch); `lionagi-turns check` lists every "
            "defect of a saved branch.",
        )
        return budget
    return dataclasses.replace(budget, used=used)


def used_tokens(branch: Branch) -> int:
    """Input tokens of what ``branch`` sends (see the module contract)."""
    found = request_in_call(branch)
    if found is None:
        if not branch.progression:
            return 0
        found = (branch.chat_model, _view_kwargs(branch))
    model, kwargs = found
    return _count(model, kwargs)


def _count(model: iModel, kwargs: dict[str, object]) -> int:
    from lionagi.service.connections.api_calling import estimate_payload_input_tokens

    payload, _headers = model.endpoint.create_payload(request=dict(kwargs))
    counted = int(estimate_payload_input_tokens(payload))
    return counted if counted else int(estimate_payload_input_tokens(kwargs))


def _view_kwargs(branch: Branch) -> dict[str, object]:
    view = list(branch.progression)
    newest = newest_instruction(branch)
    if newest is None:
        current, progression = _no_text(branch), None
    else:
        current, progression = newest, tuple(view[: view.index(newest.id)])
    options = turn_options(current)
    request = TurnRequest(
        instruction=current,
        progression=progression,
        tool_schemas=options.tool_schemas if options else (),
        response_format=options.response_format if options else None,
        structure=options.structure if options else None,
        context_blocks=current_blocks(branch),
        provider_kwargs=dict(options.provider_kwargs) if options else {},
    )
    return provider_kwargs(compile_installed(branch, request))


def _no_text(branch: Branch) -> Instruction:
    """An instruction with no text of its own (never recorded)."""
    instruction: Instruction = branch.msgs.create_instruction(instruction=None)
    return instruction
