"""The profiles ``install(profile=...)`` looks up by name (``integration._registry``)."""

from __future__ import annotations

import pytest

import lionagi_turns
from lionagi_turns.integration import _install as integration
from lionagi_turns.integration import _registry


def test_the_prompt_cache_layout_is_refused_by_name_and_says_why() -> None:
    with pytest.raises(ValueError) as caught:
        lionagi_turns.install(profile="prompt-cache")
    message = str(caught.value)
    assert "selected for each call whose endpoint places the prompt cache" in message
    assert message.endswith("Install one of default, amendment1")
    unknown = r"^install\(profile='nope'\): choose one of default, amendment1$"
    with pytest.raises(ValueError, match=unknown):
        lionagi_turns.install(profile="nope")
    assert not integration.is_installed()


def test_the_seed_profile_is_also_installed_by_its_adr_name() -> None:
    lionagi_turns.install(profile="adr-0007")
    assert integration.is_installed()
    assert _registry.current().profile.name == "default"
    lionagi_turns.install(profile="default")  # the same profile: idempotent
    with pytest.raises(lionagi_turns.IntegrationError, match="installed with profile 'default'"):
        lionagi_turns.install(profile="amendment1")


def test_the_installed_profile_is_a_value_reset_by_uninstall() -> None:
    lionagi_turns.install(profile="amendment1")
    assert _registry.current().profile.name == "amendment1"
    lionagi_turns.uninstall()
    assert _registry.current().profile.name == "default"


def test_a_name_in_use_cannot_be_registered_again() -> None:
    taken = _registry.get("amendment1")
    with pytest.raises(ValueError, match="'amendment1' is already registered"):
        _registry.register(taken)
