"""``prompt_cache_account`` does work linear in the history: counted, not timed.

The count is every message reference the account handles: each message the branch's pile
hands it, plus each reference a slice of a list made in the account's module copies (a reply
searched for in ``messages[i + 1:]`` copies the rest of the history once per call)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, SupportsIndex

import pytest
from lionagi.protocols.generic.pile import Pile

from lionagi_turns import prompt_cache_account
from lionagi_turns.profiles.prompt_cache import _account as _cache_account

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_cache_account.py"


@pytest.fixture
def bench(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_cache_account_under_test", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    return module


class _Touches:
    count = 0


class _CountingList(list[Any]):
    """A list that adds to ``_Touches.count`` the references each of its slices copies."""

    def __getitem__(self, key: SupportsIndex | slice) -> Any:
        out = super().__getitem__(key)
        if isinstance(key, slice):
            _Touches.count += len(out)
        return out


@pytest.fixture
def touches(monkeypatch: pytest.MonkeyPatch) -> type[_Touches]:
    real_iter = Pile.__iter__

    def counted(self: Pile[Any]) -> Iterator[Any]:
        for item in real_iter(self):
            _Touches.count += 1
            yield item

    monkeypatch.setattr(Pile, "__iter__", counted)
    monkeypatch.setattr(_cache_account, "list", _CountingList, raising=False)
    _Touches.count = 0
    return _Touches


def test_account_work_grows_linearly_with_the_history(
    bench: ModuleType, touches: type[_Touches]
) -> None:
    counts = []
    for calls in (25, 200):
        branch = bench.build(calls)
        touches.count = 0
        account = prompt_cache_account(branch)
        counts.append((touches.count, len(branch.messages)))
        assert len(account.calls) == calls
        assert account.total("cache_read") == 900 * calls
    # (references handled, messages) at n and 8n calls: at most two references per message
    assert all(count <= 2 * messages for count, messages in counts), counts
