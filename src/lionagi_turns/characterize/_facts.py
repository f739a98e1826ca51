"""What one turn's branch and request say, and the state of a comparison between explanations.

``State`` is both sides of one turn as far as the registry has explained them; an entry's
``explain`` returns a ``Step`` (the new state and the compiled-message indices it touched).
``Facts`` computes, on demand and read only, what the entries need from the branch and the
request (system text, context blocks, the D3 section built from the ADR's formula, the source
instruction of each compiled user message).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any
from uuid import UUID

from lionagi.libs.schema.minimal_yaml import minimal_yaml
from lionagi.ln import json_dumps
from lionagi.protocols.messages.instruction import InstructionContent

from lionagi_turns.core.contracts import TurnRequest
from lionagi_turns.core.history import (
    InstructionTurn,
    Projection,
    branch_system,
    project_history,
    select_ids,
)

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

# One JSON object: a provider message, a context block's document, a rendered result.
JsonObject = dict[str, Any]
Payload = list[JsonObject]


# --------------------------------------------------------------------------- outcomes


@dataclass(frozen=True, slots=True)
class State:
    """Both sides of one turn as far as explained so far; ``resolved`` once an error entry
    has accounted for the whole outcome."""

    legacy: Payload | None
    compiled: Payload | None
    legacy_exc: BaseException | None
    compiled_exc: BaseException | None
    resolved: bool = False

    def same_as(self, other: State) -> bool:
        return (
            self.legacy == other.legacy
            and self.compiled == other.compiled
            and self.legacy_exc is other.legacy_exc
            and self.compiled_exc is other.compiled_exc
            and self.resolved == other.resolved
        )


@dataclass(frozen=True, slots=True)
class Step:
    state: State
    indices: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class Source:
    """The instruction one compiled user message was rendered from."""

    content: InstructionContent
    results: tuple[JsonObject, ...]
    fold_target: bool


class Facts:
    """What the branch and request say about this turn, computed on demand."""

    def __init__(
        self, branch: Branch, request: TurnRequest, provider_kwargs: Mapping[str, object]
    ) -> None:
        self.branch = branch
        self.request = request
        self.provider_kwargs = provider_kwargs
        system = branch_system(branch)
        self.system: str = system.rendered if system is not None else ""
        self.has_system = system is not None
        self.blocks = request.context_blocks
        self.pile: Mapping[UUID, object] = _pile_of(branch)

    @cached_property
    def view(self) -> tuple[UUID, ...]:
        return select_ids(self.branch, self.request.progression)

    @cached_property
    def projection(self) -> Projection:
        return project_history(self.branch, self.view)

    @cached_property
    def envelope(self) -> str:
        """ADR D3's section, built from the ADR's formula (not from the compiler's code)."""
        if not self.blocks:
            return ""
        payload = [{"provider_name": b.provider_name, "content": b.content} for b in self.blocks]
        return (
            "LIONAGI_CONTEXT_BLOCKS_JSON\n"
            + json_dumps(payload, sort_keys=True)
            + "\nEND_LIONAGI_CONTEXT_BLOCKS_JSON"
        )

    @cached_property
    def joined_blocks(self) -> str:
        """lionagi 0.36's rendering of the blocks: their contents joined by one newline."""
        return "\n".join(b.content for b in self.blocks)

    @property
    def folds(self) -> bool:
        return self.has_system or bool(self.blocks)

    def sources(self, compiled: Payload) -> list[tuple[int, Source]] | None:
        """Compiled user-message indices paired with their source instruction, or None when
        the user messages do not correspond one-to-one with the retained instructions plus
        the current one."""
        projection = self.projection
        sources = [
            (turn.message.content, tuple(turn.results))
            for turn in projection.turns
            if isinstance(turn, InstructionTurn)
        ]
        sources.append((self.request.instruction.content, tuple(projection.pending)))
        users = [i for i, m in enumerate(compiled) if m.get("role") == "user"]
        if len(users) != len(sources):
            return None
        return [
            (index, Source(content, results, fold_target=(k == 0)))
            for k, (index, (content, results)) in enumerate(zip(users, sources, strict=True))
        ]

    def compiled_fold(self, guidance: object) -> str:
        """ADR D2.4: system, context section, guidance; non-empty ones joined by two newlines."""
        return "\n\n".join(p for p in (self.system, self.envelope, guidance_text(guidance)) if p)


def _pile_of(branch: Branch) -> Mapping[UUID, object]:
    """``branch``'s stored messages by id (read only)."""
    pile: Mapping[UUID, object] = branch.msgs.messages.collections  # type: ignore[has-type]
    return pile


def guidance_text(guidance: object) -> str:
    """Guidance as the fold shows it (intended-differences §5): falsy is absent, text as is,
    anything else minimal YAML."""
    if not guidance:
        return ""
    if isinstance(guidance, str):
        return guidance
    return minimal_yaml(plain_value(guidance)).strip()


def plain_value(value: object) -> Any:
    """``value`` with lionagi's tracked containers turned into plain dicts and lists."""
    if isinstance(value, Mapping):
        return {k: plain_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain_value(v) for v in value]
    return value


def added_results(content: InstructionContent, results: Sequence[JsonObject]) -> list[object]:
    """The results folded into ``content``'s context: each one not equal to an item already
    there (ADR D2.2)."""
    merged = list(content.prompt_context)
    start = len(merged)
    for result in results:
        if result not in merged:
            merged.append(result)
    return merged[start:]
