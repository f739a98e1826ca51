"""``compile --profile amendment1`` (and ``amendment1+prompt-cache``): the command's body.

``--budget``, ``--ceiling``, ``--low-water`` and ``--clear-results`` need one of those two
profiles (exit 2). The layout shown is the one the branch recorded for the turn
(``_composed.recorded_layout``): Amendment 1 alone for a branch that recorded none, Amendment
1 with the prompt-cache layout when it did or when ``--profile amendment1+prompt-cache`` asks
for it.
"""

from __future__ import annotations

from lionagi_turns.cli._composed import COMPOSED, composed_turn, recorded_layout
from lionagi_turns.cli._exits import compiled_or_exit
from lionagi_turns.cli._html import print_html
from lionagi_turns.cli._inputs import EXIT_BAD_INPUT, EXIT_REJECTED, Fail, turn_inputs
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._load import one_line
from lionagi_turns.cli._options import PageFormat, Profile
from lionagi_turns.cli._progress import progress
from lionagi_turns.cli._prompt_cache import render_prompt_cache
from lionagi_turns.cli._sections import Measured
from lionagi_turns.cli._turn import turn_spec
from lionagi_turns.cli._views import console, print_json
from lionagi_turns.cli._window import Paging, check_paging

__all__ = ("amended_command",)

_NEEDS_PROFILE = ("bad option: --budget, --ceiling, --low-water and --clear-results need "
                  "--profile amendment1")


def amended_command(
    path: str,
    instruction: str | None,
    context: list[str] | None,
    format: PageFormat,
    max_bytes: int,
    profile: Profile,
    budget: list[str],
    at: int | None,
    last: Paging,
    ceiling_options: tuple[int | None, int | None, int | None] = (None, None, None),
) -> None:
    from lionagi_turns.cli._amendment1 import (
        amended_turn,
        parse_budgets,
        parse_ceiling,
        refused_summary,
        render_amended,
        render_bounds,
    )

    if profile.value not in ("amendment1", COMPOSED):
        raise Fail(EXIT_BAD_INPUT, _NEEDS_PROFILE)
    try:
        budgets = parse_budgets(budget)
        ceiling = parse_ceiling(*ceiling_options, budgets=budgets)
    except (ValueError, TypeError) as exc:
        raise Fail(EXIT_BAD_INPUT, f"bad option: {exc}") from None
    from lionagi_turns.amendment1 import SectionBudgetRefused

    def build() -> tuple[JsonObject, Measured]:
        try:
            if spec_profile == COMPOSED:
                return composed_turn(loaded, spec, budgets, ceiling)
            return amended_turn(loaded, spec, budgets, ceiling)
        except SectionBudgetRefused as exc:
            raise Fail(
                EXIT_REJECTED, f"{path}: refused: {one_line(str(exc))} [{refused_summary(exc)}]"
            ) from None

    with progress() as step:
        loaded, blocks = turn_inputs(path, instruction, context, max_bytes)
        # the layout a turn was sent in is the branch's record (amendment1 alone: none)
        composed = profile.value == "amendment1+prompt-cache" or recorded_layout(loaded, at)
        spec_profile = COMPOSED if composed else profile.value
        spec = turn_spec(loaded, instruction, blocks, at, spec_profile)
        step("compiling the request")
        report, measured = compiled_or_exit(loaded, build)
        check_paging(last, len(report["messages"]))
    if format is PageFormat.json:
        print_json(report)
    elif format is PageFormat.html:
        print_html(report, measured, last)
    elif composed:
        render_prompt_cache(console(), loaded, report, measured, last,
                            extra=lambda shown: render_bounds(shown, report))
    else:
        render_amended(console(), loaded, report, measured, last)
