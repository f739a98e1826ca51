"""The profile's ``bound`` (ADR-0007 D2 §6 step 1, and each kept instruction's tool_results
entry), remembered per branch so that a next turn redoes only what is new.

What one call decides (input: the pipeline's projection of the view; output: the bounded
projection the pipeline renders):

- the whole view is valid first (its first defect is raised, before any bound runs);
- view exclusions become history ``evicted`` / ``compacted`` entries (``_views``);
- with a history budget, whole turns are measured (the instruction rendered durably with its
  own prompt context; its assistant run as it renders) and the newest that fit are kept; every
  record of a dropped turn is a ``truncated`` entry;
- each kept instruction's entry, and the current instruction's (the pending results), renders
  its results, skipping one equal to an earlier one in the entry or to an item of the
  instruction's durable prompt context; with a tool_results budget the newest results that
  fit are kept (oldest dropped first) and the entry that lost the oldest carries the marker;
- the records: ``exclusions``, ``truncated``, ``history_kept``, ``results_kept``,
  ``results_left`` (references by id string).

Memory (``_memory``, one value per live branch; only with the fast path on and no ReAct
items): ``commit()``, called after a successful compile, keeps what this call made of each kept
turn — its entry's rendered results, its id strings, its output turn object. The next call
takes a turn's part from there only when the turn is the very object the remembered call was
given (the pipeline hands back the same turn objects only while every record and content
behind them is unchanged, and never mutates a turn it handed out — ``_fast/resume``), and its
output turn object only when the budget decisions for it (results cut, marker) are also the
same. Everything taken is what this call would derive again, so the output and the records
are identical with the memory on or off; an unchanged turn keeps its output turn object, which
lets the pipeline reuse its rendering.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from lionagi.protocols.messages import ActionResponse, Instruction

from .._compiler import _assistant_text, _history_record
from .._contracts import TurnRequest as SeedRequest
from .._fast import switch as _switch
from .._history import AssistantTurn, InstructionTurn, Projection, Turn, select_ids
from .._values import naming_record
from . import _memory
from ._contracts import LeftOut, SectionBudgets
from ._meter import Meter
from ._sections import marker_lines, result_entry, tool_results_block
from ._turns import keep_newest, split_turns
from ._views import view_exclusions

__all__ = ("Bound", "results_section")

_Pair = tuple[dict[str, Any], ActionResponse]
_UNCUT = (0, "")  # an entry's budget decision when nothing was dropped: no cut, no marker


class _Entry(list[dict[str, Any]]):
    """A tool_results entry (the results it renders) that may carry the section's marker; it
    is truthy while it carries one, so the pipeline renders the marker of an entry that lost
    every result."""

    marker: str = ""

    def __bool__(self) -> bool:
        return bool(self.marker) or len(self) > 0


def results_section(results: Sequence[dict[str, Any]], context: Sequence[Any]) -> str:
    """The profile's ``results_section``: an entry's marker line, then its block; a pure
    function of the entry (so of the output turn object that carries it)."""
    marker = getattr(results, "marker", "")
    return "\n".join(p for p in (marker, tool_results_block(list(results))) if p)


@dataclass(frozen=True, slots=True)
class _Memo:
    """One call's decisions, for the next call on the same branch. ``turns`` is the projection
    the call was given; the other lists are aligned with ``turns[first:]`` (the kept turns)."""

    turns: list[Turn]
    first: int
    out: list[Turn]
    ids: list[tuple[str, ...]]
    rendered: list[tuple[_Pair, ...]]  # () for an assistant run
    sources: list[tuple[ActionResponse, ...]]
    source_ids: list[tuple[str, ...]]
    cuts: list[tuple[int, str]]
    uncut: bool  # every cut is _UNCUT


@dataclass(slots=True)
class Bound:
    """The profile's ``bound`` for one compile, and what it decided (module docstring).
    ``react``: the compile runs a ReAct step, which sets ``context`` on the output turns, so
    nothing is taken from or given to the memory."""

    branch: Any
    budgets: SectionBudgets
    meter: Meter
    react: bool = False
    exclusions: tuple[LeftOut, ...] = ()
    truncated: tuple[LeftOut, ...] = ()
    history_kept: tuple[str, ...] = ()
    results_kept: tuple[str, ...] = ()
    results_left: tuple[LeftOut, ...] = ()
    _memo: _Memo | None = field(default=None, repr=False)

    def commit(self) -> None:
        """Remember this call's decisions for the branch's next compile (once the pipeline
        succeeded: the walk it was given is the one the next compile resumes from, whether or
        not a section then refuses); a compile that may not remember forgets what was."""
        if self._memo is not None:
            _memory.remember(self.branch, self._memo)
        elif self.react:
            _memory.forget(self.branch)

    def __call__(self, projected: Projection, request: SeedRequest) -> Projection:
        projected.raise_first()  # the whole view is valid before any bound runs
        branch = self.branch
        self.exclusions = view_exclusions(branch, request.progression).left_out
        turns = projected.turns
        first = self._history_start(projected, request)
        remember = not self.react and _switch.fast_path_enabled()
        memo: _Memo | None = _memory.recall(branch) if remember else None

        # [lo, hi): the kept turns the memory holds unchanged (memo-relative [a, b)).
        lo = hi = a = b = first
        if memo is not None:
            lo = max(first, memo.first)
            hi = max(lo, _same_prefix(turns, memo.turns))
            a, b = lo - memo.first, hi - memo.first
        ids: list[tuple[str, ...]] = []
        rendered: list[tuple[_Pair, ...]] = []
        sources: list[tuple[ActionResponse, ...]] = []
        source_ids: list[tuple[str, ...]] = []
        for segment in (turns[first:lo], None, turns[hi:]):
            if segment is None:
                if memo is not None and a < b:
                    ids += memo.ids[a:b]
                    rendered += memo.rendered[a:b]
                    sources += memo.sources[a:b]
                    source_ids += memo.source_ids[a:b]
                continue
            for turn in segment:
                ids.append(_ids(turn))
                if isinstance(turn, InstructionTurn):
                    rendered.append(_dedup(turn.message, turn.results, turn.sources))
                    sources.append(tuple(turn.sources))
                    source_ids.append(tuple(str(s.id) for s in turn.sources))
                else:
                    rendered.append(())
                    sources.append(())
                    source_ids.append(())
        pending = _dedup(request.instruction, projected.pending, projected.pending_sources)

        cuts, pending_cut, start = self._results_cut(rendered, pending)
        kept = turns[first:]
        if memo is not None and a < b and start == 0 and memo.uncut:
            # every reused turn's decision is _UNCUT now and was then: its output turn stands
            head, tail = lo - first, hi - first
            out = [_output(t, r, _UNCUT) for t, r in zip(kept[:head], rendered, strict=False)]
            out += memo.out[a:b]
            out += [
                _output(t, r, _UNCUT)
                for t, r in zip(kept[tail:], rendered[tail:], strict=True)
            ]
        else:
            out = [
                memo.out[j - memo.first]
                if memo is not None and lo <= j < hi and memo.cuts[j - memo.first] == cut
                else _output(turn, pairs, cut)
                for j, turn, pairs, cut in zip(
                    range(first, len(turns)), kept, rendered, cuts, strict=True
                )
            ]
        pending_entry, pending_sources = _entry(pending, pending_cut)

        self.history_kept = tuple(chain.from_iterable(ids))
        if start == 0:
            kept_sources = tuple(chain.from_iterable(source_ids))
            self.results_kept = (*kept_sources, *(str(s.id) for s in projected.pending_sources))
        else:
            self.results_kept = tuple(
                str(s.id)
                for entry_sources, pairs, (cut, _) in (
                    *zip(sources, rendered, cuts, strict=True),
                    (tuple(projected.pending_sources), pending, pending_cut),
                )
                for s in _without(entry_sources, pairs[:cut])
            )
        self._memo = (
            _Memo(
                turns=list(turns),
                first=first,
                out=list(out),
                ids=ids,
                rendered=rendered,
                sources=sources,
                source_ids=source_ids,
                cuts=cuts,
                uncut=start == 0,
            )
            if remember
            else None
        )
        return Projection(out, pending_entry, list(projected.defects), pending_sources)

    # --------------------------------------------------------------------------- history

    def _history_start(self, projected: Projection, request: SeedRequest) -> int:
        """Index in ``projected.turns`` of the first kept turn; sets ``truncated``."""
        self.truncated = ()
        if self.budgets.history is None:
            return 0
        groups = _groups(projected)
        start = keep_newest([self._size(g) for g in groups], self.budgets.history)
        if not start:
            return 0
        branch = self.branch  # the records of the dropped turns (the walk omits requests)
        split = split_turns(select_ids(branch, request.progression), branch.msgs.messages)
        if len(groups) != len(split.turns):  # pragma: no cover - one partition, two walks
            raise AssertionError("history turns disagree with the projection")
        self.truncated = tuple(
            LeftOut(str(r.id), "truncated", self.meter.record(r))
            for t in split.turns[:start]
            for r in t.records
        )
        return sum(len(g) for g in groups[:start])

    def _size(self, group: list[Turn]) -> int:
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

    # ---------------------------------------------------------------------- tool_results

    def _results_cut(
        self, rendered: list[tuple[_Pair, ...]], pending: tuple[_Pair, ...]
    ) -> tuple[list[tuple[int, str]], tuple[int, str], int]:
        """Each kept turn's and the pending entry's (results cut, marker), and how many of the
        oldest rendered results the tool_results budget drops; sets ``results_left``."""
        budget = self.budgets.tool_results
        if budget is None:
            self.results_left = ()
            return [_UNCUT] * len(rendered), _UNCUT, 0
        entries = [*rendered, pending]
        items = [source for pairs in entries for _, source in pairs]
        sizes = [self.meter.text(result_entry(r)) for pairs in entries for r, _ in pairs]
        start = keep_newest(sizes, budget)
        self.results_left = tuple(
            LeftOut(str(s.id), "truncated", sizes[k]) for k, s in enumerate(items[:start])
        )
        marker = marker_lines("tool_results", self.results_left) if start else ""
        cuts: list[tuple[int, str]] = []
        offset = 0
        marked = False
        for pairs in entries:
            cut = min(len(pairs), max(0, start - offset))
            mark = ""
            if start and not marked and pairs:  # the entry of the oldest result
                mark, marked = marker, True
            cuts.append((cut, mark))
            offset += len(pairs)
        return cuts[:-1], cuts[-1], start


# ------------------------------------------------------------------------------- per turn


def _output(turn: Turn, pairs: tuple[_Pair, ...], cut: tuple[int, str]) -> Turn:
    """The output turn of a kept turn: an assistant run as it is; an instruction with its
    entry."""
    if isinstance(turn, AssistantTurn):
        return turn
    entry, entry_sources = _entry(pairs, cut)
    return InstructionTurn(turn.message, turn.position, entry, entry_sources, turn.context)


def _entry(pairs: tuple[_Pair, ...], cut: tuple[int, str]) -> tuple[_Entry, list[ActionResponse]]:
    count, marker = cut
    entry = _Entry(r for r, _ in pairs[count:])
    if marker:
        entry.marker = marker
    return entry, [s for _, s in pairs[count:]]


def _without(
    entry_sources: Sequence[ActionResponse], dropped: tuple[_Pair, ...]
) -> list[ActionResponse]:
    gone = {id(s) for _, s in dropped}
    return [s for s in entry_sources if id(s) not in gone]


def _ids(turn: Turn) -> tuple[str, ...]:
    if isinstance(turn, InstructionTurn):
        return (str(turn.message.id),)
    return tuple(str(m.id) for m in turn.messages)


def _same_prefix(turns: list[Turn], remembered: list[Turn]) -> int:
    """How many leading turns are the very objects remembered."""
    same = list(map(operator.is_, turns, remembered))
    try:
        return same.index(False)
    except ValueError:
        return len(same)


def _groups(projection: Projection) -> list[list[Turn]]:
    """The projection's turns as whole turns: an instruction turn with the assistant run that
    answers it; an assistant run before any instruction on its own."""
    groups: list[list[Turn]] = []
    for turn in projection.turns:
        if isinstance(turn, InstructionTurn) or not groups:
            groups.append([turn])
        else:
            assert isinstance(turn, AssistantTurn)
            groups[-1].append(turn)
    return groups


def _dedup(
    message: Instruction, results: Sequence[dict[str, Any]], sources: Sequence[ActionResponse]
) -> tuple[_Pair, ...]:
    """The results an entry renders, with their sources (skipping one equal to an earlier one
    in the entry or to an item of the instruction's durable prompt context)."""
    if not results:
        return ()
    context = list(message.content.prompt_context)
    rendered: list[_Pair] = []
    for result, source in zip(results, sources, strict=True):
        if result in context or any(result == r for r, _ in rendered):
            continue
        rendered.append((result, source))
    return tuple(rendered)
