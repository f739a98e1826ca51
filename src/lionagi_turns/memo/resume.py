"""The incremental next turn: a compile resumes the previous compile's walk of the same branch.

Contract: a resumed compile returns exactly what the full pipeline returns (same messages,
same errors); resuming changes only how much work is done.

Rules (what makes resuming correct):

- A ``Walk`` is what one successful compile of a branch walked under a profile with a
  ``reuse`` key: the view, its records, their content objects and ``_revision`` s, the
  projection before and after the profile's bound, and the rendered history parts and
  messages. Walks are kept per branch (keyed by its identity through a weak reference: a
  dropped branch's walks go in the collection that frees it) and per ``reuse`` key, replaced
  whole after each successful compile, never changed (but ``Walk.ids``); nothing is written to
  any lionagi object.
- ``resume`` answers with the previous walk only when this compile's view *starts with* the
  previous view, the pile's keys and records (in pile order) start with the ones the walk
  read — so each old id still names the same record object, found without hashing a UUID —,
  each of those records holds the same content object at the same ``_revision``, and every
  content the projection read
  there is one whose every in-place change lionagi's revision counter sees
  (``track.trackable``; while a record holding e.g. a list inside a tuple is in the view,
  every compile of the branch walks in full). Any progression edit, ``current_progression``
  change, removal, reordering or replacement of a record in the pile, replaced content or
  tracked in-place edit fails the check, and the full walk runs.
- The new records (``view[len(previous):]``) must be in the pile and not repeat an id;
  otherwise, and whenever the continued walk finds a defect, the full walk runs, so every
  error is the full walk's, with every defect of its kind.
- Rendered parts are reused for the longest run of leading turns that are the very same turn
  objects as last time, after the profile's bound (``reuse_prefix``); a turn the new records
  extend (an assistant run continued) is a new object, so it renders again. The fold is
  planned on every compile; its rendering is the walk's when the target is the same turn
  object and the folded parts are equal, and it replaces the target's reused part.
- List (multimodal) contents are copied on their way to the caller (``own_copy``), so a caller
  changing a compiled message never changes a later compile.
- Only while the fast path is on (``switch``), never within a ReAct step's compile (it gives
  this request copies of the instructions it reduces, each with its own context).

Limitation: as for the render cache, a write that bypasses lionagi's tracking
(``object.__setattr__(content, ...)``, ``dict.__setitem__(tracked, ...)``) is not seen; switch
the fast path off if code writes records that way. A walk holds the records of the branch's
last compiled view strongly, until the next compile of that branch or the branch's release;
their contents (self-cyclic through lionagi's tracked containers) then go one collection after
the one that frees the branch.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, replace
from operator import attrgetter, is_
from typing import TYPE_CHECKING
from uuid import UUID

from lionagi.protocols.messages import ActionResponse, Instruction

from lionagi_turns.core.contracts import CompiledMessage
from lionagi_turns.core.fold import FoldPlan
from lionagi_turns.core.history import Projection, Turn, extend_projection
from lionagi_turns.core.render import own_copy
from lionagi_turns.core.rendered import RenderedPart
from lionagi_turns.memo.branch_memory import BranchSlot
from lionagi_turns.memo.track import tracked as _trackable

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = (
    "Snapshot",
    "Walk",
    "forget",
    "resume",
    "reuse_prefix",
    "reused",
    "same_prefix",
    "snapshot",
    "store",
    "walk_count",
)

_content = attrgetter("content")
_revision = attrgetter("_revision")
_TRACKED_KINDS = (Instruction, ActionResponse)  # the records whose content values are rendered


@dataclass(frozen=True, slots=True)
class Walk:
    """One successful compile's walk of a branch (module rules); every field is a private
    copy, never changed after it is built, except ``ids``.

    ``ids`` holds the integers of the view's ids; one set is shared along a chain of resumed
    walks and only grows, so it may also hold ids of a later walk of the chain: such an id
    makes a resume walk in full (a false "repeated id"), never the reverse.

    ``snap`` is what the compile read before its walk (the view, the pile's keys and records,
    the view's records, contents and revisions); ``history`` holds the rendered parts of the
    bounded projection's turns (the current instruction's excluded) and ``messages`` the
    compiled messages they produced, in order;
    ``tracked`` is how many leading view positions hold records whose contents lionagi
    tracks completely; ``lists`` the indices of parts with list (multimodal) content, which
    the walk holds as private copies; ``plan`` is the compile's ``FoldPlan`` (None: no fold;
    its ``target`` is the index in ``history`` of the part that carried the fold, None when the
    current instruction did)."""

    snap: Snapshot
    ids: set[int]
    tracked: int
    projected: Projection
    projection: Projection
    history: tuple[RenderedPart, ...]
    messages: tuple[CompiledMessage, ...]
    lists: tuple[int, ...]
    plan: FoldPlan | None


# Each live branch object's walks by reuse key (a branch rebuilt with the same id is another
# branch).
_walks: BranchSlot[dict[Hashable, Walk]] = BranchSlot("resume")


def _walks_of(branch: object) -> dict[Hashable, Walk] | None:
    return _walks.get(branch)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a compile read before its walk: the pile's keys and records in pile order, and the
    view's records with their contents and ``_revision`` s (read before rendering, so a change
    made while the compile runs is seen by the next one)."""

    view: tuple[UUID, ...]
    keys: list[object]
    values: list[object]
    records: tuple[object, ...]
    contents: tuple[object, ...]
    revisions: tuple[object, ...]


def snapshot(branch: Branch, view: tuple[UUID, ...]) -> Snapshot | None:
    """The snapshot for a compile that walks in full, or None when a record has no revisioned
    content (such a compile is not kept)."""
    pile: dict[object, object] = branch.msgs.messages.collections  # type: ignore[has-type]
    keys, values = list(pile), list(pile.values())
    records = tuple(map(pile.get, view))
    try:
        contents = tuple(map(_content, records))
        revisions = tuple(map(_revision, contents))
    except AttributeError:  # a missing id or a record without content: the walk decides
        return None
    return Snapshot(view, keys, values, records, contents, revisions)


def resume(
    branch: Branch, key: Hashable, view: tuple[UUID, ...]
) -> tuple[Walk, Projection, Snapshot] | None:
    """The previous walk of ``branch`` under ``key``, this view's projection continued from it
    and this compile's snapshot, or None when the rules do not allow resuming (the caller
    walks in full)."""
    walks = _walks_of(branch)
    walk = walks.get(key) if walks is not None else None
    if walk is None:
        return None
    kept = walk.snap
    n = len(kept.view)
    if len(view) < n or walk.tracked < n or view[:n] != kept.view:
        return None
    pile: dict[object, object] = branch.msgs.messages.collections  # type: ignore[has-type]
    # The pile's (key, record) pairs still start with the ones the walk read: every id of the
    # previous view still names the same record object (keys are unique), without hashing one.
    keys, values = list(pile), list(pile.values())
    m = len(kept.keys)
    if len(keys) < m or keys[:m] != kept.keys or not all(map(is_, values[:m], kept.values)):
        return None
    contents = tuple(map(_content, kept.records))
    if not all(map(is_, contents, kept.contents)):
        return None
    if tuple(map(_revision, contents)) != kept.revisions:
        return None
    tail = view[n:]
    ints = [uid.int for uid in tail]
    if len(set(ints)) != len(ints) or not walk.ids.isdisjoint(ints):
        return None
    new = tuple(map(pile.get, tail))
    if any(r is None for r in new):
        return None
    try:
        new_contents = tuple(map(_content, new))
        new_revisions = tuple(map(_revision, new_contents))
    except AttributeError:
        return None
    records = kept.records + new
    projected = extend_projection(branch, walk.projected, view, list(records), n)
    if projected.defects:
        return None
    snap = Snapshot(
        view, keys, values, records, kept.contents + new_contents, kept.revisions + new_revisions
    )
    return walk, projected, snap


def store(
    branch: Branch,
    key: Hashable,
    snap: Snapshot,
    previous: Walk | None,
    projected: Projection,
    projection: Projection,
    history: Sequence[RenderedPart],
    messages: Sequence[CompiledMessage],
    reused: int,
    plan: FoldPlan | None = None,
) -> None:
    """Keep this compile's walk for the next compile of ``branch`` under ``key``.

    ``previous`` is the walk this compile resumed (its verdicts for the unchanged prefix
    carry over), ``reused`` how many leading ``history`` parts are its parts and ``plan`` the
    compile's ``FoldPlan`` (kept with a private copy of a list rendering). Not kept when a
    revision is not an int. (A pile changed while the compile ran needs no check here: the
    walk rendered the records the snapshot read, and the next compile resumes only from a
    pile that again starts with the snapshot's.)"""
    start = len(previous.snap.view) if previous is not None else 0
    if not set(map(type, snap.revisions[start:])) <= {int}:  # the previous walk's are ints
        return
    view = snap.view
    if previous is not None:
        ids = previous.ids  # shared along the chain: only ever grows (see Walk)
        ids.update(uid.int for uid in view[start:])
    else:
        ids = {uid.int for uid in view}
    walk = Walk(
        snap=snap,
        ids=ids,
        tracked=_tracked(snap.records, snap.contents, start),
        projected=projected,
        projection=projection,
        history=(parts := _private(history, previous, reused))[0],
        messages=_private_messages(messages, parts[0], parts[1]),
        lists=parts[1],
        plan=plan
        if plan is None or type(plan.rendered) is str
        else replace(plan, rendered=own_copy(plan.rendered)),
    )
    walks = _walks.setdefault(branch, dict)
    if walks is not None:  # None: a branch-like view that cannot be referenced weakly
        walks[key] = walk


def _private(
    history: Sequence[RenderedPart], previous: Walk | None, reused: int
) -> tuple[tuple[RenderedPart, ...], tuple[int, ...]]:
    """``history`` with each list (multimodal) content replaced by a private copy (the caller
    holds, and may change, the compiled ones), and those parts' indices; the first
    ``reused`` parts' indices are the previous walk's."""
    known = tuple(i for i in previous.lists if i < reused) if previous is not None else ()
    start = reused if previous is not None else 0
    fresh = tuple(i for i in range(start, len(history)) if type(history[i].content) is list)
    lists = known + fresh
    if not lists:
        return tuple(history), lists
    parts = list(history)
    for i in lists:
        parts[i] = replace(parts[i], content=own_copy(parts[i].content))
    return tuple(parts), lists


def _private_messages(
    messages: Sequence[CompiledMessage], parts: Sequence[RenderedPart], lists: tuple[int, ...]
) -> tuple[CompiledMessage, ...]:
    """``messages`` with the message of each part in ``lists`` holding that part's copy."""
    if not lists:
        return tuple(messages)
    out = list(messages)
    for i in lists:
        index = parts[i].message_index
        if index is not None:
            out[index] = replace(out[index], content=parts[i].content)
    return tuple(out)


def reused(walk: Walk, count: int) -> tuple[list[RenderedPart], list[CompiledMessage]]:
    """The first ``count`` history parts and the messages they produced, list contents copied
    for the caller."""
    parts = list(walk.history[:count])
    sent = next(
        (p.message_index + 1 for p in reversed(parts) if p.message_index is not None), 0
    )
    messages = list(walk.messages[:sent])
    for i in walk.lists:
        if i >= count:
            break
        part = parts[i]
        parts[i] = replace(part, content=own_copy(part.content))
        if part.message_index is not None:
            message = messages[part.message_index]
            messages[part.message_index] = replace(message, content=own_copy(message.content))
    return parts, messages


def _tracked(records: Sequence[object], contents: Sequence[object], start: int) -> int:
    """How many leading records hold contents lionagi tracks completely (``start`` of them are
    known to)."""
    for position in range(start, len(records)):
        if isinstance(records[position], _TRACKED_KINDS) and not _trackable(contents[position]):
            return position
    return len(records)


def reuse_prefix(walk: Walk, turns: Sequence[Turn]) -> int:
    """How many leading ``turns`` are the very objects of ``walk.projection.turns``."""
    return same_prefix(turns, walk.projection.turns)


def same_prefix(items: Sequence[object], kept: Sequence[object]) -> int:
    """How many leading ``items`` are the very objects of ``kept`` (identity, not equality)."""
    if all(map(is_, items, kept)):  # the usual answer, without building a list
        return min(len(items), len(kept))
    return list(map(is_, items, kept)).index(False)


def forget(branch: Branch, key: Hashable | None = None) -> None:
    """Drop ``branch``'s walks (the next compile walks in full); given a ``key``, only the walk
    kept under it (a profile whose key changed drops the walk its old key no longer reaches)."""
    if key is None:
        _walks.forget(branch)
    elif (walks := _walks.get(branch)) is not None:
        walks.pop(key, None)


def walk_count() -> int:
    """Number of branches with a kept walk (for tests and the benchmark)."""
    return len(_walks)
