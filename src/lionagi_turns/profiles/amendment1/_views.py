"""D7: history ``left_out`` names every message the active view excludes but the record keeps.

lionagi 0.36's context tool removes messages from the active view
(``metadata["current_progression"]``) by ``evict``/``evict_action_results`` and by
``compact``, and records neither which action did it nor which messages a summary stands for.

- ``record_context_tool(bind)`` wraps ``ContextTool.bind`` (installed by
  ``install(profile="amendment1")``): after a successful ``evict``, ``evict_action_results``
  or ``compact`` the messages that left the active view are written, with reason ``evicted``
  or ``compacted``, into ``branch.metadata[EXCLUSIONS_KEY]`` (``{message id: reason}``, plain
  JSON, so it is saved and reloaded with the branch); ``restore`` removes the restored ids.
- ``view_exclusions(branch, progression)``: with ``progression`` None (the active view), one
  ``LeftOut`` per record-kept message the view excludes, in record order. ``System`` and
  role-unset records never render as history and are not named. The reason is the recorded
  one; an exclusion with no record (a branch changed without the wrapper) reads as
  ``evicted`` (every exclusion is an eviction from the view; only the wrapper can tell a
  compaction apart) and ``unrecorded`` lists it. An explicit ``progression`` is the caller's
  own selection, so it names no exclusion.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from itertools import compress
from typing import TYPE_CHECKING, TypeVar
from uuid import UUID

from lionagi.protocols.messages import Message, MessageRole, System

from lionagi_turns.core.consistent import read_order
from lionagi_turns.profiles.amendment1._contracts import LeftOut, LeftOutReason

if TYPE_CHECKING:
    from lionagi.protocols.action.tool import Tool
    from lionagi.session.branch import Branch
    from lionagi.tools.context.context import ContextTool

__all__ = ("EXCLUSIONS_KEY", "ViewExclusions", "record_context_tool", "view_exclusions")

EXCLUSIONS_KEY = "lionagi_turns.view_exclusions"
_INT = operator.attrgetter("int")
_REASON = {"evict": "evicted", "evict_action_results": "evicted", "compact": "compacted"}

_Id = TypeVar("_Id", bound=Hashable)
# ``ContextTool.bind``: the tool bound to one branch
Bind = Callable[["ContextTool", "Branch"], "Tool"]


@dataclass(frozen=True, slots=True)
class ViewExclusions:
    """The view's exclusions as history ``left_out`` entries; ``unrecorded`` names those whose
    reason was read by the fallback (no source record)."""

    left_out: tuple[LeftOut, ...]
    unrecorded: tuple[str, ...]


def view_exclusions(branch: Branch, progression: tuple[UUID, ...] | None) -> ViewExclusions:
    if progression is not None or "current_progression" not in branch.metadata:
        return ViewExclusions((), ())
    pile = branch.msgs.messages  # type: ignore[has-type]
    recorded = branch.metadata.get(EXCLUSIONS_KEY)
    recorded = recorded if isinstance(recorded, dict) else {}
    left_out: list[LeftOut] = []
    unrecorded: list[str] = []
    table = pile.collections  # the record order is the pile's own progression
    with pile.lock:  # both orders as of one moment (``core.consistent.read_order``)
        order = read_order(pile, branch.msgs.progression)
        view = read_order(pile, branch.progression)
    for uid in _outside(order, view):
        msg = table.get(uid)
        if msg is None:  # what the pile itself answers (skip, or its ItemNotFoundError)
            if uid not in pile:
                continue
            msg = pile[uid]
        if isinstance(msg, System) or (
            isinstance(msg, Message) and type(msg)._role == MessageRole.UNSET
        ):
            continue
        name = str(uid)
        found = recorded.get(name)
        reason: LeftOutReason = "compacted" if found == "compacted" else "evicted"
        if found not in ("evicted", "compacted"):
            unrecorded.append(name)
        left_out.append(LeftOut(name, reason))
    return ViewExclusions(tuple(left_out), tuple(unrecorded))


def _outside(order: Sequence[_Id], view: Sequence[_Id]) -> list[_Id]:
    """The items of ``order`` not in ``view``, in order. Exact UUIDs (the usual case) are
    compared by their integers (UUID equality), in one pass each; anything else as values."""
    if set(map(type, order)) <= {UUID} and set(map(type, view)) <= {UUID}:
        seen = set(map(_INT, view))
        return list(compress(order, map(operator.not_, map(seen.__contains__, map(_INT, order)))))
    members = set(view)
    return [uid for uid in order if uid not in members]


def _record(branch: Branch, before: Sequence[UUID], action: str) -> None:
    after = set(branch.progression)
    record = branch.metadata.get(EXCLUSIONS_KEY)
    record = dict(record) if isinstance(record, dict) else {}
    if action == "restore":
        for uid in after:
            record.pop(str(uid), None)
    else:
        for uid in before:
            if uid not in after:
                record[str(uid)] = _REASON[action]
    branch.metadata[EXCLUSIONS_KEY] = record


def record_context_tool(bind: Bind) -> Bind:
    """``ContextTool.bind`` whose tool records each view exclusion at its source."""

    @functools.wraps(bind)
    def recording_bind(self: ContextTool, branch: Branch) -> Tool:
        tool = bind(self, branch)
        inner = tool.func_callable

        @functools.wraps(inner)
        async def context_tool(action: str, *args: object, **kwargs: object) -> object:
            before = list(branch.progression)
            result = await inner(action, *args, **kwargs)
            if (action in _REASON or action == "restore") and (
                isinstance(result, dict) and result.get("success")
            ):
                _record(branch, before, action)
            return result

        return tool.model_copy(update={"func_callable": context_tool})

    recording_bind.__lionagi_turns_recording__ = True  # type: ignore[attr-defined]
    return recording_bind
