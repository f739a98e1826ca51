"""Shared by the hostile-input tests: a fingerprint of a branch that survives hostile values,
and a DNS trap.

``fingerprint(branch)`` is every stored record (id, kind, sender, recipient, metadata and each
content field), the branch metadata and its progression, written out as text by a walk that
never calls a value's ``__eq__``, ``__repr__`` or ``__hash__`` and marks a cycle instead of
following it, plus each stored content's identity and lionagi revision counter: equal
fingerprints before and after a compile mean no record, value or progression changed. It reads
the fields directly rather than through ``branch.to_dict()``, which pydantic cannot serialize
for some hostile values (one whose ``__eq__`` raises).
"""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from lionagi import Branch


class DNSAttempted(BaseException):
    """Raised by the trapped resolver; a BaseException so no ``except Exception`` hides it."""


@contextmanager
def no_dns(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    def trap(*args: Any, **kwargs: Any) -> Any:
        raise DNSAttempted(f"getaddrinfo{args!r}")

    with monkeypatch.context() as patch:
        patch.setattr(socket, "getaddrinfo", trap)
        patch.setattr(socket, "gethostbyname", trap)
        yield


def _canon(value: Any, open_ids: set[int], out: list[str]) -> None:
    kind = type(value)
    if kind in (str, int, float, bool, bytes) or value is None:
        out.append(f"{kind.__name__}:{value!r}" if kind is not int else f"int:{value.bit_length()}")
        if kind is int and value.bit_length() < 4000:
            out.append(str(value))
        return
    if isinstance(value, (dict, list, tuple, set, frozenset)):
        if id(value) in open_ids:
            out.append("<cycle>")
            return
        open_ids.add(id(value))
        out.append(f"{kind.__qualname__}(")
        # The base type's own iterator: a subclass's __iter__ may raise.
        base = next(b for b in (dict, list, tuple, set, frozenset) if isinstance(value, b))
        items = dict.items(value) if base is dict else base.__iter__(value)
        for item in items:
            if isinstance(value, dict):
                _canon(item[0], open_ids, out)
                out.append(":")
                _canon(item[1], open_ids, out)
            else:
                _canon(item, open_ids, out)
            out.append(",")
        out.append(")")
        open_ids.discard(id(value))
        return
    out.append(f"<{kind.__qualname__} at {id(value)}>")


def fingerprint(branch: Branch) -> tuple[str, tuple[Any, ...]]:
    out: list[str] = []
    _canon(dict(branch.metadata), set(), out)
    for m in branch.msgs.messages:
        out.append(f"|{m.id}:{type(m).__name__}:{m.sender}:{m.recipient}:")
        _canon(dict(m.metadata), set(), out)
        for f in dataclasses.fields(m.content):
            out.append(f";{f.name}=")
            _canon(getattr(m.content, f.name), set(), out)
    records = tuple(
        (m.id, type(m).__name__, id(m.content), getattr(m.content, "_revision", None))
        for m in branch.msgs.messages
    )
    return "".join(out), (tuple(branch.msgs.progression), records)
