"""Builders for the Amendment 1 tests: real lionagi branches, a character-count measure."""

from __future__ import annotations

from typing import Any

from lionagi import Branch
from lionagi.protocols.generic.progression import Progression
from unit._support import (  # the same real-branch builders as the unit tests
    add_action_pair,
    add_assistant,
    add_instruction,
    branch,
    set_current_progression,
)

from lionagi_turns.amendment1 import (
    CompiledChatRequest,
    CompiledMessage,
    SectionBudgets,
    TurnRequest,
    compile_chat_request,
)

__all__ = (
    "add_action_pair",
    "add_assistant",
    "add_instruction",
    "all_text",
    "branch",
    "chars",
    "compile_a1",
    "set_current_progression",
    "snapshot",
    "text_of",
)


def text_of(message: CompiledMessage) -> str:
    content = message.content
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content if p.get("type") == "text")


def chars(text: str) -> int:
    """A measure whose counts a test can work out by hand."""
    return len(text)


def compile_a1(
    b: Branch,
    now: str = "now",
    *,
    budgets: SectionBudgets | None = None,
    react_context: Any = None,
    measure: Any = chars,
    **request: Any,
) -> CompiledChatRequest:
    context = request.pop("context", None)
    kwargs = {"context": context} if context is not None else {}
    ins = b.msgs.create_instruction(instruction=now, **kwargs)
    return compile_chat_request(
        b,
        TurnRequest(instruction=ins, **request),
        budgets=budgets,
        measure=measure,
        react_context=react_context,
    )


def all_text(compiled: CompiledChatRequest) -> str:
    return "\n".join(text_of(m) for m in compiled.messages)


def snapshot(b: Branch) -> Any:
    """Everything compile could change, as comparable data."""
    return (
        [m.to_dict() for m in b.msgs.messages],
        list(b.msgs.progression),
        list(b.progression),
        {k: (list(v) if isinstance(v, Progression) else v) for k, v in b.metadata.items()},
    )


def after_fold(text: str) -> str:
    """``text`` after the fold's leading ``Guidance`` section (the history section, where the
    history marker goes); ``text`` itself when it does not open with that section."""
    from lionagi_turns.core.fold import guidance_part

    if not text.startswith("Guidance:"):
        return text
    return text[len(guidance_part(text)) :].removeprefix("\n")
