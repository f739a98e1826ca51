"""ADR-0007 D6 step 3: lionagi call arguments -> ``TurnRequest``.

Conversions (lionagi input -> request field):

- ``param.progression``: falsy (``None``, ``[]``, empty ``Progression``) -> ``None`` (the
  branch's own progression, lionagi's legacy behaviour); otherwise every form lionagi accepts
  (UUID, UUID string, message or other element with an ``id``, ``Progression``, and sequences
  mixing them, nested sequences flattened in order) -> ``tuple[UUID, ...]``.
- Call options -> ``tool_schemas``, ``response_format`` and ``structure``: the values the built
  instruction's content carries (lionagi's factory wrote the param's options into it, merged
  with any the caller's ``Instruction`` already had); a field the content leaves empty falls
  back to the param's value.
- ``param.imodel_kw`` -> ``provider_kwargs`` (a ``"messages"`` key is refused by ``TurnRequest``).
- Context-provider report (``ProviderReport.blocks`` paired one-to-one with ``.fired``) ->
  ``ContextBlock`` values carrying each provider's name.

Nothing here mutates the branch, the param, the report or the instruction passed in.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast
from uuid import UUID

from lionagi._errors import NotFoundError
from lionagi.operations.schema.structure import Structure
from lionagi.protocols.generic.element import ID, Observable
from lionagi.protocols.generic.progression import Progression
from lionagi.protocols.messages import Instruction

from lionagi_turns.core.contracts import ContextBlock, TurnRequest
from lionagi_turns.core.values import JsonObject

if TYPE_CHECKING:
    from lionagi.operations.types import ChatParam
    from lionagi.protocols.context_providers import ProviderReport
    from lionagi.session.branch import Branch

T = TypeVar("T")

__all__ = (
    "ProgressionIdError",
    "ProgressionTypeError",
    "context_blocks_from_report",
    "isolate_instruction",
    "legacy_progression",
    "progression_ids",
    "turn_request_from_param",
)


class ProgressionIdError(ValueError, NotFoundError):
    """A progression entry that is a string but not a UUID. Also lionagi's ``NotFoundError``,
    which lionagi 0.36 raises for it (its lookup finds no such key), so either ``except``
    works; ``details["value"]`` holds the entry."""

    def __init__(self, message: str, value: object) -> None:
        NotFoundError.__init__(self, message, details={"value": value})


class ProgressionTypeError(TypeError, NotFoundError):
    """A progression entry that is no id at all (for example an int). Also lionagi's
    ``NotFoundError``, which lionagi 0.36 raises for it; ``details["type"]`` names its type."""

    def __init__(self, message: str, value: object) -> None:
        NotFoundError.__init__(self, message, details={"type": type(value).__name__})


def progression_ids(value: object) -> tuple[UUID, ...]:
    """Every id in ``value``, in order, as UUIDs.

    Accepts a UUID, a UUID string, anything with an ``id`` (a lionagi message or element), a
    ``Progression``, or a list/tuple of any of these (nested lists flattened in order). Raises
    ``ProgressionTypeError`` (a TypeError) naming the position of an item that has no id, and
    ``ProgressionIdError`` (a ValueError) for a string that is not a UUID; both are also
    lionagi's ``NotFoundError``, as lionagi 0.36 raises for such entries.
    """
    out: list[UUID] = []
    _collect(value, "progression", out)
    return tuple(out)


def _collect(value: object, where: str, out: list[UUID]) -> None:
    if isinstance(value, Progression):
        out.extend(value)
        return
    if isinstance(value, UUID):
        out.append(value)
        return
    if isinstance(value, Observable):
        out.append(ID.get_id(cast(Any, value)))
        return
    if isinstance(value, str):
        try:
            out.append(UUID(value))
        except ValueError as exc:
            raise ProgressionIdError(
                f"{where} holds {value!r}, which is not a UUID string; pass message ids, "
                "messages or a Progression",
                value,
            ) from exc
        return
    if isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _collect(item, f"{where}[{i}]", out)
        return
    raise ProgressionTypeError(
        f"{where} holds a {type(value).__name__}, which has no message id; pass UUIDs, UUID "
        "strings, messages, or a Progression",
        value,
    )


def legacy_progression(value: object) -> tuple[UUID, ...] | None:
    """lionagi's ``param.progression or branch.progression`` rule: a falsy value (``None``,
    ``[]``, an empty ``Progression``) selects the branch's progression (``None``); anything
    else is converted with ``progression_ids``."""
    if value is None or not value:
        return None
    return progression_ids(value)


def context_blocks_from_report(
    blocks: Sequence[str] | None, report: ProviderReport | None
) -> tuple[ContextBlock, ...]:
    """Pair lionagi's rendered provider ``blocks`` with the names in ``report.fired``.

    ``blocks`` is what lionagi passes as ``context_blocks`` (``report.blocks``); ``report`` is
    the branch's ``last_context_report`` (a ``ProviderReport``). Each fired entry must be a dict
    with a non-empty ``provider_name``, and the two lists must pair one-to-one with equal text;
    otherwise ValueError says what does not match. No blocks -> ``()``.
    """
    texts = list(blocks or ())
    if not texts:
        return ()
    if report is None:
        raise ValueError(
            f"{len(texts)} context block(s) were passed but the branch has no context report "
            "(branch.last_context_report is None), so their provider names are unknown; pass "
            "the report lionagi's context-provider pass produced for this call"
        )
    fired = list(getattr(report, "fired", None) or ())
    report_blocks = list(getattr(report, "blocks", None) or ())
    if len(fired) != len(texts) or report_blocks != texts:
        raise ValueError(
            f"cannot pair {len(texts)} context block(s) with the branch's context report "
            f"({len(report_blocks)} block(s), {len(fired)} fired provider(s)): the blocks passed "
            "must be exactly report.blocks, one per report.fired entry. Was the report "
            "replaced by another provider pass before this call compiled?"
        )
    out: list[ContextBlock] = []
    for i, (entry, text) in enumerate(zip(fired, texts, strict=True)):
        name = entry.get("provider_name") if isinstance(entry, dict) else None
        if not isinstance(name, str) or not name:
            raise ValueError(
                f"context report fired[{i}] is {entry!r}; expected a dict with a non-empty "
                "'provider_name': give each context provider a name, or fix the provider "
                "pass that built branch.last_context_report"
            )
        out.append(ContextBlock(provider_name=name, content=text))
    return tuple(out)


def isolate_instruction(instruction: T) -> T:
    """A deep copy of ``instruction`` when it is a lionagi ``Instruction`` (same id, sender,
    recipient, metadata), so lionagi's factory, which updates an ``Instruction`` in place, never
    touches the caller's object; any other value is returned as is."""
    if isinstance(instruction, Instruction):
        copied: T = instruction.model_copy(deep=True)
        return copied
    return instruction


def _given(param: ChatParam, name: str) -> Any:
    value = getattr(param, name, None)
    if value is None or param._is_sentinel(value):
        return None
    return value


def _tool_schemas(content_value: object, param_value: object) -> tuple[JsonObject, ...]:
    value = content_value if content_value else param_value
    if not value:
        return ()
    if isinstance(value, dict):
        # lionagi accepts ActionManager.get_tool_schema's {"tools": [...]} wrapper.
        value = value.get("tools", [value])
    items: Iterable[Any] = value if isinstance(value, list | tuple) else [value]
    return tuple(copy.deepcopy(dict(s)) for s in items)


def _structure(param_value: object, content_value: object) -> type[Structure] | str | None:
    for value in (param_value, content_value):
        if isinstance(value, str):
            return value
        if isinstance(value, type) and issubclass(value, Structure):
            return value
    return None


def turn_request_from_param(
    branch: Branch,
    ins: Instruction,
    param: ChatParam,
    *,
    context_blocks: Sequence[ContextBlock] = (),
) -> TurnRequest:
    """The ``TurnRequest`` lionagi's chat/run preparation describes (see the module rules).

    ``ins`` is the instruction lionagi built for this call; it is used as the request's
    instruction unchanged (the compiler never mutates it). ``branch`` is accepted for
    signature parity with lionagi's preparation and is not read.
    """
    del branch
    if not isinstance(ins, Instruction):
        raise TypeError(
            f"ins must be the lionagi Instruction built for this call, got {type(ins).__name__}"
        )
    content = ins.content
    response_format = content.response_format
    if response_format is None:
        response_format = _given(param, "response_format")
    imodel_kw = _given(param, "imodel_kw") or {}
    return TurnRequest(
        instruction=ins,
        progression=legacy_progression(_given(param, "progression")),
        tool_schemas=_tool_schemas(content.tool_schemas, _given(param, "tool_schemas")),
        response_format=response_format,
        structure=_structure(_given(param, "structure"), content.structure),
        context_blocks=tuple(context_blocks),
        provider_kwargs=dict(imodel_kw),
    )
