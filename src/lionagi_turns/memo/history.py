"""A historical instruction's provider text without building an ``InstructionContent``.

Contract: ``render_history(content, results)`` equals
``core.render.render_instruction(content, results=results)`` byte for byte, and raises what it
raises, always.

Why skipping the construction is exact: for a history render (no fold, no call options)
``render_instruction`` checks the values (``core.values.check_value``, ``core.parts`` for
``image_detail``), builds ``InstructionContent(instruction, guidance, list(context))`` and asks
for its structured text. That construction only wraps lists and dicts in lionagi's tracked
copies, which render exactly like the originals (``_prune`` turns both into plain
containers); without a response format the content has no structure instance, so its text is
the section document of those three fields (Tools empty), which ``yaml.section_doc`` builds
from the source's fields. The value checks pass for every value the fast emitter accepts
(its domain is narrower: see ``yaml``); the folded results, which the emitter may not see
(a result equal to a context item is not appended), and ``image_detail`` are checked here.

Everything else goes to ``render_instruction`` itself, which then renders or raises its own
error: ``plain_content``, images, a ``prompt_context`` that is not a list (``list(...)`` of
it would change it), a content that is not exactly ``InstructionContent``, a value outside
the fast emitter's domain, and any check or comparison that fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lionagi.protocols.messages.instruction import InstructionContent
from lionagi.protocols.messages.message import _TrackedDict, _TrackedList

from lionagi_turns.core.parts import check_image_detail
from lionagi_turns.core.render import Content, Result, merge_results, render_instruction
from lionagi_turns.core.values import check_value
from lionagi_turns.memo.yaml import fast_yaml, section_doc

__all__ = ("render_history",)

_CONTEXT_LISTS = (list, _TrackedList)


def render_history(content: InstructionContent, results: Sequence[Result] = ()) -> Content:
    """Exactly ``render_instruction(content, results=results)`` (see the module docstring)."""
    text = _fast_text(content, results)
    return render_instruction(content, results=results) if text is None else text


def _fast_text(content: InstructionContent, results: Sequence[Result]) -> str | None:
    if (
        type(content) is not InstructionContent
        or not (content.plain_content is None or content.plain_content.__class__ is str)
        or content.plain_content
        or type(content.images) not in _CONTEXT_LISTS
        or content.images
        or type(content.prompt_context) not in _CONTEXT_LISTS
    ):
        return None
    try:
        check_image_detail(content.image_detail)
        context = content.prompt_context
        if results:
            context = _merge(context, results)
        doc = section_doc(content.guidance, content.instruction, context, [])
    except Exception:  # render_instruction raises its own, exact error for it
        return None
    text = fast_yaml(doc)
    return None if text is None else text.strip()


_PLAIN = frozenset({str, int, float, bool, type(None), list, _TrackedList, dict, _TrackedDict})
_DICTS = (dict, _TrackedDict)
_PAIRS = 256  # more dict comparisons than this: the reference's linear fold is cheaper


def _merge(context: Sequence[Any], results: Sequence[Result]) -> list[object]:
    """``merge_results(context, results)``: each result not equal to (or identical with) an
    item already present is appended, earlier results included.

    Shortcut for plain data: an item of a scalar or list type never equals a dict result, so
    only dict items of the same size are compared (with ``==``, as the fold does). A result
    that is skipped — equal to a present item — is not rendered, so it is checked here the
    way ``render_instruction`` checks every result; appended ones are checked by the fast
    emitter's domain. Anything else is the reference fold itself.
    """
    if any(type(item) not in _PLAIN for item in context) or any(
        type(result) is not dict for result in results
    ):
        return _reference(context, results)
    merged = list(context)
    dicts = [item for item in merged if type(item) in _DICTS]
    if (len(dicts) + len(results)) * len(results) > _PAIRS:
        return _reference(context, results)
    for result in results:
        if any(d is result or (len(d) == len(result) and d == result) for d in dicts):
            check_value(result, "folded action result")
            continue
        merged.append(result)
        dicts.append(result)
    return merged


def _reference(context: Sequence[object], results: Sequence[Result]) -> list[object]:
    for result in results:
        check_value(result, "folded action result")
    return merge_results(context, results)
