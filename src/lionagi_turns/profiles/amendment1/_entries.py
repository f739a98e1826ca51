"""A kept instruction's tool_results entry (ADR-0007 D2 §6 step 1, Amendment 1): the results
it renders and the sources behind them, cut by the tool_results budget.

- ``rendered_pairs``: an entry renders its results in order, skipping one equal to an earlier
  one in the entry or to an item of the instruction's durable prompt context, each with its
  source;
- a budget decision is ``(cut, marker)``: the entry drops its ``cut`` oldest rendered results
  and carries ``marker`` (``UNCUT``: nothing dropped, no marker); ``cut_entry`` applies it;
- ``results_section`` renders an entry: its marker line, then its block, a pure function of
  the entry (so of the output turn object that carries it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from lionagi.protocols.messages import ActionResponse, Instruction

from lionagi_turns.core.history import AssistantTurn, InstructionTurn, Turn
from lionagi_turns.core.render import Result
from lionagi_turns.profiles.amendment1._contracts import LeftOut
from lionagi_turns.profiles.amendment1._meter import Meter
from lionagi_turns.profiles.amendment1._sections import (
    marker_lines,
    result_entry,
    tool_results_block,
)
from lionagi_turns.profiles.amendment1._turns import keep_newest

__all__ = (
    "UNCUT",
    "Derived",
    "Entry",
    "Pair",
    "Weighed",
    "budget_cuts",
    "cut_entry",
    "cut_source_ids",
    "derive",
    "output_turn",
    "rendered_pairs",
    "results_section",
    "source_ids",
    "uncut",
    "without_dropped",
)

Pair = tuple[Result, ActionResponse]
Derived = tuple[tuple[Pair, ...], tuple[ActionResponse, ...]]  # rendered pairs, all sources
Weighed = tuple[Derived, tuple[int, ...]]  # and each rendered result's size
UNCUT = (0, "")  # an entry's budget decision when nothing was dropped: no cut, no marker


class Entry(tuple[Result, ...]):
    """A tool_results entry (the results it renders, a tuple: an output turn is shared by the
    compiles that reuse it) that may carry the section's marker, set at construction; it is
    truthy while it carries one, so the pipeline renders the marker of an entry that lost
    every result."""

    marker: str = ""

    def __new__(cls, results: Iterable[Result] = (), marker: str = "") -> Entry:
        entry = super().__new__(cls, results)
        if marker:
            entry.marker = marker
        return entry

    def __bool__(self) -> bool:
        return bool(self.marker) or len(self) > 0


def results_section(results: Sequence[Result], context: Sequence[object]) -> str:
    """The profile's ``results_section``: an entry's marker line, then its block; a pure
    function of the entry (so of the output turn object that carries it)."""
    marker = getattr(results, "marker", "")
    return "\n".join(p for p in (marker, tool_results_block(list(results))) if p)


def cut_source_ids(
    derived: Sequence[Derived] | None,
    cuts: Sequence[tuple[int, str]] | None,
    pending: tuple[tuple[Pair, ...], Sequence[ActionResponse]],
    pending_cut: tuple[int, str],
) -> tuple[str, ...]:
    """The ids of the results each entry keeps after its cut, the pending entry last (a
    budget cut some result: every entry was derived and weighed)."""
    assert cuts is not None and derived is not None
    pending = (pending[0], tuple(pending[1]))
    return tuple(
        str(s.id)
        for (pairs, entry_sources), (cut, _) in (
            *zip(derived, cuts, strict=True),
            (pending, pending_cut),
        )
        for s in without_dropped(entry_sources, pairs[:cut])
    )


def derive(turn: Turn) -> Derived:
    """What a kept turn's entry renders (pairs of result and source) and all its sources."""
    if isinstance(turn, InstructionTurn):
        return rendered_pairs(turn.message, turn.results, turn.sources), tuple(turn.sources)
    return (), ()


def source_ids(turn: Turn) -> tuple[str, ...]:
    if isinstance(turn, InstructionTurn):
        return tuple(str(s.id) for s in turn.sources)
    return ()


def output_turn(turn: Turn, derived: Derived, cut: tuple[int, str]) -> Turn:
    """The output turn of a kept turn: an assistant run as it is; an instruction with its
    entry."""
    if isinstance(turn, AssistantTurn):
        return turn
    entry, entry_sources = cut_entry(derived[0], cut)
    return InstructionTurn(turn.message, turn.position, entry, entry_sources, turn.context)


def uncut(turn: Turn) -> Turn:
    return output_turn(turn, derive(turn), UNCUT)


def cut_entry(
    pairs: tuple[Pair, ...], cut: tuple[int, str]
) -> tuple[Entry, tuple[ActionResponse, ...]]:
    """The entry that drops its ``cut[0]`` oldest rendered results and carries ``cut[1]``,
    and its sources."""
    count, marker = cut
    kept = pairs[count:]
    return Entry((r for r, _ in kept), marker), tuple(s for _, s in kept)


def without_dropped(
    entry_sources: Sequence[ActionResponse], dropped: tuple[Pair, ...]
) -> list[ActionResponse]:
    gone = {id(s) for _, s in dropped}
    return [s for s in entry_sources if id(s) not in gone]


def rendered_pairs(
    message: Instruction, results: Sequence[Result], sources: Sequence[ActionResponse]
) -> tuple[Pair, ...]:
    """The results an entry renders, with their sources (skipping one equal to an earlier one
    in the entry or to an item of the instruction's durable prompt context)."""
    if not results:
        return ()
    context = list(message.content.prompt_context)
    rendered: list[Pair] = []
    for result, source in zip(results, sources, strict=True):
        if result in context or any(result == r for r, _ in rendered):
            continue
        rendered.append((result, source))
    return tuple(rendered)


def budget_cuts(
    weighed: list[Weighed] | None, pending: tuple[Pair, ...], budget: int | None, meter: Meter
) -> tuple[list[tuple[int, str]] | None, tuple[int, str], int, tuple[LeftOut, ...]]:
    """Each kept turn's (results cut, marker) — None when every one is ``UNCUT`` — the
    pending entry's, how many of the oldest rendered results ``budget`` drops, and their
    ``truncated`` entries (``BoundDecision.results_left``)."""
    if budget is None or weighed is None:
        return None, UNCUT, 0, ()
    entries = [*(pairs for (pairs, _), _ in weighed), pending]
    items = [source for pairs in entries for _, source in pairs]
    sizes = [size for _, sized in weighed for size in sized]
    sizes += (meter.text(result_entry(r)) for r, _ in pending)
    start = keep_newest(sizes, budget)
    if not start:
        return None, UNCUT, 0, ()
    results_left = tuple(
        LeftOut(str(s.id), "truncated", sizes[k]) for k, s in enumerate(items[:start])
    )
    marker = marker_lines("tool_results", results_left)
    cuts: list[tuple[int, str]] = []
    offset = 0
    marked = False
    for pairs in entries:
        cut = min(len(pairs), max(0, start - offset))
        mark = ""
        if not marked and pairs:  # the entry of the oldest result
            mark, marked = marker, True
        cuts.append((cut, mark))
        offset += len(pairs)
    return cuts[:-1], cuts[-1], start, results_left
