"""Rewriting the compiled user messages of one turn, message by message or section by section.

Both helpers pair each compiled user message with the instruction it was rendered from
(``Facts.sources``) and leave a message alone unless the rewrite recognises its exact form.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from lionagi_turns.characterize._facts import Facts, JsonObject, Source, State, Step
from lionagi_turns.characterize._sections import (
    content_text,
    render_sections,
    section_text,
    section_value,
    split_sections,
    with_content_text,
)

# A section rewrite gets the message's loaded sections and its source and returns the new
# values of the sections it changes, or None when the message is not in the predicted form.
_SectionRewrite = Callable[[JsonObject, Source], JsonObject | None]


def rewrite_user_sections(
    facts: Facts, state: State, pick: Callable[[Source], bool], rewrite: _SectionRewrite
) -> Step | None:
    """Apply ``rewrite`` to each structured (not plain_content) compiled user message whose
    source ``pick`` selects. Only the sections it changes are re-rendered (with lionagi's
    ``minimal_yaml``); every other section keeps its exact bytes."""

    def rewrite_text(text: str, source: Source) -> str | None:
        if source.content.plain_content or not pick(source):
            return None
        sections = split_sections(text)
        if sections is None:
            return None
        values: JsonObject = {}
        for position, (key, raw) in enumerate(sections):
            loaded, value = section_value(raw, key, last=position == len(sections) - 1)
            if not loaded:
                return None
            values[key] = value
        changes = rewrite(values, source)
        if not changes or all(values.get(k) == v for k, v in changes.items()):
            return None
        new = [(k, section_text(k, changes[k]) if k in changes else raw) for k, raw in sections]
        missing = [k for k in changes if k not in values]
        if missing:  # only Guidance can be added, and it comes first
            new = [(k, section_text(k, changes[k])) for k in missing] + new
        return render_sections(new)

    return rewrite_user_texts(facts, state, rewrite_text)


def rewrite_user_texts(
    facts: Facts, state: State, rewrite: Callable[[str, Source], str | None]
) -> Step | None:
    """Replace the text of each compiled user message for which ``rewrite(text, source)``
    returns a new text (None: not in the predicted form, left as it is)."""
    if state.compiled is None or state.legacy is None:
        return None
    pairs = facts.sources(state.compiled)
    if pairs is None:
        return None
    compiled = list(state.compiled)
    touched: set[int] = set()
    for index, source in pairs:
        message = compiled[index]
        text = content_text(message["content"])
        new = rewrite(text, source) if text is not None else None
        if new is None:
            continue
        compiled[index] = {**message, "content": with_content_text(message["content"], new)}
        touched.add(index)
    if not touched:
        return None
    return Step(dataclasses.replace(state, compiled=compiled), frozenset(touched))
