"""Tier 1 of an input ceiling: clearing old tool results before any whole turn is dropped.

Contract (``ToolResultClearing(keep, exclude_tools, clear_at_least)``, ``InputCeiling``'s
``clear_tool_results``):

- ``keep`` >= 0 results of earlier rounds, the newest, are never cleared; a result of a tool
  named in ``exclude_tools`` is never cleared; a clearing step clears at least
  ``clear_at_least`` tokens while results are left to clear (``TypeError``/``ValueError``
  naming the value at construction; ``InputCeiling`` refuses ``clear_at_least`` above its
  ceiling). The current round's results are never candidates.
- A cleared result keeps its place in its instruction's tool_results entry; its ``output``
  is ``placeholder_text``: a fixed text naming the tool, the result's id and its size in
  tokens, telling the model it may call the tool again. The entry carries one marker line
  counting its own cleared results (``reason=cleared``), so a step rewrites only the entries
  it clears more results of.
- Each cleared result is a ``LeftOut(id, "cleared", tokens)`` entry of the tool_results
  section (``tokens``: the whole result as it would have been sent).
- The candidates are every rendered result of the history's instruction entries, in view
  order; ``clearable`` says which of them the options let a step clear; the stepper
  (``_ceiling.Stepper``) clears the oldest first.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from lionagi_turns.core.history import InstructionTurn, Turn
from lionagi_turns.core.render import Result
from lionagi_turns.profiles.amendment1._contracts import LeftOut
from lionagi_turns.profiles.amendment1._entries import Entry, Pair, rendered_pairs
from lionagi_turns.profiles.amendment1._sections import marker_lines

__all__ = (
    "Candidate",
    "ToolResultClearing",
    "UnknownToolWarning",
    "clear_outputs",
    "clearable",
    "cleared_entry",
    "cleared_left",
    "clearing_candidates",
    "clearing_option",
    "placeholder_text",
    "turn_pairs",
    "warn_unknown_tools",
)


@dataclass(frozen=True, slots=True)
class ToolResultClearing:
    """How an input ceiling clears old tool results before it drops whole turns (module
    contract)."""

    keep: int = 3
    exclude_tools: tuple[str, ...] = ()
    clear_at_least: int = 0

    def __post_init__(self) -> None:
        for name in ("keep", "clear_at_least"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"ToolResultClearing.{name} must be an int, got {value!r}")
            if value < 0:
                raise ValueError(f"ToolResultClearing.{name} must be >= 0, got {value}")
        tools = self.exclude_tools
        if isinstance(tools, str) or not isinstance(tools, tuple | list | frozenset | set):
            raise TypeError(
                "ToolResultClearing.exclude_tools must be a tuple of tool names, got "
                f"{tools!r}; pass exclude_tools=('name',)"
            )
        for tool in tools:
            if not isinstance(tool, str) or not tool:
                raise TypeError(
                    "ToolResultClearing.exclude_tools holds tool names (non-empty str), got "
                    f"{tool!r}"
                )
        object.__setattr__(self, "exclude_tools", tuple(tools))


def clearing_option(value: object) -> ToolResultClearing | None:
    """``InputCeiling.clear_tool_results`` as an option: True is the defaults, False and None
    are off, a ``ToolResultClearing`` is itself; anything else is a ``TypeError``."""
    if value is None or value is False:
        return None
    if value is True:
        return ToolResultClearing()
    if isinstance(value, ToolResultClearing):
        return value
    raise TypeError(
        "InputCeiling.clear_tool_results must be True, False, None or a ToolResultClearing, "
        f"got {value!r}"
    )


def placeholder_text(function: object, result_id: str, tokens: int) -> str:
    """The fixed text a cleared result's ``output`` becomes."""
    return (
        f"[LIONAGI_TOOL_RESULT_CLEARED tool={function} id={result_id} tokens={tokens}] "
        f"Cleared to keep the request under its ceiling; call {function} again if you need it."
    )


def _placeholder(result: Result, result_id: str, tokens: int) -> Result:
    function = result.get("function")
    return {"function": function, "output": placeholder_text(function, result_id, tokens)}


@dataclass(frozen=True, slots=True)
class Candidate:
    """A historical result that may be cleared: its whole turn (``group``), the turn in it
    (``turn``), its id, its tool and the result."""

    group: int
    turn: int
    id: str
    function: str
    result: Result


def turn_pairs(groups: Sequence[Sequence[Turn]]) -> list[tuple[tuple[Pair, ...], ...]]:
    """Each turn's rendered results with their sources (empty for an assistant run)."""
    return [tuple(rendered_pairs(t.message, t.results, t.sources)
                  if isinstance(t, InstructionTurn) and t.results else () for t in group)
            for group in groups]


def clearing_candidates(
    pairs: Sequence[Sequence[Sequence[Pair]]], first: int = 0
) -> list[Candidate]:
    """Every rendered result of the groups' instruction entries (``turn_pairs``), in view
    order; ``first``: the index of the first of these groups."""
    return [Candidate(g, t, str(s.id), str(r.get("function")), r)
            for g, group in enumerate(pairs, first) for t, entry in enumerate(group)
            for r, s in entry]


def clearable(candidates: Sequence[Candidate], position: int, option: ToolResultClearing) -> bool:
    """Whether the options let a step clear ``candidates[position]`` (all candidates, view
    order): it is not among the newest ``keep``, nor a result of an excluded tool."""
    return (position < len(candidates) - option.keep
            and candidates[position].function not in option.exclude_tools)


def cleared_entry(pairs: Sequence[Pair], cleared: Mapping[str, int]) -> Entry:
    """An entry rendering ``pairs`` with the ``cleared`` ones (id -> tokens) as placeholders,
    and its marker counting them (none when nothing in it is cleared)."""
    results: list[Result] = []
    left: list[LeftOut] = []
    for result, source in pairs:
        key = str(source.id)
        tokens = cleared.get(key)
        if tokens is None:
            results.append(result)
        else:
            results.append(_placeholder(result, key, tokens))
            left.append(LeftOut(key, "cleared", tokens))
    return Entry(results, marker_lines("tool_results", left))


def clear_outputs(out: Sequence[Turn], cleared: Mapping[str, int]) -> tuple[Turn, ...]:
    """The output turns with each cleared result replaced by its placeholder (a new turn
    object for each entry that changes; every other turn is the same object)."""
    if not cleared:
        return tuple(out)
    turns: list[Turn] = []
    for turn in out:
        if isinstance(turn, InstructionTurn) and any(str(s.id) in cleared for s in turn.sources):
            pairs = tuple(zip(turn.results, turn.sources, strict=True))
            entry = cleared_entry(pairs, cleared)
            old = getattr(turn.results, "marker", "")
            if old:
                entry = Entry(entry, "\n".join(p for p in (old, entry.marker) if p))
            turn = InstructionTurn(turn.message, turn.position, entry, turn.sources, turn.context)
        turns.append(turn)
    return tuple(turns)


def cleared_left(cleared: Mapping[str, int]) -> tuple[LeftOut, ...]:
    """The tool_results section's ``cleared`` entries, in ``cleared``'s (view) order."""
    return tuple(LeftOut(key, "cleared", tokens) for key, tokens in cleared.items())


class UnknownToolWarning(UserWarning):
    """``exclude_tools`` names a tool the branch has not registered (a typo excludes
    nothing)."""


def warn_unknown_tools(option: ToolResultClearing | None, registered: Iterable[str]) -> None:
    """One warning naming the excluded tools that are not among ``registered`` and the
    registered ones; nothing is changed, the call proceeds."""
    if option is None or not option.exclude_tools:
        return
    names = sorted(registered)
    unknown = [t for t in option.exclude_tools if t not in names]
    if unknown:
        warnings.warn(
            f"ToolResultClearing.exclude_tools names {', '.join(map(repr, unknown))}, which "
            f"the branch has not registered (registered: {', '.join(names) or 'none'}); their "
            "results would be cleared like any other; fix the name",
            UnknownToolWarning,
            stacklevel=3,
        )
