"""ADR-0127 under pass options whose ``results_section`` renders an instruction's action
results after its content (a stage before the layout set it, e.g. a tool_results section).

The prompt-cache profile sends a historical instruction's recorded text when
``prompt_cache._sent.verified_text`` accepts it: the durable rendering, then the response sections.
Under a ``results_section`` both the durable rendering and the sent text end in the same
results tail (the rendering's last paragraph, or its last text part), after which the response
sections cannot follow. ``verified_with_results(turn, rendered, record, section)`` is
``record.text`` when ``rendered`` and the text both end in the tail the section renders for the
turn's results and the text without it verifies against the rendering without it (the same
rules, with the instruction's results taken out, since they are in the tail; nothing looser);
None otherwise. Pure.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from lionagi_turns.profiles.prompt_cache._sent import verified_text

if TYPE_CHECKING:
    from lionagi_turns.core.history import InstructionTurn
    from lionagi_turns.core.render import Content, ResultsSection
    from lionagi_turns.profiles.prompt_cache._record import SentRecord

__all__ = ("verified_with_results",)


def verified_with_results(
    turn: InstructionTurn, rendered: Content, record: SentRecord, section: ResultsSection
) -> Content | None:
    """``record.text`` when it verifies with the results tail set aside (module contract)."""
    text = record.text
    if text is None or not turn.results:
        return None
    context = turn.message.content.prompt_context if turn.context is None else turn.context
    tail = section(turn.results, context)
    if not tail:
        return None
    base, sent = _without(rendered, tail), _without(text, tail)
    if base is None or sent is None:
        return None
    # the results are in the tail: the instruction without them is what the rest renders
    bare = replace(turn, results=[], sources=[])
    return text if verified_text(bare, base, replace(record, text=sent)) is not None else None


def _without(content: object, tail: str) -> Content | None:
    """``content`` without its results tail (None when it does not end in it)."""
    if isinstance(content, str):
        end = f"\n\n{tail}"
        if content.endswith(end):
            return content[: -len(end)]
        return "" if content == tail else None
    if isinstance(content, list) and content and content[-1] == {"type": "text", "text": tail}:
        return content[:-1]
    return None
