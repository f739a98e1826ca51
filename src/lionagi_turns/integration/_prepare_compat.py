"""ADR-0007 D6 step 6: ``prepare_messages_for_chat`` delegated to the compiler.

Same signature as ``lionagi.protocols.messages.prepare.prepare_messages_for_chat``. A call the
compiler can express compiles through ``compile_chat_request`` and returns
``to_provider_messages`` of the result; the messages therefore follow ADR-0007 (system text,
then guidance, folded into the first instruction's guidance; action results as
``{"function", "arguments", "output"}`` context items; malformed histories rejected with the
compiler's errors).

A call using any of these compiles with lionagi's original helper instead, after one
``DeprecationWarning`` per option naming it:

=============================  =================================================================
option                         why the compiler cannot express it
=============================  =================================================================
``to_chat=False``              returns lionagi content objects; the compiler returns messages
``system_prefix``              text before the system message; the compiler folds the system
``aggregate_actions=True``     round summaries instead of the ADR's action-result dicts
``round_notifications=True``   ``<system round=...>`` blocks with wall-clock time
``scratchpad``                 part of the round notifications
``new_instruction=None``       the compiler always compiles a current instruction
``new_instruction`` not an     (an assistant or other content as the last message)
  instruction
=============================  =================================================================

Selection in the compiled path: ``progression`` None selects the whole pile in pile order;
otherwise exactly its ids (any form ``adapters.progression_ids`` accepts). As in lionagi's
helper, the system is the first selected message when it is a ``System``; other selected
``System`` messages are skipped. Nothing passed in is mutated. In both paths ``progression`` is
converted to a list of ids first (lionagi 0.36's helper fails on a ``Progression`` object: it
looks the progression's own id up in the pile). http(s) image hosts are checked
with lionagi's validator before returning, as lionagi's rendering does.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, cast

from lionagi.protocols.messages import Instruction, System
from lionagi.protocols.messages import prepare as _lionagi_prepare
from lionagi.protocols.messages.instruction import InstructionContent
from lionagi.protocols.messages.message import MessageContent

from lionagi_turns.core.consistent import read_order
from lionagi_turns.core.contracts import TurnRequest
from lionagi_turns.core.pipeline import compile_chat_request
from lionagi_turns.core.providers import check_image_hosts, to_provider_messages
from lionagi_turns.integration._adapters import progression_ids

if TYPE_CHECKING:
    from uuid import UUID

    from lionagi.protocols.generic.pile import Pile
    from lionagi.protocols.generic.progression import Progression
    from lionagi.protocols.messages import Message

__all__ = ("UNSUPPORTED_OPTIONS", "prepare_messages_for_chat")

# Captured at import, before install() can rebind the module attribute to our function.
_LEGACY = _lionagi_prepare.prepare_messages_for_chat

UNSUPPORTED_OPTIONS: Mapping[str, str] = MappingProxyType({
    "to_chat": "to_chat=False returns lionagi content objects; the compiler returns messages",
    "system_prefix": "system_prefix adds text before the system message; the compiler folds "
    "only the branch's system",
    "aggregate_actions": "aggregate_actions renders round summaries instead of ADR-0007's "
    "action-result dicts",
    "round_notifications": "round_notifications adds <system round=...> blocks",
    "scratchpad": "scratchpad is part of the round notifications",
    "new_instruction": "the compiler compiles exactly one current instruction; pass an "
    "Instruction or InstructionContent",
})


def _unsupported(
    new_instruction: object,
    to_chat: bool,
    system_prefix: str | None,
    aggregate_actions: bool,
    round_notifications: bool,
    scratchpad: dict[str, str] | None,
) -> list[str]:
    found = []
    if not to_chat:
        found.append("to_chat")
    if system_prefix:
        found.append("system_prefix")
    if aggregate_actions:
        found.append("aggregate_actions")
    if round_notifications:
        found.append("round_notifications")
    if scratchpad:
        found.append("scratchpad")
    if _instruction_content(new_instruction) is None:
        found.append("new_instruction")
    return found


def _instruction_content(value: object) -> InstructionContent | None:
    if isinstance(value, Instruction):
        return value.content
    if isinstance(value, InstructionContent):
        return value
    return None


def prepare_messages_for_chat(
    messages: Pile[Message],
    progression: Progression | None = None,
    new_instruction: Message | InstructionContent | None = None,
    to_chat: bool = True,
    system_prefix: str | None = None,
    aggregate_actions: bool = False,
    round_notifications: bool = False,
    scratchpad: dict[str, str] | None = None,
) -> list[MessageContent] | list[dict[str, Any]]:
    """Provider messages for ``new_instruction`` after the selected history (module rules).

    Options the compiler cannot express warn (``DeprecationWarning``, one per option) and use
    lionagi's original helper; everything else raises the compiler's errors.
    """
    unsupported = _unsupported(
        new_instruction, to_chat, system_prefix, aggregate_actions, round_notifications, scratchpad
    )
    if unsupported:
        _warn_legacy(unsupported)
        # lionagi's helper looks a Progression up as one id (its own), so ids are passed.
        legacy_ids: Any = None if progression is None else list(progression_ids(progression))
        legacy: list[MessageContent] | list[dict[str, Any]] = _LEGACY(
            messages,
            legacy_ids,
            new_instruction,
            to_chat,
            system_prefix,
            aggregate_actions,
            round_notifications,
            scratchpad,
        )
        return legacy
    content = _instruction_content(new_instruction)
    assert content is not None  # guaranteed by _unsupported
    ids = (
        read_order(messages, messages.progression)
        if progression is None
        else progression_ids(progression)
    )
    view = _PileView.of(messages, ids)
    instruction = (
        new_instruction
        if isinstance(new_instruction, Instruction)
        else Instruction(content=content.with_updates())  # type: ignore[call-arg]
    )
    request = TurnRequest(
        instruction=instruction,
        progression=ids,
        tool_schemas=tuple(content.tool_schemas),
        response_format=content.response_format,
        structure=content.structure,
    )
    compiled = compile_chat_request(cast(Any, view), request)
    out = to_provider_messages(compiled)
    check_image_hosts(out)
    return out


def _warn_legacy(unsupported: list[str]) -> None:
    """One ``DeprecationWarning`` per option the compiler cannot express, at the caller of
    ``prepare_messages_for_chat``."""
    for option in unsupported:
        warnings.warn(
            f"prepare_messages_for_chat({option}=...): {UNSUPPORTED_OPTIONS[option]}. "
            "This call uses lionagi's legacy compilation, which is deprecated; "
            "use lionagi_turns.compile_chat_request instead.",
            DeprecationWarning,
            stacklevel=3,
        )


@dataclass(frozen=True, slots=True)
class _Msgs:
    messages: Pile[Message]
    system: System | None


@dataclass(frozen=True, slots=True)
class _PileView:
    """The three things the compiler reads from a branch, taken from a bare pile."""

    msgs: _Msgs
    progression: tuple[UUID, ...]

    @classmethod
    def of(cls, pile: Pile[Message], ids: tuple[UUID, ...]) -> _PileView:
        first = pile.collections.get(ids[0]) if ids else None
        system = first if isinstance(first, System) else None
        return cls(msgs=_Msgs(messages=pile, system=system), progression=ids)
