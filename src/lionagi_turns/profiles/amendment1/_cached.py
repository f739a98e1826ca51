"""Amendment 1 composed with the prompt-cache layout (ADR-0127): one compile that has both.

``compile_cached_amended(branch, request, tool_schemas, ...)`` runs the prompt-cache profile's
compile (``prompt_cache.layout.compile_cached``) with Amendment 1's options layered on it:

- from Amendment 1: context admission under the context budget (skip markers), the history
  and tool_results bound (``_bound.Bound``, with the ceiling's stepped rule when a ceiling is
  given), the tool_results section rendering, the history marker before the first message,
  the five ``SectionBound`` records and the system / instruction refusals;
- from ADR-0127: the system text and the tool set as the stable segment (never folded), the
  first call's admitted blocks as the conversation segment, a later call's blocks folded into
  its own turn (with Amendment 1's envelope and skip markers), historical instructions sent
  as recorded, the durable ``SentRecord`` and the counted segment changes and history
  rewrites (``prompt_cache_account``).

The record's prefix digest covers the messages as sent, marker included, so between two drop
steps of a ceiling the prefix is the recorded one and a drop step is a counted rewrite.
Returns the amended ``CompiledChatRequest`` and the Anthropic adapter's ``SegmentedBlocks``.
Raises what either profile raises, before producing any output; nothing stored is written.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from lionagi_turns.core.contracts import CompiledMessage, ContextBlock
from lionagi_turns.core.contracts import TurnRequest as SeedRequest
from lionagi_turns.core.history import InstructionTurn
from lionagi_turns.core.pipeline import Trace
from lionagi_turns.core.profile import CompileProfile, Memo
from lionagi_turns.core.render import ShownSections
from lionagi_turns.profiles.amendment1._bound import results_section
from lionagi_turns.profiles.amendment1._ceiling import InputCeiling, Layout
from lionagi_turns.profiles.amendment1._compile import compile_amended_traced
from lionagi_turns.profiles.amendment1._contracts import (
    CompiledChatRequest,
    LeftOut,
    SectionBudgets,
    TurnRequest,
)
from lionagi_turns.profiles.amendment1._meter import Measure, Meter
from lionagi_turns.profiles.amendment1._sections import context_section
from lionagi_turns.profiles.prompt_cache.blocks import SegmentedBlocks
from lionagi_turns.profiles.prompt_cache.layout import (
    CachedCompile,
    compile_cached,
    read_record,
    tool_section,
)

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("SegmentedBlocks", "compile_cached_amended", "compile_for_prompt_cache")

PROFILE_NAME = "adr-0127+adr-0007-amendment-1"


@dataclass(slots=True)
class _Layered:
    """``prompt_cache.layout.Compose`` for one compile: Amendment 1's profile options over the
    prompt-cache profile's."""

    amended: CompileProfile
    mark: Callable[[Trace], tuple[CompiledMessage, ...]]
    context_left: tuple[LeftOut, ...]
    shown: ShownSections | None = None

    def profile(self, base: CompileProfile, later: tuple[ContextBlock, ...]) -> CompileProfile:
        left, shown = self.context_left, self.shown
        if shown is not None:
            base = replace(base, current_options=lambda branch, request: shown)
        return replace(
            base,
            name=PROFILE_NAME,
            bound=self.amended.bound,
            results_section=results_section,
            fold_context=bool(later) or bool(left),
            envelope=lambda blocks: context_section(later, left),  # type: ignore[arg-type]
            reuse=(PROFILE_NAME, base.reuse),
        )

    def messages(self, trace: Trace) -> tuple[CompiledMessage, ...]:
        return self.mark(trace)


def compile_cached_amended(
    branch: Branch,
    request: TurnRequest,
    tool_schemas: Sequence[Mapping[str, object]] | None,
    *,
    budgets: SectionBudgets | None = None,
    measure: Measure | None = None,
    react_context: Sequence[object] | None = None,
    ceiling: InputCeiling | None = None,
    shown: tuple[ShownSections, ShownSections] | None = None,
    audit: bool = False,
) -> tuple[CompiledChatRequest, SegmentedBlocks, CachedCompile]:
    """The composed compile (module contract). ``tool_schemas`` is the conversation's tool
    set (``branch.acts.schema_list``; None: as last recorded). ``shown``: the response
    sections the current instruction is sent with and those the ceiling measures it with (a
    recorded call rebuilt: tools by reference, then in full), instead of the request's call
    options; ``audit`` as ``compile_cached``'s."""
    held: list[CachedCompile] = []

    def run(
        seed: SeedRequest,
        profile: CompileProfile,
        mark: Callable[[Trace], tuple[CompiledMessage, ...]],
        left: tuple[LeftOut, ...],
        memo: Memo,
    ) -> tuple[Trace, tuple[CompiledMessage, ...]]:
        # the seed holds the blocks Amendment 1 admitted; the skipped ones are named by skip
        # markers in the turn's fold
        layered = _Layered(profile, mark, left, None if shown is None else shown[0])
        result = compile_cached(
            branch, seed, tool_schemas, react_context=react_context, audit=audit,
            compose=layered, memo=memo,
        )
        held.append(result)
        return result.trace, result.compiled.messages

    measured = None
    if ceiling is not None:
        meter = Meter(measure)
        section = tool_section(list(tool_schemas)) if tool_schemas is not None else ""

        def sent(turn: InstructionTurn) -> int | None:
            record = read_record(turn.message)
            return None if record is None else meter.content(record.text)

        measured = Layout(extra=meter.text(section) if section else 0, sent=sent,
                          shown=None if shown is None else shown[1])
    compiled, _ = compile_amended_traced(
        branch, request, budgets=budgets, measure=measure, react_context=react_context,
        ceiling=ceiling, runner=run, layout=measured,
    )
    result = held[0]
    layout = result.layout
    blocks = SegmentedBlocks(list(layout.stable), list(layout.conversation), layout.previous_end)
    return compiled, blocks, result



def compile_for_prompt_cache(
    branch: Branch,
    request: TurnRequest,
    *,
    tool_schemas: Sequence[Mapping[str, object]] | None = None,
    budgets: SectionBudgets | None = None,
    measure: Measure | None = None,
    react_context: Sequence[object] | None = None,
    ceiling: InputCeiling | None = None,
) -> tuple[CompiledChatRequest, SegmentedBlocks]:
    """Amendment 1 composed with the ADR-0127 layout (module contract): the amended compiled
    request (``bounds`` included; its instruction carries the durable prompt-cache record and,
    under a ceiling, the first kept turn) and the ordered system blocks (the stable segment,
    then the conversation segment) that lionagi's Anthropic adapter takes as
    ``system_blocks``. ``tool_schemas`` None reads the Branch's tool set
    (``branch.acts.schema_list``). Same errors as ``compile_chat_request``."""
    schemas = list(branch.acts.schema_list) if tool_schemas is None else list(tool_schemas)
    compiled, blocks, _ = compile_cached_amended(
        branch, request, schemas, budgets=budgets, measure=measure,
        react_context=react_context, ceiling=ceiling,
    )
    return compiled, blocks
