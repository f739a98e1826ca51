"""Amendment 1's ``compile_chat_request``: the default pipeline (``_compiler.compile_traced``)
under an Amendment 1 ``CompileProfile`` (``_profile``), plus D7's records.

Passes (ADR-0007 D2 §6 steps 1-4; the pipeline's own passes are not copied):

1. ``check`` - the request is this profile's, its blocks material (``ValueError``).
2. ``context admission`` - blocks admitted whole, in order, while their canonical entries fit
   the context budget, else skipped whole (``section_budget``); the request's ``skipped``
   entries first. The profile's ``envelope`` renders the skip markers, one line each, directly
   above D3's envelope (with D8's ``authority`` key).
3. the pipeline's select and project; then the profile's ``bound`` (step 1): the whole view is
   validated first (its first defect is raised); view exclusions become ``evicted`` /
   ``compacted`` entries; whole turns are measured (the instruction rendered durably with its
   own prompt context, the caller's ReAct items in; its assistant run as it renders) and the
   newest that fit are kept; every record of a dropped turn is a ``truncated`` entry. The same
   bound builds each kept instruction's ``tool_results`` entry (skipping a result equal to one
   already in it or in the instruction's durable prompt context) and applies the tool_results
   budget to the entries' results, newest kept (the section is independent of the
   instructions, so deciding it here changes nothing the later passes read).
4. the pipeline's ReAct step (step 2), fold plan and render (step 3), with the profile's
   ``results_section``: each entry renders after its instruction's content, the tool_results
   marker one line above the block of the entry that lost the oldest results.
5. ``section bounds`` (step 4): history markers lead the first compiled message; the system and
   the instruction (rendered without the fold and its tool_results block, after the ReAct step)
   are measured, and refuse with ``SectionBudgetRefused`` carrying all five records.

No I/O, no provider call, no write to the branch. ``measure`` counts tokens of a text (default
o200k, ``lionagi_turns._measure.count_tokens``); only a section with a budget is measured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lionagi.ln import json_dumps
from lionagi.protocols.messages import ActionRequest, ActionResponse, Instruction

from .._compiler import _assistant_text, _history_record, compile_traced
from .._contracts import TurnRequest as SeedRequest
from .._fast import cache as _cache
from .._history import (
    AssistantTurn,
    InstructionTurn,
    Projection,
    action_result,
    select_ids,
)
from .._profile import CompileProfile
from .._react import react_step
from .._render import CallOptions, render_view
from .._values import naming_record
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
    block_entry,
    context_section,
    marker_lines,
    prepend_part,
    result_entry,
    tool_results_block,
)
from ._turns import keep_newest, split_turns
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
    meter = _Meter(measure)

    blocks, context_left = _admit_blocks(request, budgets.context, meter)
    seed = SeedRequest(
        instruction=request.instruction,
        progression=request.progression,
        tool_schemas=request.tool_schemas,
        response_format=request.response_format,
        structure=request.structure,
        context_blocks=tuple(blocks),
        provider_kwargs=request.provider_kwargs,
    )
    state = _Bound(branch, budgets, meter)
    profile = CompileProfile(
        name="adr-0007-amendment-1",
        bound=state,
        envelope=lambda kept: context_section(kept, context_left),  # type: ignore[arg-type]
        results_section=_results_section,
    )
    trace = compile_traced(branch, seed, profile=profile, react_context=react_context)

    messages = list(trace.compiled.messages)
    history_left = (*state.exclusions, *state.truncated)
    history_marker = marker_lines("history", history_left)
    if history_marker:
        if messages:
            messages[0] = CompiledMessage(
                messages[0].role, prepend_part(messages[0].content, history_marker)
            )
        else:
            messages.append(CompiledMessage(trace.rendered[-1].role, history_marker))

    system = branch.msgs.system
    current = request.instruction
    history_kept = tuple(
        str(m.id)
        for t in trace.projection.turns
        for m in ((t.message,) if isinstance(t, InstructionTurn) else tuple(t.messages))
    )
    records = {
        "system": ((str(system.id),) if system is not None else (), ()),
        "instruction": ((str(current.id),), ()),
        "history": (history_kept, history_left),
        "context": (tuple(b.provider_name for b in blocks), context_left),
        "tool_results": (state.results_kept, state.results_left),
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
        context = react_step(trace.projection, current.content, react_context)
        own, _ = render_view(
            current.content,
            context=context,
            options=CallOptions(request.tool_schemas, request.response_format, request.structure),
        )
        used = meter.content(own)
        if used > budgets.instruction:
            refusals.append(("instruction", used, budgets.instruction,
                             "shorten the instruction, its guidance or its call options"))
    if refusals:
        raise _refused(refusals, bounds)

    return CompiledChatRequest(
        instruction=trace.compiled.instruction,
        messages=tuple(messages),
        provider_kwargs=trace.compiled.provider_kwargs,
        bounds=bounds,
    )


# ------------------------------------------------------------------------------- measuring


class _Meter:
    """Token counts through ``measure`` (resolved lazily: only a bounded section measures)."""

    __slots__ = ("_fn",)

    def __init__(self, measure: Measure | None) -> None:
        if measure is not None and not callable(measure):
            raise TypeError(f"measure must be a callable str -> int, got {measure!r}")
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

    def instruction(self, message: Instruction) -> int:
        return self.content(_cache.render_durable(message))

    def record(self, msg: Any) -> int | None:
        """Tokens of one history record as it would render; None for what never renders."""
        if isinstance(msg, Instruction):
            return self.instruction(msg)
        if isinstance(msg, ActionResponse):
            return self.text(result_entry(action_result(msg)))
        if isinstance(msg, ActionRequest):
            return None
        return self.text(msg.content.assistant_response)


# ------------------------------------------------------------------------------- the bound


class _Entry(list[dict[str, Any]]):
    """A tool_results entry (the results it renders) that may carry the section's marker; it
    is truthy while it carries one, so the pipeline renders the marker of an entry that lost
    every result."""

    marker: str = ""

    def __bool__(self) -> bool:
        return bool(self.marker) or len(self) > 0


def _results_section(results: Sequence[dict[str, Any]], context: Sequence[Any]) -> str:
    marker = getattr(results, "marker", "")
    return "\n".join(p for p in (marker, tool_results_block(list(results))) if p)


@dataclass(slots=True)
class _Bound:
    """The profile's ``bound`` (step 1, and the tool_results entries), and what it decided."""

    branch: Any
    budgets: SectionBudgets
    meter: _Meter
    exclusions: tuple[LeftOut, ...] = ()
    truncated: tuple[LeftOut, ...] = ()
    results_kept: tuple[str, ...] = ()
    results_left: tuple[LeftOut, ...] = ()

    def __call__(self, projected: Projection, request: SeedRequest) -> Projection:
        projected.raise_first()  # the whole view is valid before any bound runs
        branch = self.branch
        self.exclusions = view_exclusions(branch, request.progression).left_out
        groups = _groups(projected)
        start = 0
        if self.budgets.history is not None:
            start = keep_newest([self._size(g) for g in groups], self.budgets.history)
        self.truncated = ()
        if start:  # the records of the dropped turns (the walk's turns omit action requests)
            split = split_turns(select_ids(branch, request.progression), branch.msgs.messages)
            if len(groups) != len(split.turns):  # pragma: no cover - one partition, two walks
                raise AssertionError("history turns disagree with the projection")
            self.truncated = tuple(
                LeftOut(str(r.id), "truncated", self.meter.record(r))
                for t in split.turns[:start]
                for r in t.records
            )
        kept = [turn for group in groups[start:] for turn in group]
        targets = [t for t in kept if isinstance(t, InstructionTurn)]
        entries = [
            _dedup(t.message, t.results, t.sources) for t in targets
        ] + [_dedup(request.instruction, projected.pending, projected.pending_sources)]
        rendered = self._bound_results(entries)
        out_turns: list[Any] = []
        n = 0
        for turn in kept:
            if isinstance(turn, InstructionTurn):
                results, sources = rendered[n]
                out_turns.append(
                    InstructionTurn(turn.message, turn.position, results, sources, turn.context)
                )
                n += 1
            else:
                out_turns.append(turn)
        pending, pending_sources = rendered[n]
        return Projection(out_turns, pending, list(projected.defects), pending_sources)

    def _size(self, group: list[Any]) -> int:
        """A whole turn's history size: its instruction rendered durably (its own prompt
        context, ReAct items in; no fold, no results) and its assistant run as it renders."""
        size = 0
        for turn in group:
            if isinstance(turn, InstructionTurn):
                with naming_record(_history_record(turn)):
                    size += self.meter.instruction(turn.message)
            else:
                size += self.meter.text(_assistant_text(turn))
        return size

    def _bound_results(
        self, entries: list[tuple[list[tuple[dict[str, Any], ActionResponse]], list[Any]]]
    ) -> list[tuple[_Entry, list[ActionResponse]]]:
        items = [(i, r, s) for i, (rendered, _) in enumerate(entries) for r, s in rendered]
        start = 0
        sizes: list[int] = []
        if self.budgets.tool_results is not None:
            sizes = [self.meter.text(result_entry(r)) for _, r, _ in items]
            start = keep_newest(sizes, self.budgets.tool_results)
        left = tuple(
            LeftOut(str(s.id), "truncated", sizes[k]) for k, (_, _, s) in enumerate(items[:start])
        )
        gone = {id(s) for _, _, s in items[:start]}
        out: list[tuple[_Entry, list[ActionResponse]]] = []
        for i, (rendered, _all) in enumerate(entries):
            entry = _Entry(r for r, s in rendered if id(s) not in gone)
            if start and i == items[0][0]:
                entry.marker = marker_lines("tool_results", left)
            out.append((entry, [s for r, s in rendered if id(s) not in gone]))
        self.results_left = left
        self.results_kept = tuple(
            str(s.id) for _, sources in entries for s in sources if id(s) not in gone
        )
        return out


def _groups(projection: Projection) -> list[list[Any]]:
    """The projection's turns as whole turns: an instruction turn with the assistant run that
    answers it; an assistant run before any instruction on its own."""
    groups: list[list[Any]] = []
    for turn in projection.turns:
        if isinstance(turn, InstructionTurn) or not groups:
            groups.append([turn])
        else:
            assert isinstance(turn, AssistantTurn)
            groups[-1].append(turn)
    return groups


def _dedup(
    message: Instruction, results: Sequence[dict[str, Any]], sources: Sequence[ActionResponse]
) -> tuple[list[tuple[dict[str, Any], ActionResponse]], list[ActionResponse]]:
    """The results an entry renders (skipping one equal to an earlier one in the entry or to an
    item of the instruction's durable prompt context), and all its source records."""
    context = list(message.content.prompt_context)
    rendered: list[tuple[dict[str, Any], ActionResponse]] = []
    for result, source in zip(results, sources, strict=True):
        if result in context or any(result == r for r, _ in rendered):
            continue
        rendered.append((result, source))
    return rendered, list(sources)


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
