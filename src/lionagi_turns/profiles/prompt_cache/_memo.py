"""ADR-0127 profile memos: what a next turn of the prompt-cache profile reads and hashes anew.

Per-branch memos make the profile's own work on a next turn proportional to what is new.
Each answer equals, always, the one computed afresh (``read_record`` on every instruction, the
tool section rendered, ``prefix_digests`` over every message); a memo only decides how much of
it is recomputed.

``view_records(branch, view, memo)`` -> ``(ViewRecords, stale)``: the ``SentRecord`` of each
``Instruction`` of ``view`` (ids the pile lacks are skipped; the compiler refuses them) and from
them ``last``, ``started`` (the first one holding the conversation's blocks) and
``stable_blocks`` (the latest truthy recorded stable segment). The previous answer for the same
branch is extended, reading only the view's new ids, when all of this holds:

- the view starts with the previous view;
- the pile's keys and values start with the previous ones: the same objects, in the same order
  (so every previous id still names the same message object);
- every previous instruction's ``metadata[RECORD_KEY]`` equals (``==``) the copy taken when it
  was read (an edit in place, a replaced or removed record, a replaced ``metadata`` all show).

Otherwise every record is read again and the answer gets a new ``stamp`` (``stale`` is then
the branch's previous stamp, whose resumed walk the caller drops; else None). A ``stamp`` is kept
only by an extension, so two compiles of a branch with equal stamps saw, for every record of
the earlier one's view, equal records: the profile's ``CompileProfile.reuse`` key carries it,
so a reused rendering of a historical instruction (``history_text``) is one made from the same
record. ``ViewRecords.sent_record(turn, rendered)`` is the record read for that turn's message in
this answer (so a compile reads each record once; else ``read_record(turn.message)``) when its
``basis`` is ``digest(rendered)``, else None, with the record's text when
``prompt_cache._sent.verified_text`` accepts it (else None); both answers are remembered for a
rendering that is the very same text object (the render cache hands out the same object while a
record is unchanged), along the answers that extend one another. ``ViewRecords.rejected``: the
view position, id and reason of each instruction whose record data is not a record, is one with
flaws (``SentRecord.flaws``), or whose ``metadata`` is not a ``dict``.

``tool_section(branch, schemas, render, memo)``: the stable segment's tool section, rendered again
only when the schemas are not the same JSON data as last time (``_same_plain``).

``prefix_digests(branch, messages, marks, memo)``: ``prompt_cache._record.prefix_digests``,
resumed from a chain state kept from the previous compile of the branch at the longest prefix
its messages share with these (the same ``CompiledMessage`` objects, or ones whose digests are
equal: the same role and equal text, or equal canonical JSON), so only the messages after it
are hashed.

Keying and lifetime: one slot per live Branch, by identity (a weak reference; a finalizer drops
the slot with the branch, so a branch rebuilt with the same id is another branch). A slot holds
the records of the branch's pile as last read (strongly, as ``memo.resume``'s walk does, so the
identity checks are pointer comparisons and an ``id`` is never recycled under them), record
copies and compiled messages (plain data), nothing that refers to the branch: a dropped branch's
slot goes in the collection that frees the branch. Slot fields are replaced whole, never updated
in place (except ``ViewRecords.checked``, whose entries are pure functions of their key); a
chain state is copied before it is extended. Concurrent compiles of one branch each
read one consistent previous answer and check it as above; the last writer's answer is kept.

``memo``: the compile's ``Memo``, passed in by its entry point; one that does not keep (the
fast path off) reads and writes no slot: every answer is computed afresh.

Limitations: a record value replaced in place by an equal value of another type (``1`` ->
``1.0``) is not seen (the check is ``==``; a whole record replaced by an equal mapping that is
not a ``dict`` is seen); a record holding anything but JSON values (dict,
list, str, int, float, bool, None) is read afresh, with a new stamp, on every compile.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import compress, count, islice, repeat
from operator import attrgetter, is_, is_not
from typing import TYPE_CHECKING, Any
from uuid import UUID

from lionagi.protocols.messages import Instruction

from lionagi_turns.core.profile import Memo
from lionagi_turns.profiles.prompt_cache import _record as _cache_record
from lionagi_turns.profiles.prompt_cache._record import (
    RECORD_KEY,
    SentRecord,
    message_digest,
    read_record,
    record_data,
    rejections,
)
from lionagi_turns.profiles.prompt_cache._sent import check_sent
from lionagi_turns.profiles.prompt_cache._slots import (
    SLOTS,
    Chain,
    Slot,
    Unplain,
    plain_copy,
    slot_count,
    slot_of,
)

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

    from lionagi_turns.core.contracts import CompiledMessage
    from lionagi_turns.core.history import InstructionTurn
    from lionagi_turns.core.render import Content

__all__ = ("ViewRecords", "prefix_digests", "slot_count", "tool_section", "view_records")

_slots = SLOTS  # the slots by branch (``slots.SLOTS``, the same table), read where memo is

_stamps = count(1)  # next() on a count is atomic under the GIL
_metadata = attrgetter("metadata")
_KEPT_STATES = 8  # chain states kept per branch (the latest lengths)
_PLAIN_RECORDS = frozenset({dict, type(None)})  # the types a held record's data may have


@dataclass(frozen=True, slots=True)
class ViewRecords:
    """One compile's records of its view (module contract)."""

    last: SentRecord | None
    started: SentRecord | None
    stable_blocks: tuple[str, ...] | None
    stamp: int
    positions: tuple[int, ...]  # view positions of the view's instructions, ascending
    instructions: tuple[Instruction, ...]  # those instructions
    records: tuple[SentRecord | None, ...]  # each one's record
    memo: bool  # read under the fast path (else every record is read afresh)
    # instruction index -> (rendering, whether the record's basis is its digest, the verified
    # text); shared by the answers that extend this one (their records at these indexes are
    # equal)
    checked: dict[int, tuple[Content, bool, Content | None]]
    # (view position, id, reason) of each instruction whose RECORD_KEY value is not a record
    # or is one with flaws (``SentRecord.flaws``)
    rejected: tuple[tuple[int, UUID, str], ...] = ()

    def sent_record(
        self, turn: InstructionTurn, rendered: Content
    ) -> tuple[SentRecord | None, Content | None]:
        """``turn``'s record when its ``basis`` is the digest of ``rendered`` (module
        contract), else None; and with it the record's text when ``prompt_cache._sent`` verifies it
        for ``turn`` and ``rendered``, else None."""
        index, record = self._find(turn)
        if record is None:
            return None, None
        kept = None if index is None else self.checked.get(index)
        if kept is not None and kept[0] is rendered:
            seen = kept
        else:
            seen = check_sent(turn, rendered, record)
            if index is not None and type(rendered) is str:
                self.checked[index] = seen
        return (record, seen[2]) if seen[1] else (None, None)

    def _find(self, turn: InstructionTurn) -> tuple[int | None, SentRecord | None]:
        if self.memo:
            i = bisect_left(self.positions, turn.position)
            if (
                i < len(self.positions)
                and self.positions[i] == turn.position
                and self.instructions[i] is turn.message
            ):
                return i, self.records[i]
        return None, read_record(turn.message)


@dataclass(frozen=True, slots=True)
class Held:
    """What a slot keeps of the last answer: the answer, the view it read, the pile it read it
    from, and each instruction's record data as copied then."""

    answer: ViewRecords
    view: tuple[UUID, ...]
    keys: tuple[UUID, ...]
    values: tuple[object, ...]
    copies: tuple[object, ...]


def _slot(branch: Branch) -> Slot[Held]:
    """The branch's slot (``slots.slot_of``), holding this module's ``Held``."""
    return slot_of(branch)


# --------------------------------------------------------------------------- records


def view_records(
    branch: Branch, view: tuple[UUID, ...], memo: Memo
) -> tuple[ViewRecords, int | None]:
    """The records of ``view`` (module contract), and the stamp of the branch's previous answer
    when this one has another (None otherwise): what that stamp keyed is stale."""
    pile: dict[UUID, object] = branch.msgs.messages.collections  # type: ignore[has-type]
    if not memo.keeps:
        return _read(pile, view, memo=False)[0], None
    slot = _slot(branch)
    held, previous = slot.held, slot.stamp
    kept = _extend(held, pile, view) if held is not None else None
    if kept is None:
        answer, kept = _read(pile, view, memo=True)
    else:
        answer = kept.answer
    slot.held, slot.stamp = kept, answer.stamp
    return answer, previous if previous != answer.stamp else None


def _read(
    pile: dict[UUID, object], view: tuple[UUID, ...], *, memo: bool
) -> tuple[ViewRecords, Held | None]:
    """Every record of ``view`` read afresh, and what a slot keeps of it (None when it cannot be
    kept: a missing id, a record that is not JSON data)."""
    messages = list(map(pile.get, view))
    positions = tuple(i for i, m in enumerate(messages) if isinstance(m, Instruction))
    instructions: tuple[Instruction, ...] = tuple(messages[i] for i in positions)  # type: ignore[misc]
    datas = [record_data(m) for m in instructions]
    records = tuple(SentRecord.from_metadata(d) for d in datas)
    answer = ViewRecords(
        *_aggregate(records, None, None, None),
        next(_stamps),
        positions,
        instructions if memo else (),
        records,
        memo,
        {},
        rejections(positions, view, instructions, datas, records),
    )
    if not memo or any(map(is_, messages, repeat(None))):
        return answer, None
    try:
        copies = tuple(map(plain_copy, datas))
        keys = tuple(pile)
        values = tuple(pile.values())
    except (Unplain, RuntimeError):  # RuntimeError: the pile changed while it was read
        return answer, None
    return answer, Held(answer, view, keys, values, copies)


def _aggregate(
    records: Sequence[SentRecord | None],
    last: SentRecord | None,
    started: SentRecord | None,
    stable: tuple[str, ...] | None,
) -> tuple[SentRecord | None, SentRecord | None, tuple[str, ...] | None]:
    """``last``, ``started`` and ``stable_blocks`` after ``records``, continuing from the
    values for the records before them."""
    for record in records:
        if record is None:
            continue
        last = record
        if started is None and record.blocks is not None:
            started = record
        if record.stable_blocks:
            stable = record.stable_blocks
    return last, started, stable


def _extend(held: Held, pile: dict[UUID, object], view: tuple[UUID, ...]) -> Held | None:
    """``held`` extended by the view's new ids, or None when a module-contract condition fails
    (then everything is read again)."""
    n = len(held.view)
    m = len(held.keys)
    if len(view) < n or len(pile) < m or view[:n] != held.view:
        return None
    answer = held.answer
    try:
        if not all(map(is_, pile, held.keys)):
            return None
        if not all(map(is_, pile.values(), held.values)):
            return None
        # every record equal to its copy
        datas = tuple(map(dict.get, map(_metadata, answer.instructions), repeat(RECORD_KEY)))
        same = datas == held.copies and _PLAIN_RECORDS.issuperset(map(type, datas))
    except (RuntimeError, TypeError):  # a pile changed while read; metadata not a dict
        return None
    if not same:
        return None
    if len(view) == n and len(pile) == m:
        return held
    tail = view[n:]
    messages = list(map(pile.get, tail))
    if any(map(is_, messages, repeat(None))):
        return None
    new = [(n + i, msg) for i, msg in enumerate(messages) if isinstance(msg, Instruction)]
    try:
        new_datas = [record_data(msg) for _, msg in new]
        copies = tuple(map(plain_copy, new_datas))
        refs = tuple(msg for _, msg in new)
        keys = tuple(islice(pile, m, None))
        values = tuple(islice(pile.values(), m, None))
    except (RuntimeError, TypeError, Unplain):
        return None
    records = tuple(SentRecord.from_metadata(d) for d in new_datas)
    last, started, stable = _aggregate(records, answer.last, answer.started, answer.stable_blocks)
    new_positions = tuple(p for p, _ in new)
    extended = ViewRecords(
        last,
        started,
        stable,
        answer.stamp,
        answer.positions + new_positions,
        answer.instructions + refs,
        answer.records + records,
        True,
        answer.checked,
        answer.rejected + rejections(new_positions, view, refs, new_datas, records),
    )
    return Held(extended, view, held.keys + keys, held.values + values, held.copies + copies)


# --------------------------------------------------------------------------- tool section


def tool_section(
    branch: Branch, schemas: list[object], render: Callable[[list[object]], str], memo: Memo
) -> str:
    """``render(schemas)``, kept with a copy of ``schemas`` and served again while the schemas
    are the same JSON data as the copy: the same types (exactly), the same keys in the same
    order, equal values (module contract; a float must be the same object or have the same
    ``repr``, so ``-0.0`` is not ``0.0``)."""
    if not schemas or not memo.keeps:
        return render(schemas)
    slot = _slot(branch)
    kept = slot.tools
    if kept is not None and _same_plain(schemas, kept[0]):
        return kept[1]
    text = render(schemas)
    try:
        slot.tools = (plain_copy(schemas), text)
    except Unplain:
        slot.tools = None
    return text


def _same_plain(live: Any, copy: Any) -> bool:
    kind = type(live)
    if kind is not type(copy):
        return False
    if kind is dict:
        return (
            len(live) == len(copy)
            and list(live) == list(copy)
            and all(map(_same_plain, live.values(), copy.values()))
        )
    if kind is list:
        return len(live) == len(copy) and all(map(_same_plain, live, copy))
    if kind is float:
        return live is copy or repr(live) == repr(copy)
    return bool(live == copy)  # str, int, bool, None: equal values of one exact type


# --------------------------------------------------------------------------- digests


def prefix_digests(
    branch: Branch, messages: tuple[CompiledMessage, ...], marks: set[int], memo: Memo
) -> dict[int, str]:
    """``prompt_cache._record.prefix_digests(messages, marks)`` (module contract)."""
    if not memo.keeps:
        return _cache_record.prefix_digests(messages, marks)
    slot = _slot(branch)
    chain = slot.chain
    total = len(messages)
    start, state = 0, None
    kept: list[tuple[int, hashlib._Hash]] = []
    if chain is not None:
        common = _common_prefix(messages, chain.messages)
        low = min(marks)
        kept = [(length, s) for length, s in chain.states if length <= common]
        for length, s in reversed(kept):
            if length <= low:
                start, state = length, s
                break
    running = hashlib.sha256() if state is None else state.copy()
    out: dict[int, str] = {}
    if start in marks:
        out[start] = running.hexdigest()
    keep_from = total - 3
    fresh: list[tuple[int, hashlib._Hash]] = []
    for n in range(start + 1, total + 1):
        running.update(message_digest(messages[n - 1]))
        if n in marks:
            out[n] = running.hexdigest()
        if n >= keep_from or n in marks:
            fresh.append((n, running.copy()))
    states = dict(kept)
    states.update(fresh)
    slot.chain = Chain(messages, tuple(sorted(states.items()))[-_KEPT_STATES:])
    return out


def _common_prefix(a: Sequence[CompiledMessage], b: Sequence[CompiledMessage]) -> int:
    """The number of leading messages of ``a`` and ``b`` whose digests are equal: the same
    objects (found at C speed), or the same role and equal text, or equal canonical JSON."""
    for i in compress(count(), map(is_not, a, b)):  # lazily: the indices not identical
        if not _same(a[i], b[i]):
            return i
    return min(len(a), len(b))


def _same(x: CompiledMessage, y: CompiledMessage) -> bool:
    if x.role is not y.role:
        return False
    if type(x.content) is str and type(y.content) is str:
        return x.content == y.content
    return message_digest(x) == message_digest(y)
