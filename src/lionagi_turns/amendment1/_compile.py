"""Amendment 1's ``compile_chat_request``: the default profile's passes with D7's bounds, D8's
authority and the ``tool_results`` section.

Passes, in order (ADR-0007 D2 §6 steps 1-4; each reads only what an earlier one produced):

1. ``check`` - the request: blocks are material (``ValueError``), the default profile's
   call-option check.
2. ``select`` + ``validate`` - the default profile's selection and projection of the whole
   view; its first defect kind is raised before any bound runs.
3. ``history bound`` (step 1) - view exclusions become ``evicted``/``compacted`` entries; whole
   turns are measured (instruction rendered durably with its own prompt context, the caller's
   ReAct items in; each assistant response's text) and the newest that fit are kept; every
   record of a dropped turn is a ``truncated`` entry.
4. ``project`` + ``ReAct step`` (step 2) - the default projection over the kept view; each
   ReAct item renders only on the first rendered instruction carrying it; each instruction's
   ``tool_results`` entry skips a result equal to one already in the entry or in the
   instruction's own (durable) prompt context.
5. ``context`` - blocks admitted whole, in order, while their canonical entries fit the
   context budget, else skipped whole (``section_budget``); the request's ``skipped`` entries
   first. Markers one line each above the envelope.
6. ``render`` (step 3) - the default profile's fold and renderer; tool_results blocks appended
   to their instruction; history markers lead the first compiled message.
7. ``section bounds`` (step 4) - tool_results keeps its newest results that fit (older ones
   ``truncated``, marker above the first block that lost results); system and instruction
   are measured and refuse with ``SectionBudgetRefused`` carrying all five records.
8. ``durable copy`` - the record-ready instruction (no bound record, marker or block).

No I/O, no provider call, no write to the branch. ``measure`` counts tokens of a text; the
default is the o200k count of ``lionagi_turns._measure``; it is called only for a section
with a budget.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lionagi.ln import json_dumps
from lionagi.protocols.messages import ActionRequest, ActionResponse, Instruction, MessageRole
from lionagi.protocols.messages.instruction import InstructionContent

from .. import _compiler as _default
from .._durable import durable_instruction
from .._fast import cache as _cache
from .._fold import fold_text
from .._history import (
    AssistantTurn,
    InstructionTurn,
    action_result,
    project_history,
    select_ids,
)
from .._render import render_instruction
from ._contracts import (
    SECTION_AUTHORITY,
    SECTION_POSTURE,
    SECTIONS,
    CompiledChatRequest,
    CompiledMessage,
    LeftOut,
    SectionBound,
    SectionBudgetRefused,
    SectionBudgets,
    TurnRequest,
    check_material,
)
from ._sections import (
    append_part,
    block_entry,
    context_section,
    marker_lines,
    prepend_part,
    result_entry,
    tool_results_block,
)
from ._turns import Turn, keep_newest, split_turns
from ._views import view_exclusions

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("compile_chat_request",)

Measure = Callable[[str], int]


def compile_chat_request(
    branch: Branch,
    request: TurnRequest,
    *,
    budgets: SectionBudgets | None = None,
    measure: Measure | None = None,
    react_context: Sequence[Any] | None = None,
) -> CompiledChatRequest:
    """Compile ``request`` against ``branch`` under Amendment 1 (see the module passes).

    ``budgets``: per-section token budgets (None: all unbounded). ``measure``: tokens of a text
    (None: o200k). ``react_context``: the caller's context items of the running ReAct turn
    (None or empty: no ReAct step). Raises the default profile's errors, ``ValueError`` for a
    non-material block and ``SectionBudgetRefused`` for a system or instruction section over
    its budget, before producing any output.
    """
    if not isinstance(request, TurnRequest):
        raise TypeError(
            f"amendment1.compile_chat_request takes an amendment1.TurnRequest, got "
            f"{type(request).__module__}.{type(request).__name__}; build it with "
            "lionagi_turns.amendment1.TurnRequest(...)"
        )
    if budgets is None:
        budgets = SectionBudgets()
    elif not isinstance(budgets, SectionBudgets):
        raise TypeError(f"budgets must be a SectionBudgets, got {type(budgets).__name__}")
    check_material(request.context_blocks)
    _default._check_request(request)  # type: ignore[arg-type]
    meter = _Meter(measure)
    react = _react_items(react_context)

    # 2. select + validate the whole view
    ids = select_ids(branch, request.progression)
    project_history(branch, ids).raise_first()
    pile = branch.msgs.messages  # type: ignore[has-type]

    # 3. history bound (step 1)
    exclusions = view_exclusions(branch, request.progression)
    split = split_turns(ids, pile)
    start = 0
    if budgets.history is not None:
        start = keep_newest([meter.turn(t) for t in split.turns], budgets.history)
    dropped = split.turns[:start]
    truncated = [
        LeftOut(str(r.id), "truncated", meter.record(r)) for t in dropped for r in t.records
    ]
    gone = {r.id for t in dropped for r in t.records}
    kept_ids = tuple(uid for uid in ids if uid not in gone)

    # 4. project + ReAct step (step 2)
    projection = project_history(branch, kept_ids)
    projection.raise_first()
    current = request.instruction
    instructions: list[InstructionTurn] = [
        t for t in projection.turns if isinstance(t, InstructionTurn)
    ]
    contexts = _react_step([*(t.message for t in instructions), current], react)
    trailing = [r for r in split.trailing if isinstance(r, ActionResponse)]
    entries = [
        _entry(t.message, t.sources) for t in instructions
    ] + [_entry(current, trailing)]

    # 5. context (skip posture)
    blocks, context_left = _admit_blocks(request, budgets.context, meter)
    section = context_section(blocks, context_left)
    system = branch.msgs.system
    prefix = (system.rendered if system is not None else "", section)

    # 7a. tool_results bound (entries are independent of the instructions they follow)
    results_left, kept_results, marker_at = _bound_results(entries, budgets.tool_results, meter)

    # 6. render (step 3)
    targets: list[Instruction] = [*(t.message for t in instructions), current]
    rendered: dict[int, Any] = {}
    for index, (message, ctx) in enumerate(zip(targets, contexts, strict=True)):
        is_current = index == len(targets) - 1
        rendered[index] = _render(
            message, ctx, prefix if index == 0 else None, section, request, is_current
        )
    current_rendered = rendered[len(targets) - 1]
    _default._guard_current_turn(current.content, current_rendered)

    out: list[CompiledMessage] = []
    index = 0
    for turn in projection.turns:
        if isinstance(turn, AssistantTurn):
            text = "\n\n".join(m.content.assistant_response for m in turn.messages)
            _add(out, MessageRole.ASSISTANT, text)
        else:
            _add(out, MessageRole.USER, _with_results(rendered[index], kept_results[index],
                                                      results_left if marker_at == index else ()))
            index += 1
    _add(out, MessageRole.USER, _with_results(current_rendered, kept_results[index],
                                              results_left if marker_at == index else ()))
    history_left = (*exclusions.left_out, *truncated)
    history_marker = marker_lines("history", history_left)
    if history_marker:
        if out:
            out[0] = CompiledMessage(out[0].role, prepend_part(out[0].content, history_marker))
        else:
            out.append(CompiledMessage(MessageRole.USER, history_marker))

    # 7b. records; system and instruction refuse
    history_kept = tuple(
        str(m.id)
        for t in projection.turns
        for m in ((t.message,) if isinstance(t, InstructionTurn) else tuple(t.messages))
    )
    results_kept = tuple(str(r.id) for entry in entries for r in entry.sources
                         if str(r.id) not in {e.name for e in results_left})
    records = {
        "system": ((str(system.id),) if system is not None else (), ()),
        "instruction": ((str(current.id),), ()),
        "history": (history_kept, history_left),
        "context": (tuple(b.provider_name for b in blocks), context_left),
        "tool_results": (results_kept, tuple(results_left)),
    }
    bounds = tuple(
        SectionBound(
            section=name,  # type: ignore[arg-type]
            authority=SECTION_AUTHORITY[name],
            posture=SECTION_POSTURE[name],  # type: ignore[arg-type]
            budget=getattr(budgets, name),
            kept=records[name][0],
            left_out=records[name][1],
        )
        for name in SECTIONS
    )
    refusals = []
    if budgets.system is not None and system is not None:
        used = meter.text(system.rendered)
        if used > budgets.system:
            refusals.append(("system", used, budgets.system, "shorten the system message"))
    if budgets.instruction is not None:
        own = current_rendered
        if len(targets) == 1 and any(prefix):  # the fold is the system's and context's text
            own = _render(current, contexts[-1], None, "", request, True)
        used = meter.content(own)
        if used > budgets.instruction:
            refusals.append(("instruction", used, budgets.instruction,
                             "shorten the instruction, its guidance or its call options"))
    if refusals:
        raise _refused(refusals, bounds)

    # 8. durable copy
    return CompiledChatRequest(
        instruction=durable_instruction(current),
        messages=tuple(out),
        provider_kwargs=request.provider_kwargs,
        bounds=bounds,
    )


# ------------------------------------------------------------------------------- measuring


class _Meter:
    """Token counts through ``measure`` (resolved lazily: only a bounded section measures)."""

    __slots__ = ("_fn", "_given")

    def __init__(self, measure: Measure | None) -> None:
        if measure is not None and not callable(measure):
            raise TypeError(f"measure must be a callable str -> int, got {measure!r}")
        self._given = measure
        self._fn: Measure | None = measure

    def text(self, text: str) -> int:
        if self._fn is None:
            from .._measure import count_tokens

            self._fn = count_tokens
        n = self._fn(text)
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise TypeError(f"measure({text[:40]!r}) returned {n!r}; it must return an int >= 0")
        return n

    def content(self, content: Any) -> int:
        """Tokens of rendered content: a string, or the text parts of a multimodal list."""
        if isinstance(content, list):
            return sum(self.text(p["text"]) for p in content if p.get("type") == "text")
        return self.text(content) if content else 0

    def record(self, msg: Any) -> int | None:
        """Tokens of one history record as it would render; None for what never renders."""
        if isinstance(msg, Instruction):
            return self.content(_cache.render_durable(msg))
        if isinstance(msg, ActionResponse):
            return self.text(result_entry(action_result(msg)))
        if isinstance(msg, ActionRequest):
            return None
        return self.text(msg.content.assistant_response)

    def turn(self, turn: Turn) -> int:
        """A turn's history size: its instruction and assistant responses (its action results
        are the tool_results section's)."""
        total = sum(self.text(a.content.assistant_response) for a in turn.assistants)
        if turn.instruction is not None:
            total += self.content(_cache.render_durable(turn.instruction))
        return total


# ----------------------------------------------------------------------------------- passes


def _react_items(react_context: Sequence[Any] | None) -> list[Any]:
    if react_context is None:
        return []
    if isinstance(react_context, str | bytes) or not hasattr(react_context, "__iter__"):
        raise TypeError(
            "react_context must be a sequence of the caller's context items, got "
            f"{type(react_context).__name__}"
        )
    return list(react_context)


def _react_step(messages: Sequence[Instruction], react: list[Any]) -> list[list[Any] | None]:
    """Per rendered instruction (oldest first, the current one last): its prompt context with
    the caller's ReAct items left out, or None when it renders unchanged.

    An instruction carries the items when its context renders every one of them (lionagi's
    ``_render_context`` text, as often as the items repeat; plain-content instructions never
    carry). The first carrier keeps them; every later carrier renders without them, one held
    item per caller item. Items lionagi cannot render are left in, as lionagi leaves them.
    """
    from lionagi.operations.chat._prepare import _render_context

    out: list[list[Any] | None] = [None] * len(messages)
    if not react:
        return out
    try:
        shown = _render_context(react)
    except Exception:
        return out
    need = Counter(shown)
    first = True
    for i, message in enumerate(messages):
        content = message.content
        if content.plain_content:
            continue
        try:
            held = _render_context(list(content.prompt_context))
        except Exception:
            continue
        if need - Counter(held):
            continue
        if first:
            first = False
            continue
        keep = list(content.prompt_context)
        for text in shown:
            k = held.index(text)
            del held[k], keep[k]
        out[i] = keep
    return out


@dataclass(slots=True)
class _Entry:
    """One instruction's tool_results entry: the results it renders (with their records) and
    every source record (deduplicated ones included)."""

    results: list[tuple[dict[str, Any], ActionResponse]]
    sources: list[ActionResponse]


def _entry(message: Instruction, sources: Sequence[ActionResponse]) -> _Entry:
    context = list(message.content.prompt_context)
    results: list[tuple[dict[str, Any], ActionResponse]] = []
    for source in sources:
        result = action_result(source)
        if result in context or any(result == r for r, _ in results):
            continue
        results.append((result, source))
    return _Entry(results, list(sources))


def _admit_blocks(
    request: TurnRequest, budget: int | None, meter: _Meter
) -> tuple[list[Any], tuple[LeftOut, ...]]:
    left: list[LeftOut] = list(request.skipped)
    if budget is None:
        return list(request.context_blocks), tuple(left)
    kept = []
    total = 0
    for block in request.context_blocks:
        size = meter.text(json_dumps(block_entry(block), sort_keys=True))
        if total + size <= budget:
            total += size
            kept.append(block)
        else:
            left.append(LeftOut(block.provider_name, "section_budget", size))
    return kept, tuple(left)


def _bound_results(
    entries: list[_Entry], budget: int | None, meter: _Meter
) -> tuple[list[LeftOut], list[list[dict[str, Any]]], int | None]:
    """The results each entry keeps, the truncated ones, and the entry holding the marker."""
    items = [(i, r, s) for i, e in enumerate(entries) for r, s in e.results]
    start = 0
    sizes: list[int] = []
    if budget is not None:
        sizes = [meter.text(result_entry(r)) for _, r, _ in items]
        start = keep_newest(sizes, budget)
    left = [LeftOut(str(s.id), "truncated", sizes[k]) for k, (_, _, s) in enumerate(items[:start])]
    kept: list[list[dict[str, Any]]] = [[] for _ in entries]
    for i, r, _ in items[start:]:
        kept[i].append(r)
    return left, kept, (items[0][0] if start else None)


def _render(
    message: Instruction,
    context: list[Any] | None,
    prefix: tuple[str, str] | None,
    section: str,
    request: TurnRequest,
    is_current: bool,
) -> Any:
    """One instruction through the default profile's renderer; ``prefix`` when it is the fold
    target; ``context`` replaces its prompt context (the ReAct step); results never fold in."""
    source = message.content
    if context is not None:
        source = InstructionContent(
            instruction=source.instruction,
            guidance=source.guidance,
            prompt_context=context,
            plain_content=source.plain_content,
            images=list(source.images),
            image_detail=source.image_detail,
        )
    fold = fold_text(*prefix, source.guidance) if prefix is not None else ""
    where = ("current instruction" if is_current else "instruction") + f" id {message.id}"
    try:
        if not is_current and not fold and context is None:
            return _default._own(_cache.render_durable(message))
        return _default._own(
            render_instruction(
                source,
                fold=fold,
                section=section if fold else "",
                tool_schemas=request.tool_schemas if is_current else (),
                response_format=request.response_format if is_current else None,
                structure=request.structure if is_current else None,
            )
        )
    except ValueError as exc:  # a refused image: say which record holds it
        raise ValueError(f"{exc} ({where})") from exc


def _with_results(content: Any, results: list[dict[str, Any]], left: Sequence[LeftOut]) -> Any:
    block = "\n".join(p for p in (marker_lines("tool_results", left), tool_results_block(results))
                      if p)
    return append_part(content, block)


def _add(out: list[CompiledMessage], role: MessageRole, content: Any) -> None:
    if content:
        out.append(CompiledMessage(role=role, content=content))


def _refused(
    refusals: list[tuple[str, int, int, str]], bounds: tuple[SectionBound, ...]
) -> SectionBudgetRefused:
    parts = [
        f"the {name} section measures {used} tokens, over its budget of {budget}"
        for name, used, budget, _ in refusals
    ]
    exc = SectionBudgetRefused("section budget refused: " + "; ".join(parts), bounds)
    for name, _, _, hint in refusals:
        exc.add_note(f"{name}: {hint}, or raise SectionBudgets.{name}")
    return exc
