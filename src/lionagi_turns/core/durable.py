"""ADR-0007 D1: the durable instruction contract and record-ready instruction copies.

``DurableInstructionContent`` holds exactly the six fields an instruction keeps across calls.
``durable_instruction`` turns any lionagi ``Instruction`` into a new one whose content holds
only those fields, keeping id, created_at, sender, recipient and metadata; the source is never
mutated and shares no mutable container with the result.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Protocol, TypeVar
from uuid import UUID

from lionagi.protocols.messages import Instruction
from lionagi.protocols.messages.instruction import InstructionContent

from lionagi_turns.core.memo import active
from lionagi_turns.core.parts import check_image_detail

__all__ = (
    "DURABLE_FIELDS",
    "LEGACY_TRANSIENT_KEYS",
    "DurableInstructionContent",
    "durable_instruction",
)

LEGACY_TRANSIENT_KEYS = frozenset({"tool_schemas", "response_format", "structure"})

_T = TypeVar("_T")


class _Own(Protocol):
    """How a durable copy takes a value it keeps: a deep copy, or the value itself."""

    def __call__(self, value: _T, /) -> _T: ...


@dataclass(slots=True)
class DurableInstructionContent:
    """The provider-neutral fields an instruction keeps in history (ADR-0007 D1 target)."""

    instruction: str | None = None
    guidance: str | None = None
    prompt_context: list[object] = field(default_factory=list)
    plain_content: str | None = None
    images: list[str] = field(default_factory=list)
    image_detail: Literal["low", "high", "auto"] | None = None

    def __post_init__(self) -> None:
        check_image_detail(self.image_detail)
        if not isinstance(self.prompt_context, list):
            raise TypeError(
                f"prompt_context must be a list, got {type(self.prompt_context).__name__}"
            )
        if not isinstance(self.images, list):
            raise TypeError(f"images must be a list, got {type(self.images).__name__}")

    def to_dict(self) -> dict[str, object]:
        """All six fields, deep-copied; nothing else."""
        return {f.name: copy.deepcopy(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> DurableInstructionContent:
        """Build from serialized content; legacy ``tool_schemas``, ``response_format`` and
        ``structure`` keys are accepted and ignored. Any other unknown key is a ValueError,
        and lionagi's ``context`` alias is read as ``prompt_context``. ``data`` that is not a
        mapping is a TypeError."""
        if not isinstance(data, Mapping):
            raise TypeError(
                f"serialized instruction content must be a mapping of field names, got "
                f"{type(data).__name__}; pass the content dict (e.g. Instruction.content.to_dict())"
            )
        unknown = set(data) - set(DURABLE_FIELDS) - LEGACY_TRANSIENT_KEYS - {"context"}
        if unknown:
            raise ValueError(
                f"unknown instruction content keys {sorted(unknown, key=repr)}; durable "
                f"content has {list(DURABLE_FIELDS)}: remove the others"
            )
        values = {k: copy.deepcopy(data[k]) for k in DURABLE_FIELDS if k in data}
        if "context" in data and "prompt_context" not in data:
            ctx = copy.deepcopy(data["context"])
            values["prompt_context"] = ctx if isinstance(ctx, list) else [ctx]
        if values.get("prompt_context") is None:
            values.pop("prompt_context", None)
        if values.get("images") is None:
            values.pop("images", None)
        return cls(**values)

    @classmethod
    def from_instruction(cls, content: InstructionContent) -> DurableInstructionContent:
        """The durable part of a lionagi InstructionContent, deep-copied."""
        return cls._of(content, copy.deepcopy)

    @classmethod
    def _of(cls, content: InstructionContent, own: _Own) -> DurableInstructionContent:
        """The durable part of ``content``, its guidance and context items passed through
        ``own`` (a deep copy, or the identity when the caller's construction copies them)."""
        return cls(
            instruction=content.instruction,
            guidance=own(content.guidance),
            prompt_context=own(list(content.prompt_context)),
            plain_content=content.plain_content,
            images=list(content.images),
            image_detail=content.image_detail,
        )

    def to_instruction_content(self) -> InstructionContent:
        """A lionagi InstructionContent with these fields and no call options."""
        return self._content(copy.deepcopy(self.guidance), copy.deepcopy(self.prompt_context))

    def _content(self, guidance: str | None, prompt_context: list[object]) -> InstructionContent:
        return InstructionContent(
            instruction=self.instruction,
            guidance=guidance,
            prompt_context=prompt_context,
            plain_content=self.plain_content,
            images=list(self.images),
            image_detail=self.image_detail,
        )


def _itself(value: _T) -> _T:
    return value


DURABLE_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(DurableInstructionContent))


def durable_instruction(source: Instruction) -> Instruction:
    """A new Instruction with ``source``'s id, created_at, sender, recipient and metadata
    (deep-copied) and content reduced to the durable fields. ``source`` is not mutated. A
    ``source`` that is not an Instruction holding an ``InstructionContent`` is a TypeError."""
    if not isinstance(source, Instruction) or not isinstance(source.content, InstructionContent):
        what = type(source.content if isinstance(source, Instruction) else source).__name__
        raise TypeError(
            f"durable_instruction needs a lionagi Instruction with InstructionContent, got a "
            f"{what}; build one with branch.msgs.create_instruction(instruction=...)"
        )
    original = source.content
    # When every container is one of lionagi's tracked lists/dicts and every leaf immutable
    # (the active memo's ``shallow_durable``), InstructionContent's constructor, which copies
    # each list and dict into a new tracked one all the way down, makes the deep copy itself.
    shallow = active().shallow_durable(original)
    durable = DurableInstructionContent._of(original, _itself if shallow else copy.deepcopy)
    # The durable values are this call's own (or are copied by the constructor), so the content
    # takes them as they are.
    content = durable._content(durable.guidance, durable.prompt_context)
    # A deep copy (lionagi's Message.__deepcopy__ gives the copy its own, empty render cache, so
    # rendering the copy never writes into the source's private state) in which the source's
    # content is the durable one — the memo maps it, so it is never copied itself — and its
    # ids are themselves (a UUID is immutable).
    memo: dict[int, object] = {id(original): content}
    for value in source.__dict__.values():
        if type(value) is UUID:
            memo[id(value)] = value
    return copy.deepcopy(source, memo)
