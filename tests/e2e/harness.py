"""Model-boundary recording and the drivers that push one turn through each lionagi surface.

The model boundary is where lionagi hands a finished request to a transport:
``iModel.create_api_calling`` -> ``endpoint.create_payload(request=kwargs)``. For HTTP models the
authoritative record is the POST body the server received; for CLI models ``BoundarySpy`` records
the ``messages`` lionagi passed to ``create_payload`` (before the claude_code request model
flattens them into a prompt), and the fake CLI's log holds the prompt it really received.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from lionagi import Branch
from lionagi.protocols.messages import RoledMessage

__all__ = (
    "RUN_SURFACE_KWARGS",
    "BoundaryCall",
    "BoundarySpy",
    "branch_state",
    "cli_prompt",
    "collect",
    "run_turn",
)

#: Keyword arguments ``Branch.run`` forwards to RunParam itself; any other call option needs
#: lionagi's run operation with an explicit RunParam (the same function Branch.run calls).
RUN_SURFACE_KWARGS = frozenset(
    {"instruction", "guidance", "context", "images", "image_detail", "response_format"}
)


@dataclass(frozen=True)
class BoundaryCall:
    """One ``create_payload`` call: the messages handed over, the CLI resume id (if any),
    and the ids of the watched branch's progression at that moment (None if no branch)."""

    messages: list[dict[str, Any]]
    resume: str | None
    progression: tuple[UUID, ...] | None


@dataclass
class BoundarySpy:
    """Wraps one iModel's ``endpoint.create_payload`` on the instance; the call still runs.

    ``watch`` is the branch whose progression is snapshotted at each call.
    """

    model: Any
    watch: Branch | None = None
    calls: list[BoundaryCall] = field(default_factory=list)

    def __post_init__(self) -> None:
        endpoint = self.model.endpoint
        original = endpoint.create_payload

        def recording(request: Any, *args: Any, **kwargs: Any) -> Any:
            if isinstance(request, Mapping) and "messages" in request:
                watched = (
                    tuple(self.watch.progression) if self.watch is not None else None
                )
                self.calls.append(
                    BoundaryCall(
                        messages=copy.deepcopy(list(request["messages"])),
                        resume=request.get("resume"),
                        progression=watched,
                    )
                )
            return original(request, *args, **kwargs)

        endpoint.create_payload = recording

    @property
    def payloads(self) -> list[list[dict[str, Any]]]:
        return [c.messages for c in self.calls]


def cli_prompt(messages: list[dict[str, Any]], resume: str | None = None) -> str:
    """The prompt lionagi's claude_code request model derives from ``messages``."""
    from lionagi.providers.anthropic.claude_code import ClaudeCodeRequest

    data: dict[str, Any] = {"messages": copy.deepcopy(messages)}
    if resume:
        data["resume"] = resume
    return ClaudeCodeRequest.model_validate(data).prompt


async def collect(stream: AsyncIterator[RoledMessage]) -> list[RoledMessage]:
    return [m async for m in stream]


async def run_turn(branch: Branch, call: Mapping[str, Any]) -> list[RoledMessage]:
    """Drive one ``run`` turn with lionagi chat keyword arguments ``call``.

    Uses ``Branch.run`` when it accepts every key, otherwise lionagi's run operation with a
    RunParam carrying the same keys (Branch.run has no progression/tool_schemas/plain_content
    parameter).
    """
    kwargs = dict(call)
    if set(kwargs) <= RUN_SURFACE_KWARGS:
        instruction = kwargs.pop("instruction", "")
        return await collect(branch.run(instruction, **kwargs))

    from lionagi.operations.run.run import run
    from lionagi.operations.types import RunParam

    instruction = kwargs.pop("instruction", None)
    return await collect(run(branch, instruction, RunParam(**kwargs)))


def branch_state(branch: Branch) -> dict[str, Any]:
    """Everything about a branch's history a call could change: ordered message dicts and
    progression ids."""
    return {
        "progression": [str(i) for i in branch.progression],
        "messages": [m.to_dict() for m in branch.messages],
    }


Resolver = Callable[[Branch], Any]


@dataclass(frozen=True)
class TappedCompile:
    """One compile the installed adapter performed: its request, the compiled messages as
    projected, and the ids of the branch's progression at that moment."""

    request: Any
    messages: list[dict[str, Any]]
    progression: tuple[UUID, ...]
    react_context: Any = None


@dataclass
class CompileTap:
    """Records every pipeline run (``compile_traced``) the installed integration adapter
    performs (install with ``monkeypatch.setattr(_registry, "compile_traced", tap)``)."""

    compiled: list[TappedCompile] = field(default_factory=list)

    def __call__(self, branch: Branch, request: Any, *, react_context: Any = None,
                 **options: Any) -> Any:
        from lionagi_turns import to_provider_messages
        from lionagi_turns.core.pipeline import compile_traced

        trace = compile_traced(branch, request, react_context=react_context, **options)
        self.compiled.append(
            TappedCompile(
                request=request,
                messages=to_provider_messages(trace.compiled),
                progression=tuple(branch.progression),
                react_context=react_context,
            )
        )
        return trace


def recompiled(branch: Branch, tapped: TappedCompile) -> list[dict[str, Any]]:
    """The tapped request compiled again, independently, against ``branch`` restricted to the
    progression it had at the tapped moment (history is append-only, so this is that
    snapshot)."""
    import dataclasses

    from lionagi_turns import compile_chat_request, to_provider_messages

    request = tapped.request
    if request.progression is None:
        request = dataclasses.replace(request, progression=tapped.progression)
    return to_provider_messages(
        compile_chat_request(branch, request, react_context=tapped.react_context))
