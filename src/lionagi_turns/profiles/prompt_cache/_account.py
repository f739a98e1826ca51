"""ADR-0127 D6: per-call prompt-cache accounting, read from a Branch's durable records.

``prompt_cache_account(branch)`` walks the branch's messages in order. Each instruction sent
under the prompt-cache profile (it carries a ``SentRecord``) is one call; its figures come from
the next ``AssistantResponse``'s recorded provider response (lionagi keeps it under
``metadata["model_response"]``), whose ``usage`` is read in Anthropic's shape:
``input_tokens`` (uncached input), ``cache_read_input_tokens``,
``cache_creation.ephemeral_5m_input_tokens`` / ``ephemeral_1h_input_tokens`` (the write per
lifetime; ``cache_creation_input_tokens``, their total, when the split is absent) and
``output_tokens``. A figure the provider did not report is None, never guessed. The segment
changes and the history rewrite are the ones the record counted when the request was compiled.
Everything read is plain data in the messages, so the account survives ``to_dict``/``from_dict``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lionagi.protocols.messages import AssistantResponse, Instruction

from lionagi_turns.profiles.prompt_cache._compile import SegmentChanges, SentRecord, read_record

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("PromptCacheAccount", "PromptCacheCall", "prompt_cache_account")


@dataclass(frozen=True, slots=True)
class PromptCacheCall:
    """One call's input split, side by side (D6); None where the provider reported nothing."""

    instruction_id: str
    uncached_input: int | None
    cache_read: int | None
    cache_write_5m: int | None
    cache_write_1h: int | None
    cache_write_total: int | None
    output: int | None
    stable_changed: bool
    conversation_changed: bool
    history_rewritten: bool


FIGURES: tuple[str, ...] = (
    "uncached_input",
    "cache_read",
    "cache_write_5m",
    "cache_write_1h",
    "cache_write_total",
    "output",
)
"""The ``PromptCacheCall`` fields that count tokens (what ``PromptCacheAccount.total`` sums)."""


@dataclass(frozen=True, slots=True)
class PromptCacheAccount:
    """Every call of one branch's conversation, and the sums D6 asks for."""

    calls: tuple[PromptCacheCall, ...]

    def total(self, field: str) -> int:
        """Sum of one ``PromptCacheCall`` token figure (``FIGURES``) over the calls that
        reported it; any other name is a ValueError naming the figures."""
        if field not in FIGURES:
            raise ValueError(
                f"{field!r} is not a token figure of PromptCacheCall; total() sums one of "
                f"{', '.join(FIGURES)}"
            )
        return sum(getattr(c, field) or 0 for c in self.calls)

    @property
    def segment_changes(self) -> int:
        """Calls that changed the stable or the conversation segment."""
        return sum(c.stable_changed or c.conversation_changed for c in self.calls)

    @property
    def history_rewrites(self) -> int:
        """Calls whose messages no longer started with the previous request's messages."""
        return sum(c.history_rewritten for c in self.calls)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _usage(response: AssistantResponse | None) -> Mapping[str, object]:
    if response is None:
        return {}
    model_response = (response.metadata or {}).get("model_response")
    if isinstance(model_response, list) and model_response:
        model_response = model_response[-1]
    usage = model_response.get("usage") if isinstance(model_response, Mapping) else None
    return usage if isinstance(usage, Mapping) else {}


def prompt_cache_account(branch: Branch) -> PromptCacheAccount:
    """The branch's prompt-cache account (module rules), read in one pass over the messages
    (each message is looked at once: the work grows linearly with the history)."""
    calls: list[PromptCacheCall] = []
    sent: tuple[Instruction, SentRecord] | None = None  # a recorded call awaiting its reply
    for message in branch.messages:  # lionagi's Pile: its order as of one moment
        if not isinstance(message, AssistantResponse | Instruction):
            continue
        if sent is not None:  # the first response or instruction after a recorded call
            reply = message if isinstance(message, AssistantResponse) else None
            calls.append(_call(*sent, reply))
            sent = None
        if isinstance(message, Instruction) and (record := read_record(message)) is not None:
            sent = (message, record)
    if sent is not None:  # the last recorded call has no reply yet
        calls.append(_call(*sent, None))
    return PromptCacheAccount(tuple(calls))


def _call(
    instruction: Instruction, record: SentRecord, reply: AssistantResponse | None
) -> PromptCacheCall:
    """One call's figures: ``reply``'s reported usage and the changes ``record`` counted."""
    usage = _usage(reply)
    split = usage.get("cache_creation")
    split = split if isinstance(split, Mapping) else {}
    changes: SegmentChanges = record.changes
    return PromptCacheCall(
        instruction_id=str(instruction.id),
        uncached_input=_int(usage.get("input_tokens")),
        cache_read=_int(usage.get("cache_read_input_tokens")),
        cache_write_5m=_int(split.get("ephemeral_5m_input_tokens")),
        cache_write_1h=_int(split.get("ephemeral_1h_input_tokens")),
        cache_write_total=_int(usage.get("cache_creation_input_tokens")),
        output=_int(usage.get("output_tokens")),
        stable_changed=changes.stable,
        conversation_changed=changes.conversation,
        history_rewritten=changes.rewrite,
    )
