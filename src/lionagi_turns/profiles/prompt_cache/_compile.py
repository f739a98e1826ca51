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
  one the profile renders for it (``prompt_cache._sent``), else its durable rendering (a history
  rewrite when that differs from what was sent). A record that is not well formed is ignored,
  a field of the wrong shape read as absent; each is listed in ``CachedCompile.ignored``.
- System: the branch's (``branch_system``: ``msgs.system``, or the System message at the head
  of the pile when lionagi's ``Branch.from_dict`` left ``msgs.system`` None), never a record's.
- Changes (D1, D6): against the last recorded request of the history, a different stable or
  conversation segment is a counted segment change, and messages that no longer start with
  that request's messages are a counted history rewrite.
- ``CacheLayout.previous_end``: the index of the previous request's last message in this
  request, when the messages kept its prefix; the adapter places the lookback mark from it (D5).

The compile is the compiler's own pipeline (``compile_traced``) with the ``PromptCache`` stage
(``prompt_cache._stage``), whose options say this: the system is not folded
(``fold_system=False``), a later call's new blocks fold into the current instruction
(``fold_target="current"``, ``envelope``), the current instruction renders tool references and
response sections (``current_options``), a historical instruction sends its recorded text
(``history_text``), and the stable segment is ``stable_blocks``. Selection, the kind and
ordering rules, their errors, the ReAct step and the empty-turn guard are the compiler's.

Speed (``prompt_cache._memo``, fast path only; the output is the same with it off): the view's
records, the tool section and the prefix digests are carried over from the previous compile of
the branch while what they were made from is unchanged, and the profile's ``reuse`` key is
``("adr-0127", records.stamp)``, so the compiler resumes its previous walk exactly while the
records it rendered from are unchanged (a new stamp drops the walk the old key reached).

Purity: nothing stored is written; the record is attached to the compiled (new) instruction
only, which lionagi records after a successful call.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lionagi_turns.core.contracts import CompiledChatRequest, TurnRequest
from lionagi_turns.core.history import branch_system
from lionagi_turns.core.pipeline import Trace, compile_traced
from lionagi_turns.core.profile import Memo
from lionagi_turns.core.stage import Stage
from lionagi_turns.profiles.prompt_cache._as_sent import IgnoredRecord
from lionagi_turns.profiles.prompt_cache._record import (
    RECORD_KEY,
    SegmentChanges,
    SentRecord,
    read_record,
)
from lionagi_turns.profiles.prompt_cache._stage import NAME, Laid, PromptCache
from lionagi_turns.profiles.prompt_cache._tools import recorded_tool_section, tool_section

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = (
    "RECORD_KEY",
    "CacheLayout",
    "CachedCompile",
    "IgnoredRecord",
    "PromptCache",
    "SegmentChanges",
    "SentRecord",
    "branch_system",
    "cached_result",
    "compile_cached",
    "laid_out",
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


def compile_cached(
    branch: Branch,
    request: TurnRequest,
    tool_schemas: Sequence[object] | None,
    *,
    react_context: Sequence[object] | None = None,
    audit: bool = False,
    memo: Memo | None = None,
) -> CachedCompile:
    """Compile ``request`` under the prompt-cache layout (module rules): the one pipeline with
    the ``PromptCache`` stage. ``tool_schemas`` is the conversation's tool set
    (``branch.acts.schema_list``); None takes the tool section as last recorded (a saved
    branch holds no tool functions) when it is the profile's rendering of a tool list
    (``recorded_tool_section``), after the branch's system text. Raises what
    ``compile_chat_request`` raises, before producing any output. ``react_context``: the
    caller's context items of a running ReAct turn, for the compiler's ReAct step (lionagi's
    prompt-cache path applies the same de-duplication). ``CachedCompile.ignored`` lists the
    records that are not well formed or have flaws, and a recorded stable segment read without
    its tool section; with ``audit`` also every record whose text does not verify (it then
    compiles without resuming a previous walk, which skips the history it reuses). ``memo``:
    the compile's (``Memo``; None: ``chosen_memo()``)."""
    return laid_out(branch, request, (PromptCache(tool_schemas=tool_schemas, audit=audit),),
                    react_context=react_context, memo=memo)


def laid_out(
    branch: Branch,
    request: TurnRequest,
    stages: Sequence[Stage],
    *,
    react_context: Sequence[object] | None = None,
    memo: Memo | None = None,
) -> CachedCompile:
    """The one compile under ``stages``, a tuple that ends with a ``PromptCache`` stage (the
    stages before it are what it lays out), read as a ``CachedCompile``."""
    trace = compile_traced(branch, request, stages=stages, react_context=react_context, memo=memo)
    return cached_result(trace, stages[-1].name if stages else NAME)


def cached_result(trace: Trace, name: str = NAME) -> CachedCompile:
    """The ``CachedCompile`` of a compile whose stages include the layout (its slot ``name``);
    ``TypeError`` for a trace without it."""
    laid = trace.slot(name)
    if not isinstance(laid, Laid):
        raise TypeError(f"the compile ran no prompt-cache layout stage named {name!r}")
    layout = CacheLayout(laid.stable, laid.conversation, laid.previous_end, laid.record.changes)
    return CachedCompile(trace.compiled, layout, laid.record, trace, laid.ignored)
