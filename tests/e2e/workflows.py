"""lionagi workflows measured install off vs on (issue 9): shared by the e2e tests and
``benchmarks/bench_workflows.py``.

Each driver runs one workflow through lionagi's own entry point on a real transport and returns
what reached the model, per call. Whether the compiler is installed is the caller's choice
(``lionagi_turns.installed()`` around the call), so one test runs the same driver twice.

Measures:

- ``sent_chars(messages)``: characters of every message's text content (list content: its text
  parts), the quantity "sent characters per call" compares.
- ``offline_o200k()``: a context manager under which lionagi's ``estimate_payload_input_tokens``
  (which calls ``tiktoken.get_encoding("o200k_base")``, a network download here) counts
  with ``lionagi_turns.core.measure``'s bundled o200k_base instead. Estimates and actual
  requests are both counted with it, so the two sides of an error figure use one measure.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from lionagi import Branch
from lionagi.protocols.action.tool import Tool

from .http_server import ChatServer, Reply

__all__ = (
    "CONTEXT_DOC",
    "EstimateRun",
    "cli_react_prompts",
    "http_react_calls",
    "mean_error",
    "offline_o200k",
    "operate_loop_estimates",
    "react_estimates",
    "sent_chars",
)

#: ~5 KB of caller context for ReAct (one context item).
CONTEXT_DOC = {"document": " ".join(f"clause-{i} applies to every shipment" for i in range(150))}
SYSTEM = "You are a careful analyst."
REASON = {"title": "plan", "content": "step", "confidence_score": 0.8}


def sent_chars(messages: list[dict[str, Any]]) -> int:
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            total += len(content)
        elif isinstance(content, list):
            total += sum(len(p.get("text", "")) for p in content if isinstance(p, dict))
    return total


class _O200k:
    def encode(self, text: str, *args: Any, **kwargs: Any) -> list[int]:
        from lionagi_turns.core.measure import encode

        return encode(text)


@contextmanager
def offline_o200k() -> Iterator[None]:
    import tiktoken

    original = tiktoken.get_encoding

    def get_encoding(name: str) -> Any:
        if name != "o200k_base":
            raise ValueError(f"offline_o200k only provides o200k_base, not {name!r}")
        return _O200k()

    tiktoken.get_encoding = get_encoding
    try:
        yield
    finally:
        tiktoken.get_encoding = original


def _payload_tokens(body: dict[str, Any]) -> int:
    from lionagi.service.connections.api_calling import estimate_payload_input_tokens

    return int(estimate_payload_input_tokens(body))


def _react_replies(rounds: int) -> list[str]:
    """``rounds`` analyses (all but the last ask for an extension), then the answer."""
    out = []
    for i in range(rounds):
        reply: dict[str, Any] = {"analysis": f"Round {i + 1}.",
                                 "extension_needed": i < rounds - 1,
                                 "action_strategy": "concurrent", "reason": REASON}
        if i:  # extension rounds always carry an ActionParam, so their format has the fields
            reply |= {"action_required": False, "action_requests": []}
        out.append(json.dumps(reply))
    out.append(json.dumps({"answer": "All done."}))
    return out


async def http_react_calls(server: ChatServer, make_model: Callable[[], Any],
                           calls: int = 5) -> list[list[dict[str, Any]]]:
    """ReAct with ``CONTEXT_DOC`` as caller context, ``calls`` model calls over HTTP; the
    POSTed messages of each call."""
    model = make_model()
    branch = Branch(system=SYSTEM, chat_model=model)
    start = len(server.chat_requests())
    server.script(*_react_replies(calls - 1))
    await branch.ReAct(instruction="Check the shipment rules.", context=CONTEXT_DOC,
                       max_extensions=calls - 2, extension_allowed=True)
    posted = [r.messages for r in server.chat_requests()[start:]]
    assert len(posted) == calls, f"ReAct made {len(posted)} calls, expected {calls}"
    return posted


async def cli_react_prompts(fake: Any, make_model: Callable[[], Any],
                            calls: int = 5) -> list[dict[str, Any]]:
    """The same ReAct on a CLI model (resumed rounds); the fake CLI's log records."""
    start = len(fake.calls())
    fake.script(*({"text": r, "session_id": "S-react"} for r in _react_replies(calls - 1)))
    branch = Branch(system=SYSTEM, chat_model=make_model())
    await branch.ReAct(instruction="Check the shipment rules.", context=CONTEXT_DOC,
                       max_extensions=calls - 2, extension_allowed=True)
    records = fake.calls()[start:]
    assert len(records) == calls, f"ReAct made {len(records)} CLI calls, expected {calls}"
    return records


@dataclass(frozen=True)
class EstimateRun:
    """Per model call: the context fold's estimate at API_PRE_CALL and the tokens of the
    request that followed (both with the offline o200k measure)."""

    estimates: list[int]
    actual: list[int]
    branch: Branch | None = None

    @property
    def errors(self) -> list[float]:
        return [abs(e - a) / a for e, a in zip(self.estimates, self.actual, strict=True)]


def mean_error(run: EstimateRun) -> float:
    errors = run.errors
    return sum(errors) / len(errors)


def _watch_estimates(branch: Branch) -> list[int]:
    from lionagi.agent.context_fold import install_context_fold

    fold = install_context_fold(branch, cap=10**9)
    seen: list[int] = []
    estimate = fold.estimate

    def recording() -> int:
        value = estimate()
        seen.append(value)
        return value

    fold.estimate = recording  # type: ignore[method-assign]
    return seen


class _Provider:
    def __init__(self, text: str) -> None:
        self.text = text

    async def provide(self, branch: Branch, instruction: Any) -> str:
        return self.text


def lookup(term: str) -> dict[str, Any]:
    """Catalogue lookup: matching shipments for a term."""
    return {"term": term, "hits": [f"{term}-shipment-{i}: delayed in customs" for i in range(12)]}


LOOKUP_SCHEMA = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Catalogue lookup: matching shipments for a term.",
        "parameters": {"type": "object", "properties": {"term": {"type": "string"}},
                       "required": ["term"]},
    },
}


async def operate_loop_estimates(server: ChatServer, make_model: Callable[[], Any],
                                 rounds: int = 5) -> EstimateRun:
    """An agent loop of ``operate`` rounds with two context providers and a tool each round
    calls; the fold's estimate before each call vs the request sent."""
    branch = Branch(system=SYSTEM, chat_model=make_model())
    branch.register_tools([Tool(func_callable=lookup, tool_schema=LOOKUP_SCHEMA)])
    branch.providers.register(_Provider("Customer tier: gold. Region: EU. " * 6),
                              name="account")
    branch.providers.register(_Provider("Open tickets: 3 about late delivery. " * 6),
                              name="tickets")
    seen = _watch_estimates(branch)
    start = len(server.chat_requests())
    for i in range(rounds):
        server.script(Reply(content={
            "action_required": True,
            "action_requests": [{"function": "lookup", "arguments": {"term": f"order-{i}"}}],
            "reason": REASON,
        }))
        await branch.operate(instruction=f"Investigate order-{i} and report.", actions=True,
                             reason=True)
    bodies = [r.body for r in server.chat_requests()[start:]]
    return EstimateRun(estimates=list(seen), actual=[_payload_tokens(b) for b in bodies],
                       branch=branch)


async def react_estimates(server: ChatServer, make_model: Callable[[], Any],
                          calls: int = 5) -> EstimateRun:
    """The ReAct workflow of ``http_react_calls`` with the fold watching each call."""
    branch = Branch(system=SYSTEM, chat_model=make_model())
    seen = _watch_estimates(branch)
    start = len(server.chat_requests())
    server.script(*_react_replies(calls - 1))
    await branch.ReAct(instruction="Check the shipment rules.", context=CONTEXT_DOC,
                       max_extensions=calls - 2, extension_allowed=True)
    bodies = [r.body for r in server.chat_requests()[start:]]
    return EstimateRun(estimates=list(seen), actual=[_payload_tokens(b) for b in bodies])
