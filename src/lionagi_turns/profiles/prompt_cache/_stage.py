"""``PromptCache``: the ADR-0127 layout as a stage of the one pipeline (``core.stage``).

``prepare`` (after the view is selected) reads the view's records once (``memo.view_records``
on ``Plan.view``), builds the stable segment (the system text, then the tool section), splits
the request's context blocks into the conversation segment and the blocks this call folds
into its own turn, and sets the pass options of ``layout``'s rules: the system not folded, a
later call's blocks folded into the current instruction through the options' envelope (so a
stage before this one encodes them, e.g. with skip markers), tools by reference (or the
``shown`` sections of a rebuilt call), historical instructions as sent (``AsSent``, with the
options' ``results_section``), the stable segment, and a resume key carrying the records'
stamp (None under ``audit``).

``finish`` (after the compiled request and the stages before this one) records what was sent:
the durable ``SentRecord`` on the compiled instruction, computed over the messages as the
earlier stages finished them (a history marker included), the segment changes against the
history's last record and where the previous request ended. Its slot holds a ``Laid`` value.

``sent_layout()``: the tool section (sent outside the messages) and each instruction's recorded
text, for a stage before this one that measures what is sent (a ceiling).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lionagi.operations.chat._prepare import _tool_name, _tool_refs

from lionagi_turns.core.contracts import CompiledMessage, ContextBlock, TurnRequest
from lionagi_turns.core.envelope import encode_context_section
from lionagi_turns.core.history import branch_system
from lionagi_turns.core.profile import SEED_PROFILE, CompileProfile, Memo
from lionagi_turns.core.render import CallOptions, Content, ShownSections, own_copy, render_view
from lionagi_turns.core.rendering import current_record
from lionagi_turns.core.stage import SentLayout, Stage
from lionagi_turns.core.values import naming_record
from lionagi_turns.memo import resume as _resume
from lionagi_turns.profiles.prompt_cache._as_sent import AsSent, IgnoredRecord, ignored_records
from lionagi_turns.profiles.prompt_cache._memo import ViewRecords, prefix_digests, view_records
from lionagi_turns.profiles.prompt_cache._memo import tool_section as memo_tool_section
from lionagi_turns.profiles.prompt_cache._record import (
    RECORD_KEY,
    SegmentChanges,
    SentRecord,
    digest,
    read_record,
)
from lionagi_turns.profiles.prompt_cache._tools import recorded_tool_section, tool_section

if TYPE_CHECKING:
    from lionagi.protocols.messages import Instruction
    from lionagi.session.branch import Branch

    from lionagi_turns.core.plan import Plan

__all__ = ("NAME", "Laid", "PromptCache")

NAME = "prompt-cache"


@dataclass(frozen=True, slots=True)
class _Prepared:
    records: ViewRecords
    stable: tuple[str, ...]
    section: str
    conversation_blocks: tuple[ContextBlock, ...] | None  # None: a started conversation's
    later: tuple[ContextBlock, ...]
    refs: bool
    as_sent: AsSent


@dataclass(frozen=True, slots=True)
class Laid:
    """The stage's output: the system blocks' segments, where the previous request ended in
    this one's messages (None: unknown or not kept), the record the compiled instruction
    carries and the records the compile did not use."""

    stable: tuple[str, ...]
    conversation: tuple[str, ...]
    previous_end: int | None
    record: SentRecord
    ignored: tuple[IgnoredRecord, ...]


@dataclass(frozen=True, slots=True)
class PromptCache(Stage):
    """The layout stage (module contract). ``tool_schemas``: the conversation's tool set (None:
    the tool section as last recorded); ``shown``: the response sections a rebuilt call's
    current instruction is sent with, instead of tools by reference and the request's
    options; ``audit``: every record whose text does not verify is listed, and no walk is
    resumed."""

    tool_schemas: Sequence[object] | None = None
    shown: ShownSections | None = None
    audit: bool = False
    name: str = NAME

    def sent_layout(self) -> SentLayout:
        schemas = self.tool_schemas
        section = tool_section(list(schemas)) if schemas is not None else ""
        return SentLayout(outside=(section,) if section else (), sent_text=_recorded_text)

    def prepare(self, plan: Plan) -> Plan:
        branch, request, memo = plan.branch, plan.request, plan.memo
        records, stale = view_records(branch, plan.view, memo)
        base = plan.profile
        if stale is not None:  # the records changed: the walk made under the old key is stale
            _resume.forget(branch, _reuse_key(base, stale))
        stable, section, registered = _stable_segment(branch, records, self.tool_schemas, memo)
        started = records.started
        later = _later(request, started)
        refs = _tool_refs(list(request.tool_schemas), registered)
        as_sent = AsSent(records, base.results_section)
        shown = self.shown

        def current_options(branch: Branch, request: TurnRequest) -> CallOptions | ShownSections:
            return shown if shown is not None else CallOptions(
                refs, request.response_format, request.structure)

        encode = base.envelope
        stamp = None if self.audit else records.stamp
        profile = CompileProfile(
            name=NAME_OF_OPTIONS if base.name == SEED_PROFILE.name else f"adr-0127+{base.name}",
            bound=base.bound,
            fold_system=False,
            fold_context=base.fold_context,
            fold_target="current",
            envelope=lambda blocks: encode(later),
            stable_blocks=lambda branch, request: stable,
            current_options=current_options,
            history_options=base.history_options,
            results_section=base.results_section,
            history_text=as_sent,
            reuse=None if stamp is None else _reuse_key(base, stamp),
        )
        conversation_blocks = None if started is not None else request.context_blocks
        prepared = _Prepared(
            records, stable, section, conversation_blocks, later, bool(refs), as_sent)
        return plan._replace(profile=profile).with_slot(self.name, prepared)

    def finish(self, plan: Plan) -> Plan:
        prepared = plan.slot(self.name)
        assert isinstance(prepared, _Prepared), "PromptCache.finish runs after its prepare"
        compiled = plan.compiled
        assert compiled is not None, "stages finish after the compiled request"
        records = prepared.records
        started = records.started
        blocks = prepared.conversation_blocks
        if blocks is not None:
            conversation_blocks = blocks
        else:
            assert started is not None, "a started conversation has its record"
            conversation_blocks = started.blocks or ()
        conversation = tuple(s for s in (encode_context_section(conversation_blocks),) if s)
        current = plan.rendered[-1].content
        durable = _durable_current(plan, prepared.refs)
        record, previous_end = _sent_record(
            plan.branch, compiled.messages, records.last, prepared.stable, conversation,
            (current, durable), blocks, prepared.later, plan.memo,
        )
        compiled.instruction.metadata[RECORD_KEY] = record.to_metadata()
        unverified = prepared.as_sent.unverified if self.audit else {}
        ignored = ignored_records(records, unverified, self.tool_schemas is None, prepared.section)
        laid = Laid(prepared.stable, conversation, previous_end, record, ignored)
        return plan.with_slot(self.name, laid)


NAME_OF_OPTIONS = "adr-0127"


def _recorded_text(message: Instruction) -> Content | None:
    """The text ``message``'s record says it was sent as ("" for a record without one; None
    without a record)."""
    record = read_record(message)
    if record is None:
        return None
    return "" if record.text is None else record.text


def _reuse_key(base: CompileProfile, stamp: int) -> tuple[object, ...]:
    """The resume key: the layout's name and the records' stamp, under the options it was
    given (so a walk is resumed only by compiles of the same stages that read the same
    records)."""
    key = (NAME_OF_OPTIONS, stamp)
    return key if base.reuse == SEED_PROFILE.reuse else (base.reuse, *key)


def _later(request: TurnRequest, started: SentRecord | None) -> tuple[ContextBlock, ...]:
    """The blocks this call folds into its turn: none in a new conversation (its blocks are
    the conversation segment); a started one's blocks not in its record."""
    if started is None:
        return ()
    conversation_blocks = started.blocks or ()
    return tuple(b for b in request.context_blocks if b not in conversation_blocks)


def _stable_segment(
    branch: Branch, records: ViewRecords, tool_schemas: Sequence[object] | None, memo: Memo
) -> tuple[tuple[str, ...], str, frozenset[str]]:
    """(the stable segment's blocks, its tool section, the registered tool names): the
    system text and the tool section rendered from ``tool_schemas`` (None: the recorded
    one)."""
    schemas = list(tool_schemas or ())
    if tool_schemas is None:
        section = recorded_tool_section(records.stable_blocks)
    else:
        section = memo_tool_section(branch, schemas, tool_section, memo)
    system = branch_system(branch)
    stable = tuple(s for s in (system.rendered if system else "", section) if s)
    registered = frozenset(n for s in schemas if (n := _tool_name(s)))
    return stable, section, registered


def _durable_current(plan: Plan, refs: bool) -> Content:
    """The durable view the current instruction renders as history in a request like this one
    (the ReAct step shortens its context there as it did here); under a memo that keeps, its
    rendering when it had no call option and no fold (that is its durable view)."""
    request, profile = plan.request, plan.profile
    plain = not refs and request.response_format is None and request.structure is None
    if plan.memo.keeps and plan.fold is None and plain:
        return plan.rendered[-1].content
    projection = plan.projection
    assert projection is not None, "stages finish after the render pass"
    section = profile.results_section
    with naming_record(current_record(request)):
        if section is None:
            durable, _ = render_view(
                request.instruction.content, results=projection.pending,
                context=plan.current_context)
        else:
            durable, _ = render_view(
                request.instruction.content, results=projection.pending,
                context=plan.current_context, results_section=section)
    return durable


def _sent_record(
    branch: Branch,
    messages: tuple[CompiledMessage, ...],
    last: SentRecord | None,
    stable: tuple[str, ...],
    conversation: tuple[str, ...],
    texts: tuple[Content, Content],
    blocks: tuple[ContextBlock, ...] | None,
    later: tuple[ContextBlock, ...],
    memo: Memo,
) -> tuple[SentRecord, int | None]:
    """(this request's record, where the previous request ended): the changes against
    ``last`` (the history's last record), the prefix digest at the end of ``messages``.
    ``texts``: the current instruction's sent text and its durable view; ``blocks``: a new
    conversation's context blocks (None: a started conversation); ``memo``: the compile's."""
    current, durable_current = texts
    marks = {len(messages)}
    if last is not None and last.messages <= len(messages):
        marks.add(last.messages)
    digests = prefix_digests(branch, messages, marks, memo)
    stable_digest, conversation_digest = digest(stable), digest(conversation)
    previous_end = None
    changes = SegmentChanges()
    if last is not None:
        kept = last.messages <= len(messages) and digests[last.messages] == last.prefix
        changes = SegmentChanges(
            stable=last.stable != stable_digest,
            conversation=last.conversation != conversation_digest,
            rewrite=not kept,
        )
        if kept and last.messages:
            previous_end = last.messages - 1
    record = SentRecord(
        stable_blocks=stable if last is None or changes.stable else None,
        text=own_copy(current),
        basis=digest(durable_current),
        stable=stable_digest,
        conversation=conversation_digest,
        blocks=tuple(blocks) if blocks is not None else None,
        messages=len(messages),
        prefix=digests[len(messages)],
        changes=changes,
        fold=later or None,
    )
    return record, previous_end
