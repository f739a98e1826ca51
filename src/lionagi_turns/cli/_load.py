"""Load a saved lionagi branch (the JSON of ``Branch.to_dict()``) for the CLI.

Contract of ``load_branch(path)``:

- Returns a ``LoadedBranch`` whose ``branch.progression`` (the compiler's default view, see
  ``history.select_ids``) is exactly the view the file stores: ``metadata.current_progression``
  when it is set, else ``messages.progression`` — missing and repeated ids included, so
  ``check`` and ``compile`` see what the file says, not what lionagi repaired on load.
- ``branch.msgs.system`` is the stored ``system`` message (lionagi 0.36's ``Branch.from_dict``
  leaves it ``None`` although the dict holds it, which would silently drop the system fold).
- Loading writes nothing: the branch's stored logs are not restored and its log manager never
  saves on exit, whatever ``LOG_*`` settings or ``.env`` files say.
- Every problem that keeps the file from being a lionagi 0.36 branch raises ``BranchLoadError``,
  a one-line message naming the file and what is wrong; no other exception escapes for bad input.

Repairs made only so lionagi accepts the file (listed in ``LoadedBranch.notes``): when
``messages.progression`` repeats an id, names an id with no stored message, or omits a stored
message, lionagi's ``Pile`` refuses it; it is loaded with the first occurrence of each stored id
(stored messages it omits appended), and the stored order is then put back as the branch's view.

Reading is bounded and refuses before it reads (``read_branch_file``): the path must name a
regular file (after following symlinks; a FIFO, a device such as ``/dev/zero`` or a socket is
refused without being opened for reading, so nothing blocks) of at most ``max_bytes`` bytes
(``DEFAULT_MAX_BYTES``, 64 MiB; the CLI's ``--max-bytes`` or ``LIONAGI_TURNS_MAX_BYTES``
raises it). The JSON must be strict (``parse_json``): no duplicate key in an object, no
``NaN``/``Infinity`` or number too large for a float, no integer of more digits than Python
converts (4,300 by default), no lone surrogate in a string, at most ``MAX_DEPTH`` levels of
nesting; each refusal names the JSON path. The stored ``chat_model`` and ``parse_model`` are not
loaded (the CLI never calls a model, and rebuilding one may run lionagi's provider plugin
discovery, which starts ``git``).
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from uuid import UUID

import lionagi
from lionagi.protocols.generic.progression import Progression
from lionagi.protocols.messages import System

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

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
MAX_DEPTH = 128

ViewName = Literal["metadata.current_progression", "messages.progression"]


class BranchLoadError(ValueError):
    """The file is not a lionagi 0.36 branch; ``str(error)`` is one line naming the file."""

    def __init__(self, path: str | Path, problem: str) -> None:
        self.path = str(path)
        self.problem = one_line(problem)
        super().__init__(f"{self.path}: {self.problem}")


@dataclass(frozen=True, slots=True)
class LoadedBranch:
    """A loaded branch, the stored view it compiles (``view``, in stored order) and where that
    view came from, plus the repairs lionagi needed to load it."""

    branch: Branch
    path: str
    view: tuple[UUID, ...]
    view_name: ViewName
    notes: tuple[str, ...]


def load_branch(path: str | Path, *, max_bytes: int = DEFAULT_MAX_BYTES) -> LoadedBranch:
    """Read ``path`` and load it (see the module contract)."""
    return parse_branch(parse_json(read_branch_file(path, max_bytes), path), path)


def read_branch_file(path: str | Path, max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``max_bytes`` bytes; checked
    before reading (see the module contract). BranchLoadError otherwise."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise BranchLoadError(path, "no such file") from None
    except OSError as exc:
        raise BranchLoadError(path, f"cannot be read ({exc.strerror or exc})") from None
    _check_file(path, info.st_mode, info.st_size, max_bytes)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise BranchLoadError(path, f"cannot be read ({exc.strerror or exc})") from None
    try:
        info = os.fstat(fd)  # the file opened, which may have been swapped since the stat
        _check_file(path, info.st_mode, info.st_size, max_bytes)
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except BlockingIOError:
        raise BranchLoadError(path, "cannot be read without blocking") from None
    except OSError as exc:
        raise BranchLoadError(path, f"cannot be read ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if size > max_bytes:
        _too_big(path, size, max_bytes, grew=True)
    return b"".join(chunks)


_FILE_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _check_file(path: str | Path, mode: int, size: int, max_bytes: int) -> None:
    if stat.S_ISDIR(mode):
        raise BranchLoadError(path, "is a directory, expected a branch JSON file")
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _FILE_KINDS if test(mode)), "not a regular file")
        raise BranchLoadError(
            path,
            f"is {kind}, not a regular file; save the branch to a file and pass that file",
        )
    if size > max_bytes:
        _too_big(path, size, max_bytes, grew=False)


def _too_big(path: str | Path, size: int, max_bytes: int, *, grew: bool) -> None:
    measured = f"grew past {max_bytes:,} bytes while being read" if grew else f"is {size:,} bytes"
    raise BranchLoadError(
        path,
        f"{measured}, over the limit of {max_bytes:,} bytes; raise it with --max-bytes N or "
        "LIONAGI_TURNS_MAX_BYTES=N if the file is a branch you trust",
    )


class _Refused:
    """A JSON value the strict parser refuses; reported with its path after parsing."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem


class _Duplicated(dict[str, Any]):
    """A JSON object that repeated a key (the last value kept, as ``json`` does)."""

    __slots__ = ("duplicates",)

    def __init__(self, pairs: dict[str, Any], duplicates: list[str]) -> None:
        super().__init__(pairs)
        self.duplicates = duplicates


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) == len(pairs):
        return obj
    seen: set[str] = set()
    duplicates: list[str] = []
    for key, _ in pairs:
        if key in seen:
            duplicates.append(key)
        seen.add(key)
    return _Duplicated(obj, duplicates)


def _float(text: str) -> Any:
    value = float(text)
    return value if math.isfinite(value) else _Refused(f"the number {text[:40]} overflows a float")


def _int(text: str) -> Any:
    try:
        return int(text)
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        return _Refused(f"an integer of {len(text.lstrip('-')):,} digits is too long")


def _constant(name: str) -> Any:
    return _Refused(f"{name} is not a JSON number (non-finite numbers are refused)")


_SURROGATE = re.compile("[\ud800-\udfff]")


def parse_json(raw: bytes, path: str | Path = "<data>") -> Any:
    """Strict UTF-8 JSON (see the module contract); BranchLoadError names the path inside the
    document of the first value it refuses."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BranchLoadError(path, f"is not UTF-8 text (byte {exc.start})") from None
    try:
        data = json.loads(
            text,
            object_pairs_hook=_object,
            parse_float=_float,
            parse_int=_int,
            parse_constant=_constant,
        )
    except json.JSONDecodeError as exc:
        raise BranchLoadError(
            path, f"is not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise BranchLoadError(path, _too_deep()) from None
    _check_values(data, path)
    return data


def _too_deep() -> str:
    return f"is nested more than {MAX_DEPTH} levels deep; a saved lionagi branch is not"


def _check_values(data: Any, path: str | Path) -> None:
    """Walk the parsed document once, iteratively, for the values ``parse_json`` refuses."""
    stack: list[tuple[Any, int, tuple[Any, ...]]] = [(data, 1, ())]
    while stack:
        value, depth, trail = stack.pop()
        if depth > MAX_DEPTH:
            raise BranchLoadError(path, _too_deep())
        if isinstance(value, str):
            if _SURROGATE.search(value):
                _refuse_at(path, trail, "holds a lone surrogate (not valid Unicode text)")
        elif isinstance(value, dict):
            if isinstance(value, _Duplicated):
                key = value.duplicates[0]
                _refuse_at(
                    path,
                    trail,
                    f"repeats the key {key[:60]!r} (JSON readers disagree on which value wins); "
                    "keep one",
                )
            for key, item in value.items():
                if _SURROGATE.search(key):
                    _refuse_at(path, (*trail, key), "has a key with a lone surrogate")
                stack.append((item, depth + 1, (*trail, key)))
        elif isinstance(value, list):
            stack.extend((item, depth + 1, (*trail, i)) for i, item in enumerate(value))
        elif isinstance(value, _Refused):
            _refuse_at(path, trail, value.problem)


def _refuse_at(path: str | Path, trail: tuple[Any, ...], problem: str) -> None:
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in trail).lstrip(".")
    raise BranchLoadError(path, f"{_escape(where) or 'the document'}: {problem}")


def _escape(text: str) -> str:
    return text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text


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
    _restore_system(branch, data, path)
    if tuple(_view_ids(branch)) != view:
        ids: Any = list(view)  # lionagi's annotation says deque; it validates and stores a list
        branch.metadata["current_progression"] = Progression(order=ids, name=None)
    return LoadedBranch(branch, str(path), view, view_name, notes)


def _check_shape(data: Any, path: str | Path) -> None:
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


def _collection_ids(data: dict[str, Any], path: str | Path) -> list[UUID]:
    ids = []
    for i, item in enumerate(data["messages"]["collections"]):
        if not isinstance(item, dict) or "id" not in item:
            raise BranchLoadError(
                path, f"messages.collections[{i}] is not a saved message (no 'id')"
            )
        ids.append(_uuid(item["id"], f"messages.collections[{i}].id", path))
    return ids


def _ids(order: list[Any], where: str, path: str | Path) -> tuple[UUID, ...]:
    return tuple(_uuid(item, f"{where}[{i}]", path) for i, item in enumerate(order))


def _uuid(value: Any, where: str, path: str | Path) -> UUID:
    if isinstance(value, str):
        try:
            return UUID(value)
        except ValueError:
            pass
    raise BranchLoadError(path, f"{where} = {value!r} is not a message id (a UUID string)")


def _loadable(
    data: dict[str, Any], collection_ids: list[UUID], stored_order: tuple[UUID, ...]
) -> tuple[dict[str, Any], tuple[str, ...]]:
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


def _from_dict(loadable: dict[str, Any], path: str | Path) -> Branch:
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


def _restore_system(branch: Branch, data: dict[str, Any], path: str | Path) -> None:
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


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "null" if value is None else type(value).__name__


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (line breaks included) as one space."""
    return " ".join(str(text).split())
