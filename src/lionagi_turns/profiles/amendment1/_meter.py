"""Token counts of the profile's sections through the caller's ``measure``.

``measure`` counts tokens of a text (None: o200k, ``lionagi_turns.core.measure.count_tokens``,
resolved lazily, so an unbounded compile never loads a tokenizer); every count must be an
``int >= 0`` (``TypeError`` naming the text otherwise).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from lionagi.protocols.messages import ActionRequest, ActionResponse, Instruction

from lionagi_turns.core.history import action_result
from lionagi_turns.core.render import CallOptions, Content, Part, ShownSections
from lionagi_turns.memo import renders as _cache
from lionagi_turns.profiles.amendment1._sections import result_entry
from lionagi_turns.profiles.amendment1._turns import Record

if TYPE_CHECKING:
    from lionagi_turns.core.profile import Memo

__all__ = ("Measure", "Meter")

Measure = Callable[[str], int]


class Meter:
    """Token counts through ``measure`` (resolved lazily: only a bounded section measures). A
    meter serves one compile and counts each distinct text once (``measure`` is a function of
    its text)."""

    __slots__ = ("_counted", "_fn")

    def __init__(self, measure: Measure | None, counted: Mapping[str, int] | None = None) -> None:
        """``counted``: counts this ``measure`` made of texts before (a previous meter's
        ``counts``), taken as they are."""
        if measure is not None and not callable(measure):
            raise TypeError(f"measure must be a callable str -> int, got {measure!r}")
        self._fn: Measure | None = measure
        self._counted: dict[str, int] = dict(counted) if counted else {}

    def counts(self, texts: Iterable[str]) -> dict[str, int]:
        """The counts this meter made of those of ``texts`` it counted."""
        counted = self._counted
        return {t: counted[t] for t in texts if t in counted}

    def text(self, text: str) -> int:
        known = self._counted.get(text)
        if known is not None:
            return known
        if self._fn is None:
            from lionagi_turns.core.measure import count_tokens

            self._fn = count_tokens
        n = self._fn(text)
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise TypeError(f"measure({text[:40]!r}) returned {n!r}; it must return an int >= 0")
        self._counted[text] = n
        return n

    def content(self, content: Content | None) -> int:
        """Tokens of rendered content: a string, or the text parts of a multimodal list; 0 for
        None (nothing rendered). A text part whose ``text`` is not a string is a TypeError."""
        if isinstance(content, list):
            return sum(self.text(_part_text(p)) for p in content if p.get("type") == "text")
        return self.text(content) if content else 0

    def current(
        self, message: Instruction, options: CallOptions | ShownSections, memo: Memo | None
    ) -> tuple[int, tuple[str, ...]]:
        """Tokens of the current instruction rendered with ``options`` and its own context, no
        results, and the texts of that rendering when it is the durable one (no call options,
        through a ``memo`` that keeps it: the branch's next compile weighs the instruction as
        history and reads it back), else ()."""
        from lionagi_turns.core.render import render_view

        if (memo is not None and memo.keeps and isinstance(options, CallOptions)
                and not options.tool_schemas and options.response_format is None
                and options.structure is None):
            durable = memo.durable_rendering(message)
            return self.content(durable), tuple(_texts(durable))
        return self.content(render_view(message.content, options=options)[0]), ()

    def instruction(self, message: Instruction) -> int:
        return self.content(_cache.render_durable(message))

    def record(self, msg: Record) -> int | None:
        """Tokens of one history record as it would render; None for what never renders."""
        if isinstance(msg, Instruction):
            return self.instruction(msg)
        if isinstance(msg, ActionResponse):
            return self.text(result_entry(action_result(msg)))
        if isinstance(msg, ActionRequest):
            return None
        return self.text(msg.content.assistant_response)


def _texts(content: Content) -> list[str]:
    if isinstance(content, list):
        return [_part_text(p) for p in content if p.get("type") == "text"]
    return [content] if content else []


def _part_text(part: Part) -> str:
    text = part["text"]
    if not isinstance(text, str):
        raise TypeError(
            f"a text part of rendered content holds {type(text).__name__}, not a string; "
            "render the content with lionagi_turns.core.render"
        )
    return text
