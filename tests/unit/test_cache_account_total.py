"""``PromptCacheAccount.total``: sums one token figure over the calls that reported it, and
refuses any other name (a typo would otherwise read a flag or an id)."""

from __future__ import annotations

import pytest

from lionagi_turns import PromptCacheAccount, PromptCacheCall
from lionagi_turns.profiles.prompt_cache._account import FIGURES


def _call(read: int | None, output: int | None, *, changed: bool = False) -> PromptCacheCall:
    return PromptCacheCall(
        instruction_id="i",
        uncached_input=10,
        cache_read=read,
        cache_write_5m=None,
        cache_write_1h=0,
        cache_write_total=0,
        output=output,
        stable_changed=changed,
        conversation_changed=False,
        history_rewritten=False,
    )


def test_total_sums_a_figure_over_the_calls_that_reported_it() -> None:
    account = PromptCacheAccount((_call(5, 1), _call(None, 2), _call(7, None)))
    assert account.total("cache_read") == 12
    assert account.total("output") == 3
    assert account.total("cache_write_5m") == 0


def test_figures_are_exactly_the_calls_token_fields() -> None:
    fields = [f for f in PromptCacheCall.__dataclass_fields__ if f != "instruction_id"]
    assert list(FIGURES) == [f for f in fields if not f.endswith(("_changed", "_rewritten"))]


@pytest.mark.parametrize("name", ["stable_changed", "instruction_id", "cache_reads", ""])
def test_total_refuses_a_name_that_is_not_a_figure(name: str) -> None:
    account = PromptCacheAccount((_call(5, 1, changed=True),))
    with pytest.raises(ValueError, match=r"is not a token figure .* cache_read"):
        account.total(name)
