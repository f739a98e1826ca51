"""``_fast.owned.PerObject``: one value per live object, by identity, gone with the object."""

from __future__ import annotations

import gc

from lionagi_turns.memo.identity import PerObject


class Owner:
    def __eq__(self, other: object) -> bool:  # equal to every Owner: identity must decide
        return isinstance(other, Owner)

    __hash__ = object.__hash__


def test_a_value_is_found_only_for_its_very_owner_and_replaced_whole() -> None:
    table: PerObject[str] = PerObject()
    a, b = Owner(), Owner()
    assert table.put(a, "first") and table.put(a, "second")
    assert (table.get(a), table.get(b), len(table)) == ("second", None, 1)
    assert table.setdefault(b, lambda: "made") == "made" and table.setdefault(b, str) == "made"
    table.forget(a)
    assert (table.get(a), table.get(b)) == (None, "made")


def test_an_entry_goes_with_its_owner() -> None:
    table: PerObject[list[int]] = PerObject()
    owner = Owner()
    slot = id(owner)
    table.put(owner, [1])
    del owner
    gc.collect()
    assert slot not in table and len(table) == 0 and table.dead() == 0


def test_an_owner_without_a_weak_reference_is_not_kept() -> None:
    table: PerObject[int] = PerObject()
    assert table.put(3, 1) is False and table.setdefault((1, 2), int) is None
    assert len(table) == 0


def test_a_collection_during_a_write_drops_an_entry_without_deadlock() -> None:
    """A write that allocates may trigger the collection that runs another entry's drop
    callback on the same thread, while the write holds the lock."""
    table: PerObject[object] = PerObject()
    cycle = Owner()
    cycle.me = cycle  # type: ignore[attr-defined]  # only the cyclic collector frees it
    table.put(cycle, "x")
    del cycle
    gc.disable()
    try:
        fresh = Owner()
        with table._lock:  # as inside put: the drop callback re-enters the lock
            gc.collect()
        assert table.put(fresh, "y") and len(table) == 1
    finally:
        gc.enable()
