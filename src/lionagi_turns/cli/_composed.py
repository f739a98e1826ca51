"""``compile --profile amendment1+prompt-cache``: Amendment 1 composed with the prompt-cache
layout, as ``install(profile="amendment1")`` sends it to an endpoint that places the cache.

- ``recorded_layout(loaded, at)``: whether the turn shown was sent in the prompt-cache layout,
  read from the branch's records: instruction K's prompt-cache record for ``--at K``, the last
  recorded instruction's for the next turn. ``compile --profile amendment1`` then shows this
  composition.
- ``composed_turn(loaded, spec, budgets, ceiling)``: the prompt-cache report (``_prompt_cache``:
  ``system`` blocks and ``messages`` with their cache marks, segments, changes, ignored
  records) plus Amendment 1's ``bounds`` and, under a ceiling, the ``ceiling`` record the
  compiled instruction carries. The stable segment's tool set is the one recorded (a saved
  branch holds no tool functions); for ``--at K`` the current instruction renders the response
  sections its record's sent text carries, so the request and the ceiling's measure are those
  of the call as sent.
"""

from __future__ import annotations

from lionagi_turns.amendment1 import CEILING_KEY, InputCeiling, SectionBudgets, bounds_rows
from lionagi_turns.cli._amendment1 import summary_field
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._load import LoadedBranch
from lionagi_turns.cli._prompt_cache import cache_report
from lionagi_turns.cli._sections import Measured
from lionagi_turns.cli._turn import TurnSpec, recorded_instructions, recorded_tools
from lionagi_turns.core.render import ShownSections
from lionagi_turns.integration._cache import cache_view
from lionagi_turns.profiles.amendment1._contracts import ContextBlock, TurnRequest
from lionagi_turns.profiles.composed import compile_cached_amended
from lionagi_turns.profiles.prompt_cache._record import SentRecord, read_record
from lionagi_turns.profiles.prompt_cache._sent import recorded_sections

__all__ = ("COMPOSED", "composed_turn", "recorded_layout")

COMPOSED = "amendment1+prompt-cache"


def _record_of(loaded: LoadedBranch, at: int | None) -> SentRecord | None:
    """The prompt-cache record of instruction ``at`` (1-based), or of the last recorded
    instruction of the view (None: the turn shown follows no recorded one)."""
    found = recorded_instructions(loaded)
    if at is not None:
        return read_record(found[at - 1][1]) if 1 <= at <= len(found) else None
    return next((r for _, m in reversed(found) if (r := read_record(m)) is not None), None)


def recorded_layout(loaded: LoadedBranch, at: int | None) -> bool:
    """Whether the branch recorded the turn shown in the prompt-cache layout (module doc)."""
    return _record_of(loaded, at) is not None


def _shown(
    sections: dict[str, object], tools: list[JsonObject] | None
) -> tuple[ShownSections, ShownSections]:
    """The sections as sent (tools by reference) and as the ceiling measures them (each
    referenced tool's recorded schema in full, as the request's call options render it)."""
    refs = sections.get("Tools")
    if not isinstance(refs, list) or tools is None:
        return ShownSections(sections), ShownSections(sections)
    named = {_tool_name(t): t for t in tools}
    full = [named.get(str(ref), ref) for ref in refs]
    return ShownSections(sections), ShownSections({**sections, "Tools": full})


def _tool_name(schema: object) -> str | None:
    if not isinstance(schema, dict):
        return None
    function = schema.get("function")
    name = function.get("name") if isinstance(function, dict) else schema.get("name")
    return name if isinstance(name, str) else None


def composed_turn(
    loaded: LoadedBranch, spec: TurnSpec, budgets: SectionBudgets,
    ceiling: InputCeiling | None = None,
) -> tuple[JsonObject, Measured]:
    """The composed report and its sections (module docstring)."""
    record = _record_of(loaded, spec.at["instruction"] if spec.at is not None else None)
    sections = recorded_sections(record.text) if spec.at is not None and record else None
    request = TurnRequest(
        instruction=spec.instruction,
        progression=spec.progression,
        context_blocks=tuple(ContextBlock(b.provider_name, b.content) for b in spec.blocks),
    )
    tools = recorded_tools(loaded, spec.at["instruction"] if spec.at is not None else None)
    compiled, _, result = compile_cached_amended(
        loaded.branch, request, tools, budgets=budgets, ceiling=ceiling,
        shown=None if sections is None else _shown(dict(sections), tools), audit=True,
    )
    report, measured = cache_report(loaded, spec, cache_view(result), result, COMPOSED)
    report["bounds"] = bounds_rows(compiled)
    if ceiling is not None:
        report["ceiling"] = dict(compiled.instruction.metadata[CEILING_KEY])
        report.update(summary_field(loaded, report["ceiling"]))
    return report, measured
