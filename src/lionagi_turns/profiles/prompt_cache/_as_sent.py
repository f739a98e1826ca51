"""The prompt-cache profile's ``history_text`` (``AsSent``): a historical instruction as it was
sent while its record verifies, its durable rendering otherwise; and the records a compile did
not use, with why (``IgnoredRecord``, ``ignored_records``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from lionagi_turns.core.history import InstructionTurn
from lionagi_turns.core.render import Content, ResultsSection, own_copy
from lionagi_turns.profiles.prompt_cache._memo import ViewRecords
from lionagi_turns.profiles.prompt_cache._results_tail import verified_with_results

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("AsSent", "IgnoredRecord", "ignored_records")


@dataclass(frozen=True, slots=True)
class IgnoredRecord:
    """A prompt-cache record the compile did not use, and why: ``position``/``id`` of its
    instruction in the view (None for the recorded tool section, which no position names)."""

    position: int | None
    id: str | None
    reason: str


class AsSent:
    """The profile's ``history_text``: a historical instruction as it was sent, while its
    durable rendering is the recorded one and its text verifies; its durable rendering
    otherwise. ``unverified``: the records whose text did not verify, by view position.
    ``results_section``: the pass options' (``prompt_cache._results_tail``; None: the seed's
    merge of results into the context)."""

    def __init__(
        self, records: ViewRecords, results_section: ResultsSection | None = None
    ) -> None:
        self.records = records
        self.unverified: dict[int, IgnoredRecord] = {}
        self.results_section = results_section

    def __call__(self, branch: Branch, turn: InstructionTurn, rendered: Content) -> Content:
        record, text = self.records.sent_record(turn, rendered)
        if record is None:  # no record, or an edited instruction: its durable view (a rewrite)
            return rendered
        if text is None and self.results_section is not None:
            text = verified_with_results(turn, rendered, record, self.results_section)
        if text is None:  # a record without a text is listed by view_records already
            if record.text is not None:
                self.unverified[turn.position] = IgnoredRecord(
                    turn.position, str(turn.message.id), _UNVERIFIED
                )
            return rendered
        return own_copy(text)


def ignored_records(
    records: ViewRecords,
    unverified: dict[int, IgnoredRecord],
    recorded_stable: bool,
    section: str,
) -> tuple[IgnoredRecord, ...]:
    """``CachedCompile.ignored``: the records ``view_records`` rejected, those whose text did
    not verify, and a recorded stable segment read without its tool section, by position (the
    stable segment first)."""
    out = [IgnoredRecord(p, str(uid), reason) for p, uid, reason in records.rejected]
    out += unverified.values()
    blocks = records.stable_blocks
    if recorded_stable and blocks and len(blocks) > 1 and not section:
        out.append(IgnoredRecord(None, None, _NO_TOOL_SECTION))
    return tuple(sorted(out, key=lambda i: -1 if i.position is None else i.position))


_UNVERIFIED = (
    "its recorded sent text is not this instruction's durable rendering plus the response "
    "sections the profile renders; its durable view is sent instead"
)
_NO_TOOL_SECTION = (
    "the recorded stable segment holds no tool section the profile renders; the stable "
    "segment shown is the system text alone"
)
