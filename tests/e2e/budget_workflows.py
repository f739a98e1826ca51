"""The issue-18 workflows for token budgets and estimates, measured install off vs on.

Shared by ``tests/e2e/test_budget_estimates.py`` and ``benchmarks/bench_workflows.py``. Every
count is lionagi's ``estimate_payload_input_tokens`` (the input cap's count) under
``workflows.offline_o200k()``, so an estimate or budget and the request body the local server
received are measured alike. Whether the compiler is installed is the caller's choice.

- ``operate_budget``: three ``operate(actions=True)`` rounds with a tool; ``token_budget.used``
  read at each API_PRE_CALL and after the last round, and each request sent.
- ``operate_tool_estimates``: four ``operate(actions=True, invoke_actions=True)`` rounds, a
  ~300-character system, one context provider returning ~2.6 KB on every call, a tool returning
  ~1 KB of JSON; the estimate at each API_PRE_CALL (where the context fold estimates) and
  before each round (outside any call), each against the request that followed.
- ``react_estimates``: ReAct with ~5.2 KB of caller context and ``max_extensions=3``; the
  estimate at each API_PRE_CALL and at each API_POST_CALL (outside a call, against the next
  request).
- ``cli_budget``: ``run()`` turns on a CLI model; ``token_budget.used`` after each and the
  messages each call gave lionagi's endpoint.
- ``operate_with_fold``: ``operate`` rounds with growing instructions under lionagi's context
  fold; its fold records and each request sent.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from lionagi import Branch
from lionagi.agent import context_fold
from lionagi.protocols.action.tool import Tool

from . import workflows
from .http_server import ChatServer, Reply

__all__ = (
    "BudgetRun",
    "EstimateRuns",
    "FoldRun",
    "cli_budget",
    "operate_budget",
    "operate_tool_estimates",
    "operate_with_fold",
    "react_estimates",
)

SYSTEM = (
    "You are a careful logistics analyst for a freight company. Investigate each order with "
    "the catalogue tool before you answer, quote the shipment identifiers you rely on, keep "
    "your reasoning short, and say plainly when the records do not settle a question. Never "
    "guess a delivery date the records do not give."
)
PROVIDER_TEXT = "".join(
    f"Account note {i}: customer tier gold, region EU, contract renews in March.\n"
    for i in range(36)
)
#: ~5.2 KB of caller context for ReAct (one context item).
REACT_CONTEXT = {
    "document": " ".join(f"clause-{i} applies to every outbound shipment" for i in range(115))
}


def shipment_record(term: str) -> dict[str, Any]:
    """Catalogue lookup: the shipment records matching a term."""
    return {
        "term": term,
        "records": [
            {"id": f"{term}-{i}", "status": "held in customs", "port": "Rotterdam", "days": i}
            for i in range(12)
        ],
    }


RECORD_SCHEMA = {
    "type": "function",
    "function": {
        "name": "shipment_record",
        "description": "Catalogue lookup: the shipment records matching a term.",
        "parameters": {
            "type": "object",
            "properties": {"term": {"type": "string"}},
            "required": ["term"],
        },
    },
}


class _Provider:
    def __init__(self, text: str) -> None:
        self.text = text

    async def provide(self, branch: Branch, instruction: Any) -> str:
        return self.text


def _on(branch: Branch, point: Any, handler: Callable[..., Any]) -> None:
    from lionagi.hooks.bus import HookBus

    branch._pending_hook_bus_entries.append((point, handler))
    branch.attach_hook_bus(branch._hooks if branch._hooks is not None else HookBus())


def _estimate(branch: Branch) -> int:
    """The context fold's estimate as lionagi resolves it now (installed or not)."""
    return int(context_fold.estimate_next_request_tokens(branch))


def _sent(server: ChatServer, start: int) -> list[int]:
    return [workflows._payload_tokens(r.body) for r in server.chat_requests()[start:]]


def _action_reply(function: str, term: str) -> Reply:
    return Reply(
        content={
            "action_required": True,
            "action_requests": [{"function": function, "arguments": {"term": term}}],
            "reason": workflows.REASON,
        }
    )


@dataclass(frozen=True)
class BudgetRun:
    """``token_budget.used`` at each API_PRE_CALL and after the workflow; each request sent."""

    in_call: list[int]
    after: int
    sent: list[int]


async def operate_budget(
    server: ChatServer, make_model: Callable[[], Any], rounds: int = 3
) -> BudgetRun:
    """Three ``operate(actions=True)`` rounds with the ``lookup`` tool (see the module doc)."""
    from lionagi.hooks.bus import HookPoint

    branch = Branch(system=workflows.SYSTEM, chat_model=make_model())
    branch.register_tools(
        [Tool(func_callable=workflows.lookup, tool_schema=workflows.LOOKUP_SCHEMA)]
    )
    in_call: list[int] = []

    async def read_budget(**_kw: Any) -> None:
        in_call.append(branch.token_budget.used)

    _on(branch, HookPoint.API_PRE_CALL, read_budget)
    start = len(server.chat_requests())
    for i in range(rounds):
        server.script(_action_reply("lookup", f"order-{i}"))
        await branch.operate(
            instruction=f"Investigate order-{i} and report what delays it.", actions=True
        )
    return BudgetRun(in_call=in_call, after=branch.token_budget.used, sent=_sent(server, start))


@dataclass(frozen=True)
class EstimateRuns:
    """The estimate inside each call (at API_PRE_CALL) and outside calls, each paired with the
    request it estimates."""

    in_call: workflows.EstimateRun
    outside: workflows.EstimateRun


async def operate_tool_estimates(
    server: ChatServer, make_model: Callable[[], Any], rounds: int = 4
) -> EstimateRuns:
    """Four tool-invoking ``operate`` rounds with one ~2.6 KB context provider."""
    from lionagi.hooks.bus import HookPoint

    branch = Branch(system=SYSTEM, chat_model=make_model())
    branch.register_tools([Tool(func_callable=shipment_record, tool_schema=RECORD_SCHEMA)])
    branch.providers.register(_Provider(PROVIDER_TEXT), name="account")
    in_call: list[int] = []

    async def pre_call(**_kw: Any) -> None:
        in_call.append(_estimate(branch))

    _on(branch, HookPoint.API_PRE_CALL, pre_call)
    outside: list[int] = []
    start = len(server.chat_requests())
    for i in range(rounds):
        outside.append(_estimate(branch))
        server.script(_action_reply("shipment_record", f"order-{i}"))
        await branch.operate(
            instruction=f"Investigate order-{i}: which shipments hold it up, and since when?",
            actions=True,
            invoke_actions=True,
        )
    sent = _sent(server, start)
    assert len(sent) == rounds, f"{len(sent)} requests for {rounds} rounds"
    return EstimateRuns(
        in_call=workflows.EstimateRun(estimates=in_call, actual=sent, branch=branch),
        outside=workflows.EstimateRun(estimates=outside, actual=sent, branch=branch),
    )


async def react_estimates(
    server: ChatServer, make_model: Callable[[], Any], extensions: int = 3
) -> EstimateRuns:
    """ReAct with ``REACT_CONTEXT``; ``extensions + 2`` model calls."""
    from lionagi.hooks.bus import HookPoint

    branch = Branch(system=workflows.SYSTEM, chat_model=make_model())
    in_call: list[int] = []
    after_call: list[int] = []

    async def pre_call(**_kw: Any) -> None:
        in_call.append(_estimate(branch))

    async def post_call(**_kw: Any) -> None:
        after_call.append(_estimate(branch))

    _on(branch, HookPoint.API_PRE_CALL, pre_call)
    _on(branch, HookPoint.API_POST_CALL, post_call)
    start = len(server.chat_requests())
    server.script(*workflows._react_replies(extensions + 1))
    await branch.ReAct(
        instruction="Check the shipment rules.",
        context=REACT_CONTEXT,
        max_extensions=extensions,
        extension_allowed=True,
    )
    sent = _sent(server, start)
    assert len(sent) == extensions + 2, f"ReAct made {len(sent)} calls"
    # After call k, the estimate is of request k + 1 (the last call has no next request).
    return EstimateRuns(
        in_call=workflows.EstimateRun(estimates=in_call, actual=sent, branch=branch),
        outside=workflows.EstimateRun(estimates=after_call[:-1], actual=sent[1:], branch=branch),
    )


@dataclass(frozen=True)
class FoldRun:
    """The context fold's records, the request sent in each round, and the rounds in which
    the fold landed."""

    records: list[dict[str, Any]]
    sent: list[int]
    fold_rounds: list[int]


async def operate_with_fold(
    server: ChatServer, make_model: Callable[[], Any], cap: int, target: float, rounds: int = 5
) -> FoldRun:
    """``operate`` rounds with the ``lookup`` tool and instructions growing each round, under
    lionagi's context fold at ``cap`` (folding down to ``target`` of it)."""
    from lionagi.agent.context_fold import install_context_fold

    branch = Branch(system=workflows.SYSTEM, chat_model=make_model())
    branch.register_tools(
        [Tool(func_callable=workflows.lookup, tool_schema=workflows.LOOKUP_SCHEMA)]
    )
    fold = install_context_fold(branch, cap=cap, log=lambda _line: None)
    fold.target = target
    start = len(server.chat_requests())
    fold_rounds: list[int] = []
    for i in range(rounds):
        folded = len(fold.records)
        server.script(_action_reply("lookup", f"order-{i}"))
        await branch.operate(
            instruction=f"Investigate order-{i} and report." + " Check its customs notes." * 4 * i,
            actions=True,
        )
        if len(fold.records) > folded:
            fold_rounds.append(i)
    return FoldRun(records=list(fold.records), sent=_sent(server, start), fold_rounds=fold_rounds)



async def cli_budget(fake: Any, make_model: Callable[[], Any], turns: int = 2) -> BudgetRun:
    """``turns`` ``run()`` calls on a CLI model (resumed after the first); ``token_budget.used``
    after each, and the messages lionagi's endpoint was given for each call, counted as the
    input cap counts a payload of those messages."""
    from lionagi.service.connections.api_calling import estimate_payload_input_tokens

    from .harness import BoundarySpy, collect

    fake.log.unlink(missing_ok=True)
    fake.script(*({"text": f"answer {i}", "session_id": "S-budget"} for i in range(turns)))
    model = make_model()
    branch = Branch(system=SYSTEM, chat_model=model)
    spy = BoundarySpy(model, watch=branch)
    after: list[int] = []
    sent: list[int] = []
    for i in range(turns):
        await collect(branch.run(f"Which shipments hold order-{i} up, and why?"))
        # The call's own payload (the installed budget builds payloads of its own after it).
        sent.append(int(estimate_payload_input_tokens({"messages": spy.payloads[-1]})))
        after.append(branch.token_budget.used)
    assert len(fake.calls()) == turns
    return BudgetRun(in_call=after[:-1], after=after[-1], sent=sent)
