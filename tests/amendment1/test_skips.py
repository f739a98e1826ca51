"""D7 / ADR-0008 delta 2: ``TurnRequest.skipped`` read from lionagi 0.36's registry and report,
exact where the registry's arithmetic decides, otherwise said to be undetermined."""

from __future__ import annotations

import anyio
import pytest
from lionagi import Branch
from lionagi.protocols.context_providers import ContextProviderRegistry, ProviderReport

from lionagi_turns.amendment1 import LeftOut, SkipReading, read_skips


class Fixed:
    def __init__(self, text: str) -> None:
        self.text = text

    async def provide(self, branch, instruction):
        return self.text


@pytest.fixture(autouse=True)
def _word_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """tiktoken cannot download o200k here: lionagi's tokenizer counts words instead."""
    from lionagi.service.token_calculator import TokenCalculator

    monkeypatch.setattr(
        TokenCalculator, "tokenize", staticmethod(lambda text, **_: len(text.split()))
    )


def _gather(registry: ContextProviderRegistry) -> ProviderReport:
    b = Branch(system="policy")
    ins = b.msgs.create_instruction(instruction="q")

    async def main():
        return await registry.gather(b, ins)

    return anyio.run(main)


def test_no_cap_means_the_total_budget_skipped_it() -> None:
    registry = ContextProviderRegistry(budget=3)
    registry.register(Fixed("a b c"), name="first")
    registry.register(Fixed("d e"), name="second")
    report = _gather(registry)
    assert report.skipped == ["second"]
    reading = read_skips(registry, report, system_present=True)
    assert reading.skipped == (LeftOut("second", "section_budget"),)
    assert reading.undetermined == ()


def test_a_cap_within_the_remaining_room_means_the_cap_skipped_it() -> None:
    registry = ContextProviderRegistry(budget=100)
    registry.register(Fixed("a b c d"), name="capped", max_tokens=2)
    report = _gather(registry)
    assert report.skipped == ["capped"]
    assert read_skips(registry, report, system_present=True).skipped == (
        LeftOut("capped", "per_provider_limit"),
    )


def test_a_negative_cap_skips_every_result() -> None:
    registry = ContextProviderRegistry()
    registry.register(Fixed("a"), name="neg", max_tokens=-1)
    report = _gather(registry)
    assert read_skips(registry, report, system_present=True).skipped == (
        LeftOut("neg", "per_provider_limit"),
    )


@pytest.mark.parametrize("text", ["a b c d e f", "a b c d"])
def test_a_cap_above_the_remaining_room_is_undetermined_either_way(text: str) -> None:
    registry = ContextProviderRegistry(budget=5)
    registry.register(Fixed("a b"), name="first", priority=1)
    registry.register(Fixed(text), name="open", max_tokens=5)
    report = _gather(registry)
    assert report.skipped == ["open"]  # over its cap (6 > 5) or over the room (4 > 3)
    reading = read_skips(registry, report, system_present=True)
    assert reading.skipped == ()
    assert reading.undetermined[0].name == "open"
    assert "does not keep the result's token count" in reading.undetermined[0].why


def test_priority_order_decides_the_room() -> None:
    registry = ContextProviderRegistry(budget=5)
    registry.register(Fixed("x y z w"), name="late", max_tokens=1)
    registry.register(Fixed("a b c d"), name="early", priority=5)
    report = _gather(registry)
    # "early" (4 tokens) is admitted first; "late"'s cap of 1 fits the room of 1
    assert read_skips(registry, report, system_present=True).skipped == (
        LeftOut("late", "per_provider_limit"),
    )


def test_a_systemless_report_has_no_registry_reason() -> None:
    registry = ContextProviderRegistry()
    registry.register(Fixed("a"), name="one")
    report = ProviderReport(skipped=list(registry.names))  # lionagi's systemless shape
    reading = read_skips(registry, report, system_present=False)
    assert reading.skipped == ()
    assert "no system message" in reading.undetermined[0].why


def test_a_repeated_name_is_undetermined() -> None:
    registry = ContextProviderRegistry(budget=1)
    registry.register(Fixed("a"), name="dup")
    registry.register(Fixed("b c"), name="dup")
    report = _gather(registry)
    reading = read_skips(registry, report, system_present=True)
    assert reading.skipped == () and "registered 2 times" in reading.undetermined[0].why


def test_nothing_skipped_reads_empty() -> None:
    registry = ContextProviderRegistry()
    registry.register(Fixed("a"), name="one")
    reading = read_skips(registry, _gather(registry), system_present=True)
    assert reading.skipped == () and reading.undetermined == ()


def test_an_empty_registry_means_no_pass_ran_so_an_old_report_is_not_read() -> None:
    stale = ProviderReport(skipped=["gone"])
    assert read_skips(None, stale, system_present=True) == read_skips(
        ContextProviderRegistry(), stale, system_present=True
    )
    assert read_skips(None, stale, system_present=True) == SkipReading((), ())
