"""``estimate_next_request_tokens`` through the compiler (replaces lionagi's under ``install()``).

lionagi's host-side context fold (``lionagi.agent.context_fold``) estimates the next request by
compiling the branch's active view with the newest recorded instruction standing in for the turn
about to be built. Its own version calls lionagi's legacy preparation, which under ``install()``
is no longer what is sent, and the recorded stand-in carries no tools or response format (D1),
so the estimate runs low. This version:

- inside an API_PRE_CALL emit for the branch (where the fold estimates) counts the request that
  call sends (``_in_call.payload_in_call``): the estimate is exact there, and follows a fold an
  earlier handler made. Everywhere else:
- compiles with ``compile_chat_request`` (under ``install(profile="amendment1")``: that
  profile's compile, budgets included), the request the adapter would build, the newest
  instruction in ``branch.progression`` as the current turn (0 when there is none);
- gives that turn the call options its own call had (tool schemas, response format, structure,
  provider kwargs), which the adapter keeps in ``turn_options`` beside the recorded instruction,
  never on it: D1's durable record stays free of them. An instruction no adapter compiled
  (recorded by plain lionagi, or reloaded) gets none;
- passes lionagi's ReAct caller context (``core.react.react_context_now``), as the adapter does;
- adds the context blocks of the branch's ``last_context_report`` when the branch has providers
  and a system message (lionagi gathers them before the pre-call hook, so inside a call they are
  the blocks this very request carries);
- builds the provider payload with the chat model's endpoint and counts it with lionagi's own
  ``estimate_payload_input_tokens`` (the count the input cap applies).

Outside a call, like lionagi's, the estimate errs by the difference between the stand-in and
the instruction to be built. It does not write to the branch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lionagi_turns.core.consistent import read_order
from lionagi_turns.core.contracts import ContextBlock, TurnRequest
from lionagi_turns.core.history import branch_system
from lionagi_turns.core.values import JsonObject
from lionagi_turns.integration._adapters import context_blocks_from_report
from lionagi_turns.integration._compile import provider_kwargs
from lionagi_turns.integration._handover import Handover
from lionagi_turns.integration._in_call import payload_in_call
from lionagi_turns.integration._registry import compile_installed

if TYPE_CHECKING:
    from uuid import UUID

    from lionagi.operations.schema.structure import Structure
    from lionagi.protocols.messages import Instruction
    from lionagi.session.branch import Branch
    from pydantic import BaseModel

__all__ = (
    "TurnOptions",
    "current_blocks",
    "estimate_next_request_tokens",
    "newest_instruction",
    "remember_turn_options",
    "turn_options",
)


@dataclass(frozen=True, slots=True)
class TurnOptions:
    """The call options one compiled turn had (``TurnRequest`` fields D1 keeps off records)."""

    tool_schemas: tuple[JsonObject, ...]
    response_format: type[BaseModel] | JsonObject | BaseModel | None
    structure: type[Structure] | str | None
    provider_kwargs: Mapping[str, object]


# Same identity rules as the structure hand-over: an entry lives exactly as long as its
# instruction and matches only it.
_options: Handover[TurnOptions] = Handover(lambda instruction: instruction)


def remember_turn_options(instruction: Instruction, request: TurnRequest) -> None:
    """Keep ``request``'s call options for the recorded ``instruction`` it compiled."""
    options = TurnOptions(
        tool_schemas=request.tool_schemas,
        response_format=request.response_format,
        structure=request.structure,
        provider_kwargs=request.provider_kwargs,
    )
    _options.put(instruction, options)


def turn_options(instruction: Instruction) -> TurnOptions | None:
    """The options remembered for this very instruction object, or None."""
    return _options.get(instruction)


def current_blocks(branch: Branch) -> tuple[ContextBlock, ...]:
    """The context blocks of the branch's ``last_context_report`` (none without providers or
    a system message, as lionagi's chat gathers none then)."""
    if not branch._context_providers or branch_system(branch) is None:
        return ()
    report = branch.last_context_report
    if report is None:
        return ()
    return context_blocks_from_report(list(report.blocks or ()), report)


def newest_instruction(branch: Branch) -> Instruction | None:
    """The newest ``Instruction`` in the branch's active view, or None."""
    from lionagi.protocols.messages import Instruction

    pile: dict[UUID, object] = branch.msgs.messages.collections  # type: ignore[has-type]
    for uid in reversed(read_order(branch.msgs.messages, branch.progression)):  # type: ignore[has-type]
        msg = pile.get(uid)
        if isinstance(msg, Instruction):
            return msg
    return None


def estimate_next_request_tokens(branch: Branch) -> int:
    """Estimated input tokens of the branch's next chat request (see the module contract)."""
    from lionagi.service.connections.api_calling import estimate_payload_input_tokens

    payload = payload_in_call(branch)
    if payload is not None:
        return int(estimate_payload_input_tokens(payload))
    newest = newest_instruction(branch)
    if newest is None:
        return 0
    options = turn_options(newest)
    request = TurnRequest(
        instruction=newest,
        tool_schemas=options.tool_schemas if options else (),
        response_format=options.response_format if options else None,
        structure=options.structure if options else None,
        context_blocks=current_blocks(branch),
        provider_kwargs=dict(options.provider_kwargs) if options else {},
    )
    kw = provider_kwargs(compile_installed(branch, request))
    payload, _headers = branch.chat_model.endpoint.create_payload(request=kw)
    return int(estimate_payload_input_tokens(payload))
