"""ADR-0007 Amendment 1 contracts: D7's bound records and D8's section authority.

Guarantees:

- Every class is a ``frozen=True, slots=True`` dataclass with exactly the amended ADR's fields,
  in its order (``TurnRequest.skipped`` sits before ``provider_kwargs``;
  ``CompiledChatRequest.bounds`` is required, with no default).
- ``ContextBlock`` takes no authority argument: ``authority`` is ``init=False`` and always
  ``SectionAuthority.MATERIAL``, so ``ContextBlock(name, text, SectionAuthority.OPERATOR)`` is a
  ``TypeError``. It is a subclass of the default profile's ``ContextBlock`` and keeps its
  checks (non-empty, UTF-8-encodable fields).
- A ``SectionBound`` states the D8 authority and the D7 posture of its section; a record with
  another pairing is refused (``ValueError``), so a record can never claim operator authority
  for material.
- ``TurnRequest`` validates and copies like the default profile's request (the shared checks
  are called, not re-typed) and refuses a non-material block and a ``skipped`` entry whose
  reason is not a context-registry reason.
- Invalid shapes raise ``TypeError`` (wrong kind) or ``ValueError`` (right kind, bad value),
  naming the field and what to pass instead.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from types import MappingProxyType
from typing import Any, Literal, get_args
from uuid import UUID

from lionagi.operations.schema.structure import Structure
from lionagi.protocols.messages import Instruction
from pydantic import BaseModel

from lionagi_turns.core import contracts as _base
from lionagi_turns.core.contracts import CompiledMessage

__all__ = (
    "LEFT_OUT_REASONS",
    "SECTIONS",
    "CompiledChatRequest",
    "CompiledMessage",
    "ContextBlock",
    "LeftOut",
    "LeftOutReason",
    "Posture",
    "SectionAuthority",
    "SectionBound",
    "SectionBudgetRefused",
    "SectionBudgets",
    "SectionName",
    "TurnRequest",
)


class SectionAuthority(str, Enum):  # noqa: UP042 - the ADR's exact base classes
    """D8: the authority of a compiled section's material."""

    OPERATOR = "operator"
    RUN_INSTRUCTION = "run_instruction"
    MATERIAL = "material"


LeftOutReason = Literal[
    "per_provider_limit",
    "section_budget",
    "truncated",
    "evicted",
    "compacted",
    "cleared",
    "summarized",
]
LEFT_OUT_REASONS: tuple[str, ...] = get_args(LeftOutReason)

SectionName = Literal["system", "instruction", "history", "context", "tool_results"]
SECTIONS: tuple[str, ...] = get_args(SectionName)

Posture = Literal["truncate", "refuse", "skip"]

# D8's authority and D7's posture of each section; the order is ``CompiledChatRequest.bounds``'.
SECTION_AUTHORITY: Mapping[str, SectionAuthority] = MappingProxyType(
    {
        "system": SectionAuthority.OPERATOR,
        "instruction": SectionAuthority.RUN_INSTRUCTION,
        "history": SectionAuthority.MATERIAL,
        "context": SectionAuthority.MATERIAL,
        "tool_results": SectionAuthority.MATERIAL,
    }
)
SECTION_POSTURE: Mapping[str, str] = MappingProxyType(
    {
        "system": "refuse",
        "instruction": "refuse",
        "history": "truncate",
        "context": "skip",
        "tool_results": "truncate",
    }
)
# The reasons the context registry can give for not admitting an entry (D7, ADR-0008 D3).
REGISTRY_REASONS: tuple[str, ...] = ("per_provider_limit", "section_budget")

_set = _base._set


@dataclass(frozen=True, slots=True)
class LeftOut:
    """One entry a section left out: a reference (message id or provider name), never text."""

    name: str
    reason: LeftOutReason
    tokens: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(
                f"LeftOut.name must be a non-empty str (a message id or provider name), got "
                f"{self.name!r}"
            )
        if self.reason not in LEFT_OUT_REASONS:
            raise ValueError(
                f"LeftOut.reason {self.reason!r} is not one of {', '.join(LEFT_OUT_REASONS)}"
            )
        if self.tokens is not None and (
            not isinstance(self.tokens, int) or isinstance(self.tokens, bool) or self.tokens < 0
        ):
            raise ValueError(f"LeftOut.tokens must be None or an int >= 0, got {self.tokens!r}")


@dataclass(frozen=True, slots=True)
class SectionBound:
    """D7's record of one section: its authority, posture, budget, what it kept (references
    only) and what it left out."""

    section: SectionName
    authority: SectionAuthority
    posture: Posture
    budget: int | None
    kept: tuple[str, ...]
    left_out: tuple[LeftOut, ...]

    def __post_init__(self) -> None:
        if self.section not in SECTIONS:
            raise ValueError(
                f"SectionBound.section {self.section!r} is not one of {', '.join(SECTIONS)}"
            )
        if self.authority is not SECTION_AUTHORITY[self.section]:
            raise ValueError(
                f"the {self.section} section's authority is "
                f"{SECTION_AUTHORITY[self.section].value!r} (ADR-0007 D8), not "
                f"{getattr(self.authority, 'value', self.authority)!r}"
            )
        if self.posture != SECTION_POSTURE[self.section]:
            raise ValueError(
                f"the {self.section} section's posture is {SECTION_POSTURE[self.section]!r} "
                f"(ADR-0007 D7), not {self.posture!r}"
            )
        _check_budget(self.budget, f"SectionBound({self.section}).budget")
        _set(self, "kept", tuple(self.kept))
        _set(self, "left_out", tuple(self.left_out))
        if not _all_instances(self.kept, str):
            raise TypeError("SectionBound.kept holds references (str ids or provider names)")
        if not _all_instances(self.left_out, LeftOut):
            raise TypeError("SectionBound.left_out holds LeftOut values")


@dataclass(frozen=True, slots=True)
class CompiledChatRequest:
    """The amended compiler's output: the default profile's three fields plus ``bounds``, one
    ``SectionBound`` per section in ``SECTIONS`` order (required, no default)."""

    instruction: Instruction
    messages: tuple[CompiledMessage, ...]
    provider_kwargs: Mapping[str, Any]
    bounds: tuple[SectionBound, ...]

    def __post_init__(self) -> None:
        _set(self, "messages", tuple(self.messages))
        bad = (
            []
            if _all_instances(self.messages, CompiledMessage)
            else [i for i, m in enumerate(self.messages) if not isinstance(m, CompiledMessage)]
        )
        if bad:
            raise TypeError(f"CompiledChatRequest.messages{bad} are not CompiledMessage values")
        _set(
            self,
            "provider_kwargs",
            _base._read_only(self.provider_kwargs, "CompiledChatRequest"),
        )
        _set(self, "bounds", _check_bounds(self.bounds))

    def bound(self, section: SectionName) -> SectionBound:
        """The record of ``section``."""
        return self.bounds[SECTIONS.index(section)]

    def _repr_html_(self) -> str | None:
        """What a notebook shows: the body of ``lionagi-turns compile --profile amendment1
        --format html``'s page for this request (its sections, what each left out and why,
        the ceiling record when the instruction carries one); None with no view registered."""
        return _base.html_view(self)

    def __repr__(self) -> str:
        """A one-line summary: the default profile's, then what each section left out."""
        left = [f"{b.section} {len(b.left_out):,}" for b in self.bounds if b.left_out]
        extra = "; left out: " + (", ".join(left) if left else "nothing")
        return _base.request_summary("amendment1.CompiledChatRequest", self.messages,
                                     self.provider_kwargs, extra)

    def __rich__(self) -> object:
        """What a Rich console prints: the default profile's table, then one row per section
        that left records out (how many, and why)."""
        from lionagi_turns.core._rich_view import request_table

        rows = []
        for bound in self.bounds:
            if bound.left_out:
                reasons: dict[str, int] = {}
                for entry in bound.left_out:
                    reasons[entry.reason] = reasons.get(entry.reason, 0) + 1
                why = ", ".join(f"{n:,} {reason}" for reason, n in reasons.items())
                rows.append((f"{bound.section} left out", why))
        return request_table(repr(self), self.messages, rows)

    def __deepcopy__(self, memo: dict[int, object]) -> CompiledChatRequest:
        return CompiledChatRequest(
            instruction=copy.deepcopy(self.instruction, memo),
            messages=tuple(
                CompiledMessage(m.role, copy.deepcopy(m.content, memo)) for m in self.messages
            ),
            provider_kwargs=self.provider_kwargs,
            bounds=self.bounds,
        )


def _all_instances(values: tuple[object, ...], cls: type) -> bool:
    """``all(isinstance(v, cls) for v in values)``; exact types are checked in one pass of
    ``type`` (the usual case), anything else by ``isinstance``."""
    return set(map(type, values)) <= {cls} or all(isinstance(v, cls) for v in values)


def _check_bounds(bounds: Iterable[object]) -> tuple[SectionBound, ...]:
    given = tuple(bounds)
    records = tuple(b for b in given if isinstance(b, SectionBound))
    if len(records) != len(given):
        raise TypeError("bounds must hold SectionBound values")
    sections = tuple(b.section for b in records)
    if sections != SECTIONS:
        raise ValueError(
            f"bounds must hold exactly one record per section, in the order {SECTIONS}; "
            f"got {sections}"
        )
    return records


class SectionBudgetRefused(ValueError):
    """A section refused over its own bound; carries the bound records."""

    def __init__(self, message: str, bounds: tuple[SectionBound, ...]) -> None:
        super().__init__(message)
        self.bounds = bounds


@dataclass(frozen=True, slots=True)
class ContextBlock(_base.ContextBlock):
    """A source-attributed context block; always material (D8). ``authority`` is not a
    constructor argument."""

    authority: SectionAuthority = field(default=SectionAuthority.MATERIAL, init=False)


def _check_budget(value: object, name: str) -> None:
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be None (unbounded) or an int of tokens, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0 tokens or None (unbounded), got {value}")


@dataclass(frozen=True, slots=True)
class SectionBudgets:
    """Per-section token budgets; ``None`` = unbounded."""

    system: int | None = None
    instruction: int | None = None
    history: int | None = None
    context: int | None = None
    tool_results: int | None = None

    def __post_init__(self) -> None:
        for name in SECTIONS:
            _check_budget(getattr(self, name), f"SectionBudgets.{name}")


@dataclass(frozen=True, slots=True)
class TurnRequest:
    """The default profile's request plus ``skipped``: the entries the context registry did
    not admit, each with its reason (``per_provider_limit`` or ``section_budget``)."""

    instruction: Instruction
    progression: tuple[UUID, ...] | None = None
    tool_schemas: tuple[dict[str, Any], ...] = ()
    response_format: type[BaseModel] | dict[str, Any] | BaseModel | None = None
    structure: type[Structure] | str | None = None
    context_blocks: tuple[ContextBlock, ...] = ()
    skipped: tuple[LeftOut, ...] = ()
    provider_kwargs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        _base._check_instruction(self.instruction)
        _set(self, "progression", _base._progression(self.progression))
        _set(self, "tool_schemas", _base._tool_schemas(self.tool_schemas))
        _set(self, "response_format", _base._response_format(self.response_format))
        _base._check_structure(self.structure)
        _set(self, "context_blocks", _blocks(self.context_blocks))
        _set(self, "skipped", _skipped(self.skipped))
        _set(self, "provider_kwargs", _base._read_only(self.provider_kwargs, "TurnRequest"))

    def __deepcopy__(self, memo: dict[int, object]) -> TurnRequest:
        """An equal request with its own instruction copy (construction copies the rest)."""
        return dataclasses.replace(self, instruction=copy.deepcopy(self.instruction, memo))


def check_material(blocks: Sequence[_base.ContextBlock]) -> None:
    """Refuse a block whose authority is not MATERIAL (however it was made), by position."""
    for i, block in enumerate(blocks):
        authority = getattr(block, "authority", None)
        if authority is not SectionAuthority.MATERIAL:
            raise ValueError(
                f"context_blocks[{i}] from provider {block.provider_name!r} has authority "
                f"{getattr(authority, 'value', authority)!r}; a context block is material "
                "(ADR-0007 D8). Build blocks with ContextBlock(provider_name, content) and "
                "never change their authority"
            )


def _blocks(value: object) -> tuple[ContextBlock, ...]:
    if value is None:
        return ()
    blocks = _base._ordered(
        value, "context_blocks", "a sequence of ContextBlock values", (_base.ContextBlock,)
    )
    bad = [
        f"[{i}] ({type(b).__module__}.{type(b).__name__})"
        for i, b in enumerate(blocks)
        if not isinstance(b, ContextBlock)
    ]
    if bad:
        raise TypeError(
            f"TurnRequest.context_blocks{', '.join(bad)} are not "
            "lionagi_turns.amendment1.ContextBlock values (the default profile's block has "
            "no authority); build them with amendment1.ContextBlock(provider_name, content)"
        )
    check_material(blocks)
    return blocks


def _skipped(value: object) -> tuple[LeftOut, ...]:
    if value is None:
        return ()
    entries = _base._ordered(value, "skipped", "a sequence of LeftOut values", (LeftOut,))
    for i, entry in enumerate(entries):
        if not isinstance(entry, LeftOut):
            raise TypeError(
                f"TurnRequest.skipped[{i}] is a {type(entry).__name__}, not a LeftOut"
            )
        if entry.reason not in REGISTRY_REASONS:
            raise ValueError(
                f"TurnRequest.skipped[{i}] ({entry.name!r}) has reason {entry.reason!r}; the "
                f"context registry leaves entries out only for {' or '.join(REGISTRY_REASONS)}"
            )
    return entries
