"""Load a saved lionagi branch (the JSON of ``Branch.to_dict()``) for the CLI.

Contract of ``load_branch(path)``:

- Returns a ``LoadedBranch`` whose ``branch.progression`` (the compiler's default view, see
  ``history.select_ids``) is exactly the view the file stores: ``metadata.current_progression``
  when it is set, else ``messages.progression`` — missing and repeated ids included, so
  ``check`` and ``compile`` see what the file says, not what lionagi repaired on load.
- ``branch.msgs.system`` is the stored ``system`` message (lionagi 0.36's ``Branch.from_dict``
  leaves it ``None`` although the dict holds it, which would silently drop the system fold);
  ``system_lost_by_from_dict`` says lionagi's own reload left it out.
- Loading writes nothing: the branch's stored logs are not restored and its log manager never
  saves on exit, whatever ``LOG_*`` settings or ``.env`` files say.
- Every problem that keeps the file from being a lionagi 0.36 branch raises ``BranchLoadError``,
  a one-line message naming the file and what is wrong; no other exception escapes for bad input.

Repairs made only so lionagi accepts the file (listed in ``LoadedBranch.notes``): when
``messages.progression`` repeats an id, names an id with no stored message, or omits a stored
message, lionagi's ``Pile`` refuses it; it is loaded with the first occurrence of each stored id
(stored messages it omits appended), and the stored order is then put back as the branch's view.

The file is read bounded and parsed as strict JSON first (``_read``: regular files of at most
``max_bytes`` bytes only, no repeated keys, non-finite numbers, over-long integers, lone
surrogates or deep nesting). The stored ``chat_model`` and ``parse_model`` are not loaded (the
CLI never calls a model, and rebuilding one may run lionagi's provider plugin discovery, which
starts ``git``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

import lionagi
from lionagi.protocols.generic.progression import Progression
from lionagi.protocols.messages import System

from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._read import (
    DEFAULT_MAX_BYTES,
    MAX_DEPTH,
    BranchLoadError,
    one_line,
    parse_json,
    read_branch_file,
)

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = (
    "BRANCH_CLASS",
    "DEFAULT_MAX_BYTES",
    "MAX_DEPTH",
    "BranchLoadError",
    "LoadedBranch",
    "load_branch",
    "one_line",
    "parse_branch",
    "parse_json",
    "read_branch_file",
)

BRANCH_CLASS = "lionagi.session.branch.Branch"
LIONAGI_VERSION: str = getattr(lionagi, "__version__", "0.36")

ViewName = Literal["metadata.current_progression", "messages.progression"]


@dataclass(frozen=True, slots=True)
class LoadedBranch:
    """A loaded branch, the stored view it compiles (``view``, in stored order) and where that
    view came from, plus the repairs lionagi needed to load it."""

    branch: Branch
    path: str
    view: tuple[UUID, ...]
    view_name: ViewName
    notes: tuple[str, ...]
    #: The file holds a system message that lionagi's own ``Branch.from_dict`` left out of
    #: ``msgs.system`` (plain lionagi then sends no system text; install() and the CLI keep it).
    system_lost_by_from_dict: bool = False


def load_branch(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> LoadedBranch:
    """Read ``path`` and load it (see the module contract)."""
    return parse_branch(parse_json(read_branch_file(path, max_bytes), path), path)


def parse_branch(data: Any, path: str | Path = "<data>") -> LoadedBranch:
    """Load already-parsed ``Branch.to_dict(mode="json")`` data; ``path`` names it in errors."""
    _check_shape(data, path)
    collection_ids = _collection_ids(data, path)
    stored_order = _ids(data["messages"]["progression"]["order"], "messages.progression", path)
    view_name: ViewName = "messages.progression"
    view = stored_order
    current = data.get("metadata", {}).get("current_progression")
    if current is not None:
        if not isinstance(current, Mapping) or not isinstance(current.get("order"), list):
            raise BranchLoadError(
                path,
                "metadata.current_progression is not a saved Progression (an object with an "
                "'order' list); remove it or save the branch again with lionagi 0.36",
            )
        view_name = "metadata.current_progression"
        view = _ids(current["order"], "metadata.current_progression", path)

    loadable, notes = _loadable(data, collection_ids, stored_order)
    branch = _from_dict(loadable, path)
    lost = branch.msgs.system is None and data.get("system") is not None
    _restore_system(branch, data, path)
    if tuple(_view_ids(branch)) != view:
        ids: Any = list(view)  # lionagi's annotation says deque; it validates and stores a list
        branch.metadata["current_progression"] = Progression(order=ids, name=None)
    return LoadedBranch(branch, str(path), view, view_name, notes, lost)


def _check_shape(data: object, path: str | Path) -> None:
    expected = "expected the JSON object lionagi's Branch.to_dict() writes"
    if not isinstance(data, dict):
        raise BranchLoadError(
            path, f"not a lionagi branch: the top-level JSON is {_json_kind(data)}; {expected}"
        )
    metadata = data.get("metadata")
    lion_class = metadata.get("lion_class") if isinstance(metadata, dict) else None
    if lion_class is None:
        raise BranchLoadError(path, f"not a lionagi branch: no metadata.lion_class; {expected}")
    if lion_class != BRANCH_CLASS:
        if isinstance(lion_class, str) and lion_class.endswith(".Branch"):
            raise BranchLoadError(
                path,
                f"a branch of another lionagi version (class {lion_class!r}, lionagi "
                f"{LIONAGI_VERSION} saves {BRANCH_CLASS!r}); re-save it with lionagi "
                f"{LIONAGI_VERSION}",
            )
        raise BranchLoadError(
            path, f"not a lionagi branch: it is a saved {lion_class!r}; {expected}"
        )
    messages = data.get("messages")
    if (
        not isinstance(messages, dict)
        or not isinstance(messages.get("collections"), list)
        or not isinstance(messages.get("progression"), dict)
        or not isinstance(messages["progression"].get("order"), list)
    ):
        raise BranchLoadError(
            path,
            "not a lionagi 0.36 branch: 'messages' must be a saved Pile with a 'collections' "
            "list and a 'progression' holding an 'order' list (a branch of another lionagi "
            f"version? re-save it with lionagi {LIONAGI_VERSION})",
        )


def _collection_ids(data: JsonObject, path: str | Path) -> list[UUID]:
    ids = []
    for i, item in enumerate(data["messages"]["collections"]):
        if not isinstance(item, dict) or "id" not in item:
            raise BranchLoadError(
                path, f"messages.collections[{i}] is not a saved message (no 'id')"
            )
        ids.append(_uuid(item["id"], f"messages.collections[{i}].id", path))
    return ids


def _ids(order: Sequence[object], where: str, path: str | Path) -> tuple[UUID, ...]:
    return tuple(_uuid(item, f"{where}[{i}]", path) for i, item in enumerate(order))


def _uuid(value: object, where: str, path: str | Path) -> UUID:
    if isinstance(value, str):
        try:
            return UUID(value)
        except ValueError:
            pass
    raise BranchLoadError(path, f"{where} = {value!r} is not a message id (a UUID string)")


def _loadable(
    data: JsonObject, collection_ids: list[UUID], stored_order: tuple[UUID, ...]
) -> tuple[JsonObject, tuple[str, ...]]:
    """A shallow-copied dict lionagi accepts: no logs, a log manager that never auto-saves, and
    a pile progression that names each stored message exactly once, and no stored model."""
    loadable = dict(data)
    loadable.pop("logs", None)
    loadable.pop("chat_model", None)  # no model is loaded: see the module contract
    loadable.pop("parse_model", None)
    loadable["log_config"] = {"auto_save_on_exit": False}
    notes: list[str] = []
    stored = set(collection_ids)
    if len(set(stored_order)) == len(stored_order) and set(stored_order) == stored:
        return loadable, ()
    order = list(dict.fromkeys(uid for uid in stored_order if uid in stored))
    missing = [uid for uid in dict.fromkeys(stored_order) if uid not in stored]
    repeats = len(stored_order) - len(set(stored_order))
    unlisted = [uid for uid in collection_ids if uid not in set(order)]
    order.extend(unlisted)
    if missing:
        notes.append(
            f"messages.progression names {len(missing)} id(s) with no stored message"
        )
    if repeats:
        notes.append(f"messages.progression repeats {repeats} id(s)")
    if unlisted:
        notes.append(
            f"messages.progression omits {len(unlisted)} stored message(s); lionagi loads them "
            "at its end"
        )
    messages = dict(loadable["messages"])
    messages["progression"] = {**messages["progression"], "order": [str(u) for u in order]}
    loadable["messages"] = messages
    return loadable, tuple(notes)


def _from_dict(loadable: JsonObject, path: str | Path) -> Branch:
    from lionagi.session.branch import Branch

    try:
        return Branch.from_dict(loadable)
    except Exception as exc:  # any failure inside lionagi means "not loadable here"
        raise BranchLoadError(
            path,
            f"does not load with lionagi {LIONAGI_VERSION} (saved by another lionagi version, "
            "edited by hand, or holding a message class this process cannot import): "
            f"{type(exc).__name__}: {exc}",
        ) from None


def _restore_system(branch: Branch, data: JsonObject, path: str | Path) -> None:
    stored = data.get("system")
    if stored is None:
        return
    if not isinstance(stored, dict) or "id" not in stored:
        raise BranchLoadError(path, "'system' is not a saved System message (no 'id')")
    sid = _uuid(stored["id"], "system.id", path)
    msgs: Any = branch.msgs
    message = msgs.messages.collections.get(sid)
    if message is None:
        try:
            message = System.from_dict(stored)
        except Exception as exc:
            raise BranchLoadError(
                path, f"'system' does not load as a lionagi System message: {exc}"
            ) from None
    if not isinstance(message, System):
        raise BranchLoadError(
            path,
            f"'system' names message {sid}, which is a {type(message).__name__}, not a System",
        )
    branch.msgs.system = message


def _view_ids(branch: Branch) -> list[UUID]:
    return [getattr(item, "id", item) for item in branch.progression]


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null" if value is None else type(value).__name__
