"""ADR-0127: the prompt-cache profile — a request as stable, conversation and turn segments.

Used when the call's endpoint places the prompt cache (lionagi's
``endpoint.places_prompt_cache``: Anthropic Messages with ``prompt_caching=True``). Rules
(input -> output), beyond the default profile's history rules, which hold unchanged:

- Stable segment (D1, D2, D3): the system text, then the Branch's tool set (``branch.acts``)
  rendered once as lionagi renders it (``minimal_yaml({"Tools": schemas})``), as an ordered list
  of blocks. The system text is not folded into any instruction.
- Conversation segment (D1, D4): the context blocks gathered on the conversation's first call,
  as one D3 context section. A conversation starts at the first call whose history holds no
  conversation record; it is recorded on that call's instruction, so it is kept, unchanged, on
  every later request while that instruction is in the history. A block returned on a later call
  and not in the conversation renders in the turn segment, as the current instruction's fold.
- Turn segment (D2): the messages. The current instruction renders its requested tools by name
  when the tool section holds them (lionagi's ``_tool_refs``) and its ResponseSchema and
  ResponseFormat sections. Each sent instruction carries a durable record in its ``metadata``
  (``RECORD_KEY``; see ``SentRecord``) holding the text it was sent as; a historical instruction
  renders that text while its durable rendering still equals the one recorded and the text is
  one the profile renders for it (``prompt_cache.sent``), else its durable rendering (a history
  rewrite when that differs from what was sent). A record that is not well formed is ignored,
  a field of the wrong shape read as absent; each is listed in ``CachedCompile.ignored``.
- System: the branch's (``branch_system``: ``msgs.system``, or the System message at the head
  of the pile when lionagi's ``Branch.from_dict`` left ``msgs.system`` None), never a record's.
- Changes (D1, D6): against the last recorded request of the history, a different stable or
  conversation segment is a counted segment change, and messages that no longer start with
  that request's messages are a counted history rewrite.
- ``CacheLayout.previous_end``: the index of the previous request's last message in this
  request, when the messages kept its prefix; the adapter places the lookback mark from it (D5).

The compile is the compiler's own pipeline (``compile_traced``) under a ``CompileProfile``
whose options say this: the system is not folded (``fold_system=False``), a later call's new
blocks fold into the current instruction (``fold_target="current"``, ``envelope``), the current
instruction renders tool references and response sections (``current_options``), a historical
instruction sends its recorded text (``history_text``), and the stable segment is
``stable_blocks``. Selection, the kind and ordering rules, their errors, the ReAct step and the
empty-turn guard are the compiler's.

Speed (``prompt_cache.memo``, fast path only; the output is the same with it off): the view's
records, the tool section and the prefix digests are carried over from the previous compile of
the branch while what they were made from is unchanged, and the profile's ``reuse`` key is
``("adr-0127", records.stamp)``, so the compiler resumes its previous walk exactly while the
records it rendered from are unchanged (a new stamp drops the walk the old key reached).

Purity: nothing stored is written; the record is attached to the compiled (new) instruction
only, which lionagi records after a successful call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol, TypedDict

from lionagi.operations.chat._prepare import _tool_name, _tool_refs

from lionagi_turns.core.contracts import (
    CompiledChatRequest,
    CompiledMessage,
    ContextBlock,
    TurnRequest,
)
from lionagi_turns.core.envelope import encode_context_section
from lionagi_turns.core.history import branch_system, select_ids
from lionagi_turns.core.pipeline import Trace, compile_traced
from lionagi_turns.core.profile import CompileProfile, Memo, chosen_memo
from lionagi_turns.core.render import CallOptions, Content, ResultsSection, own_copy, render_view
from lionagi_turns.core.rendering import current_record
from lionagi_turns.core.values import JsonObject, check_value, naming_record
from lionagi_turns.memo import resume as _resume
from lionagi_turns.memo.yaml import minimal_yaml
from lionagi_turns.profiles.prompt_cache.as_sent import AsSent, IgnoredRecord, ignored_records
from lionagi_turns.profiles.prompt_cache.memo import ViewRecords, prefix_digests, view_records
from lionagi_turns.profiles.prompt_cache.memo import tool_section as memo_tool_section
from lionagi_turns.profiles.prompt_cache.record import (
    RECORD_KEY,
    SegmentChanges,
    SentRecord,
    digest,
    read_record,
)
from lionagi_turns.profiles.prompt_cache.sent import response_sections

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = (
    "RECORD_KEY",
    "CacheLayout",
    "CachedCompile",
    "Compose",
    "IgnoredRecord",
    "SegmentChanges",
    "SentRecord",
    "branch_system",
    "compile_cached",
    "read_record",
    "recorded_tool_section",
    "tool_section",
)


@dataclass(frozen=True, slots=True)
class CacheLayout:
    """The segments handed to the provider adapter (D5): ordered system blocks, and where the
    previous request ended in this request's messages (None when unknown or not kept)."""

    stable: tuple[str, ...]
    conversation: tuple[str, ...]
    previous_end: int | None
    changes: SegmentChanges

    @property
    def system_blocks(self) -> list[str]:
        return [*self.stable, *self.conversation]


@dataclass(frozen=True, slots=True)
class CachedCompile:
    """The compiled request, its segments, the record it carries and the traced compile
    (``trace.fold`` is the later blocks' fold into the current instruction, if any)."""

    compiled: CompiledChatRequest
    layout: CacheLayout
    record: SentRecord
    trace: Trace
    ignored: tuple[IgnoredRecord, ...] = ()


def tool_section(schemas: Sequence[object]) -> str:
    """The tool set as the stable segment shows it (lionagi's rendering), "" for none.

    Every schema first passes the value guard (``core.values.check_value``): a schema holding a
    value lionagi's YAML cannot represent, itself, a set (hash order: a stable segment that
    differs per process) or a lone surrogate is refused with a ValueError/TypeError naming the
    tool and the path inside its schema, before anything is rendered or sent."""
    if not schemas:
        return ""
    for index, schema in enumerate(schemas):
        name = _tool_name(schema) if isinstance(schema, dict) else None
        label = f"tool {name!r}" if name else f"tool #{index}"
        with naming_record(
            f"{label} of the Branch's tool set (branch.acts); register the tool with a schema "
            "of plain JSON data, or remove it"
        ):
            check_value(schema, f"{label} schema")
    return minimal_yaml({"Tools": list(schemas)}).strip()


def compile_cached(
    branch: Branch,
    request: TurnRequest,
    tool_schemas: Sequence[object] | None,
    *,
    react_context: Sequence[object] | None = None,
    audit: bool = False,
    compose: Compose | None = None,
    memo: Memo | None = None,
) -> CachedCompile:
    """Compile ``request`` under the prompt-cache profile (module rules) through the compiler's
    profile seam (``compile_traced``). ``tool_schemas`` is the conversation's tool set
    (``branch.acts.schema_list``); None takes the tool section as last recorded (a saved
    branch holds no tool functions) when it is the profile's rendering of a tool list
    (``recorded_tool_section``), after the branch's system text. Raises what
    ``compile_chat_request`` raises, before producing any output. ``react_context``: the
    caller's context items of a running ReAct turn, for the compiler's ReAct step (lionagi's
    prompt-cache path applies the same de-duplication). ``CachedCompile.ignored`` lists the
    records that are not well formed or have flaws, and a recorded stable segment read without
    its tool section; with ``audit`` also every record whose text does not verify (it then
    compiles without resuming a previous walk, which skips the history it reuses). ``compose``
    layers another profile on this one (``Compose``; Amendment 1's bounds): the layout, records
    and changes are those of the messages it finishes. ``memo``: the compile's (``Memo``; None:
    ``chosen_memo()``); its ``keeps`` also decides whether the profile's memos are used."""
    memo = chosen_memo() if memo is None else memo
    with memo.compiling():
        return _compile_cached(branch, request, tool_schemas, react_context, audit, compose, memo)


def recorded_tool_section(blocks: Sequence[str] | None) -> str:
    """The tool section of recorded ``stable_blocks`` (the system text, then the tool section;
    either may be absent): their last block when it is exactly ``tool_section`` of the tool
    list it loads back to, else ``""``."""
    if not blocks:
        return ""
    candidate = blocks[-1]
    loaded = response_sections(candidate, keys=("Tools",))
    if loaded is None or tool_section(loaded["Tools"]) != candidate:
        return ""
    return candidate


def _compile_cached(
    branch: Branch,
    request: TurnRequest,
    tool_schemas: Sequence[object] | None,
    react_context: Sequence[object] | None,
    audit: bool,
    compose: Compose | None,
    memo: Memo,
) -> CachedCompile:
    records, stale = view_records(branch, select_ids(branch, request.progression), memo.keeps)
    if stale is not None:  # the records changed: the walk made under the old key is stale
        _resume.forget(branch, _reuse_key(stale))
    last, started = records.last, records.started
    stable, section, registered = _stable_segment(branch, records, tool_schemas, memo.keeps)
    conversation_blocks, later = _split_context(request, started)
    conversation = tuple(s for s in (encode_context_section(conversation_blocks),) if s)

    refs = _tool_refs(list(request.tool_schemas), registered)  # the current instruction's
    as_sent = AsSent(records)
    profile = _cache_profile(stable, later, refs, as_sent, None if audit else records.stamp)
    if compose is not None:
        profile = compose.profile(profile, later)
        as_sent.results_section = profile.results_section
    trace = compile_traced(branch, request, profile=profile, react_context=react_context, memo=memo)
    current = trace.rendered[-1].content
    durable_current = _durable_current(request, trace, profile, bool(refs), memo.keeps)
    compiled = trace.compiled
    if compose is not None:
        compiled = replace(compiled, messages=compose.messages(trace))
    record, previous_end = _sent_record(
        branch, compiled.messages, last, stable, conversation, (current, durable_current),
        conversation_blocks if started is None else None, later, memo.keeps,
    )
    compiled.instruction.metadata[RECORD_KEY] = record.to_metadata()
    return CachedCompile(
        compiled,
        CacheLayout(stable, conversation, previous_end, record.changes),
        record,
        trace,
        ignored_records(
            records, as_sent.unverified if audit else {}, tool_schemas is None, section
        ),
    )


def _durable_current(
    request: TurnRequest, trace: Trace, profile: CompileProfile, refs: bool, keep: bool
) -> Content:
    """The durable view the current instruction renders as history in a request like this one
    (the ReAct step shortens its context there as it did here); with ``keep`` (``Memo.keeps``)
    its rendering when it had no call option and no fold (that is its durable view)."""
    plain = not refs and request.response_format is None and request.structure is None
    if keep and trace.fold is None and plain:
        return trace.rendered[-1].content
    with naming_record(current_record(request)):
        durable, _ = render_view(
            request.instruction.content,
            results=trace.projection.pending,
            context=trace.current_context,
            **_sectioned(profile),
        )
    return durable


def _stable_segment(
    branch: Branch, records: ViewRecords, tool_schemas: Sequence[object] | None, keep: bool
) -> tuple[tuple[str, ...], str, frozenset[str]]:
    """(the stable segment's blocks, its tool section, the registered tool names): the
    system text and the tool section rendered from ``tool_schemas`` (None: the recorded
    one)."""
    schemas = list(tool_schemas or ())
    if tool_schemas is None:
        section = recorded_tool_section(records.stable_blocks)
    else:
        section = memo_tool_section(branch, schemas, tool_section, keep)
    system = branch_system(branch)
    stable = tuple(s for s in (system.rendered if system else "", section) if s)
    registered = frozenset(n for s in schemas if (n := _tool_name(s)))
    return stable, section, registered


def _split_context(
    request: TurnRequest, started: SentRecord | None
) -> tuple[tuple[ContextBlock, ...], tuple[ContextBlock, ...]]:
    """(the conversation segment's blocks, the blocks this call folds into its turn): a new
    conversation's are the request's; a started one's are its record's, and the request's
    other blocks fold."""
    if started is None:
        return request.context_blocks, ()
    conversation_blocks = started.blocks or ()
    later = tuple(b for b in request.context_blocks if b not in conversation_blocks)
    return conversation_blocks, later


def _cache_profile(
    stable: tuple[str, ...],
    later: tuple[ContextBlock, ...],
    refs: Sequence[JsonObject | str],
    as_sent: AsSent,
    stamp: int | None,
) -> CompileProfile:
    """The ADR-0127 profile (see the module): the system unfolded, ``later`` folded into the
    current instruction, tools by reference, historical instructions as sent; ``stamp``
    None (an audit): no resumed walk."""

    def current_options(branch: Branch, request: TurnRequest) -> CallOptions:
        return CallOptions(refs, request.response_format, request.structure)

    return CompileProfile(
        name="adr-0127",
        fold_system=False,
        fold_context=bool(later),
        fold_target="current",
        envelope=lambda blocks: encode_context_section(later),
        stable_blocks=lambda branch, request: stable,
        current_options=current_options,
        history_text=as_sent,
        reuse=None if stamp is None else _reuse_key(stamp),
    )


def _sent_record(
    branch: Branch,
    messages: tuple[CompiledMessage, ...],
    last: SentRecord | None,
    stable: tuple[str, ...],
    conversation: tuple[str, ...],
    texts: tuple[Content, Content],
    blocks: tuple[ContextBlock, ...] | None,
    later: tuple[ContextBlock, ...],
    keep: bool,
) -> tuple[SentRecord, int | None]:
    """(this request's record, ``CacheLayout.previous_end``): the changes against ``last``
    (the history's last record), the prefix digest at the end of ``messages``. ``texts``:
    the current instruction's sent text and its durable view; ``blocks``: a new
    conversation's context blocks (None: a started conversation); ``keep``: ``Memo.keeps``."""
    current, durable_current = texts
    marks = {len(messages)}
    if last is not None and last.messages <= len(messages):
        marks.add(last.messages)
    digests = prefix_digests(branch, messages, marks, keep)
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


class Compose(Protocol):
    """Another profile layered on this one: ``profile(base, later)`` is the profile the
    pipeline runs (``later``: the blocks this call folds into its turn), ``messages(trace)``
    the messages sent (e.g. with a marker put before the first). A historical instruction
    renders as the composed profile renders it, so its ``results_section`` is part of the
    durable basis a sent record is checked against."""

    def profile(
        self, base: CompileProfile, later: tuple[ContextBlock, ...]
    ) -> CompileProfile: ...

    def messages(self, trace: Trace) -> tuple[CompiledMessage, ...]: ...


class _Sectioned(TypedDict, total=False):
    results_section: ResultsSection


def _sectioned(profile: CompileProfile) -> _Sectioned:
    return {} if profile.results_section is None else {"results_section": profile.results_section}


def _reuse_key(stamp: int) -> tuple[str, int]:
    """The profile's ``CompileProfile.reuse``: its name and the records' stamp, so a walk is
    resumed only by compiles that read the same records (``prompt_cache.memo``)."""
    return ("adr-0127", stamp)
