"""ADR-0007 D2 §2: the one table of message-kind rules.

Each lionagi message kind the compiler knows is one ``KindRule`` row naming what the history
walk does with it (``Projected``). ``history.project_history`` dispatches on that value with
an exhaustive ``match`` (``assert_never``), and the compiler renders each turn kind the walk
builds through its own exhaustive table; so a new message kind is one row here plus, if it
projects to a new turn kind, that turn's walk step and render rule. A record no row matches is
an ``unknown_subtype`` defect (raised as TypeError), never a fallback.

Subclasses of a listed kind follow their base's row (rows are matched with ``isinstance``, in
order; lionagi's kinds do not overlap). A record whose class has role ``UNSET`` (the base
``Message``) matches ``UNSET_RULE``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lionagi.protocols.messages import (
    ActionRequest,
    ActionResponse,
    AssistantResponse,
    Instruction,
    Message,
    MessageRole,
    System,
)

__all__ = ("KIND_RULES", "UNSET_RULE", "KindRule", "Projected", "rule_for")

# What the walk does with a record of the kind:
# - "skip": emits nothing;
# - "action_result": a pending {"function", "arguments", "output"} result for the next
#   instruction (the current one when none follows);
# - "assistant": an assistant turn; consecutive ones form one run;
# - "instruction": an instruction turn; one right after an instruction is a defect.
Projected = Literal["skip", "action_result", "assistant", "instruction"]


@dataclass(frozen=True, slots=True)
class KindRule:
    """One message kind and the ADR rule for it (``rule``: the rule in one line, for whoever
    reads this table; the walk reads only ``projected``)."""

    kind: type[Message]
    projected: Projected
    rule: str


KIND_RULES: tuple[KindRule, ...] = (
    KindRule(System, "skip", "not emitted; the canonical branch system is folded (D2 §4)"),
    KindRule(ActionRequest, "skip", "not emitted; its call is on the correlated response"),
    KindRule(
        ActionResponse,
        "action_result",
        "{function, arguments, output} folded into the next instruction (else the current)",
    ),
    KindRule(AssistantResponse, "assistant", "assistant message; a run is joined by a blank line"),
    KindRule(Instruction, "instruction", "user message, durable sections only"),
)
UNSET_RULE = KindRule(Message, "skip", "role unset: routed traffic, not a conversation turn")

_by_type: dict[type, KindRule | None] = {}


def rule_for(record: object) -> KindRule | None:
    """The row for ``record``'s class, ``UNSET_RULE`` for a role-unset message, or None (no
    rule: an unknown subtype, or not a message at all)."""
    cls = type(record)
    try:
        return _by_type[cls]
    except KeyError:
        pass
    found = next((r for r in KIND_RULES if issubclass(cls, r.kind)), None)
    if found is None and issubclass(cls, Message) and cls._role == MessageRole.UNSET:
        found = UNSET_RULE
    _by_type[cls] = found
    return found
