"""ADR-0007 D2 §2 (amended): within one of ReAct's later calls, the caller's context once.

``react_step(projection, current, items)`` applies the step to this request's ephemeral
copies only:

- ``items`` is the caller's ReAct context (lionagi keeps it in ``_react_context`` while such a
  call runs; the integration reads it and passes it in). None or empty: no step.
- The unit is the prompt-context item, compared as lionagi 0.36 compares them: by its
  rendering as an entry of the instruction's context list (``minimal_yaml([item])``), as a
  multiset, so ``True`` never stands for ``1`` and an item repeated n times is carried only
  by an instruction holding it n times.
- A carrier is an instruction that renders its prompt context (not plain content) and holds
  every item. Of the kept history instructions, the first carrier keeps the items; every later
  carrier, and the current instruction when it carries them, renders without them (one held
  item removed per item, the first equal one). When no kept history instruction carries them
  the current instruction keeps them.
- A value that cannot be rendered makes its instruction a non-carrier, and an ``items`` list
  that cannot be rendered disables the step (sent twice costs less than lost).
- Stored records and the given projection are never changed: the result is a projection
  whose reduced instructions are new turns with ``InstructionTurn.context`` set, and the
  returned context for the current instruction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from lionagi.protocols.messages.instruction import InstructionContent

from lionagi_turns.core.history import InstructionTurn, Projection, Turn
from lionagi_turns.core.memo import active

__all__ = ("react_step",)


def _rendered(items: Sequence[object]) -> list[str]:
    yaml_text = active().yaml
    return [yaml_text([item]) for item in items]


def _without(content: InstructionContent, shown: Sequence[str]) -> list[object] | None:
    """``content``'s prompt context without one held item per shown item, or None when it
    does not carry them all (see the module rules)."""
    if content.plain_content:
        return None
    held = list(content.prompt_context)
    if len(held) < len(shown):
        return None
    try:
        rendered = _rendered(held)
    except Exception:  # deferred, not hidden: the render pass refuses this value by record
        return None
    for text in shown:
        try:
            k = rendered.index(text)
        except ValueError:
            return None
        del rendered[k], held[k]
    return held


def react_step(
    projection: Projection, current: InstructionContent, items: Sequence[object] | None
) -> tuple[Projection, list[object] | None]:
    """Apply the step (module rules): ``projection`` with each later carrier replaced by a
    copy holding its reduced context (``projection`` itself when no turn changes), and the
    current instruction's prompt context for this request (None: it keeps its own)."""
    if not items:
        return projection, None
    try:
        shown = _rendered(list(items))
    except Exception:  # no step; an instruction holding such an item is refused when rendered
        return projection, None
    first = True
    turns: list[Turn] | None = None
    for index, turn in enumerate(projection.turns):
        if not isinstance(turn, InstructionTurn):
            continue
        reduced = _without(turn.message.content, shown)
        if reduced is None:
            continue
        if first:
            first = False
            continue
        if turns is None:
            turns = list(projection.turns)
        turns[index] = turn.with_context(reduced)
    stepped = projection if turns is None else replace(projection, turns=tuple(turns))
    if first:  # no kept history instruction carries them: the current one keeps them
        return stepped, None
    return stepped, _without(current, shown)
