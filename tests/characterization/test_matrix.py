"""Characterization matrix (ADR-0007 D6 step 1/4): every shared scenario against lionagi 0.36.

For each scenario the compiled request is compared with lionagi 0.36's own payload, computed
live. The test fails on any difference the registry does not explain, and on any mismatch
between the registry entries actually used and the ones the scenario declares. The compiled
payload (or the compiled error) is pinned with syrupy so a change shows as exact bytes.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from scenarios import SCENARIOS, Scenario, request_for

from lionagi_turns.characterize import REGISTRY, Comparison, compare

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def run(scenario: Scenario, registry: tuple[Any, ...] = REGISTRY) -> Comparison:
    branch = scenario.build()
    request = request_for(branch, scenario, provider_kwargs=False)
    return compare(
        branch, request, registry=registry, provider_kwargs=scenario.call.get("imodel_kw")
    )


def stable_ids(text: str | None) -> str | None:
    """Error text with each distinct UUID replaced by ``<id-N>`` in order of appearance."""
    if text is None:
        return None
    seen: dict[str, str] = {}
    return _UUID.sub(lambda m: seen.setdefault(m.group(0), f"<id-{len(seen) + 1}>"), text)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario_matches_legacy_up_to_registered_differences(scenario: Scenario, snapshot):
    result = run(scenario)

    assert result.ok, "\n".join(result.unexplained)
    assert len(set(result.entries)) == len(result.entries)
    assert set(result.entries) == set(scenario.intended), (
        f"entries used {result.entries} != declared {scenario.intended}"
    )
    assert (result.compiled is None) == (result.compiled_error is not None)
    assert snapshot == {
        "compiled": result.compiled,
        "compiled_error": stable_ids(result.compiled_error),
        "labels": result.labels,
    }


def test_catalogue_is_large_and_ids_unique():
    ids = [s.id for s in SCENARIOS]
    assert len(ids) >= 30
    assert len(set(ids)) == len(ids)


def test_every_declared_entry_exists():
    known = {e.id for e in REGISTRY}
    for scenario in SCENARIOS:
        assert set(scenario.intended) <= known, scenario.id


#: Entries with focused tests instead of catalogue scenarios: the image-host entry needs an http
#: URL (no hosts in the shared catalogue; test_registry.py), the hostile-input entries need
#: hostile values (tests/unit/test_hostile_registry.py).
FOCUSED_ENTRIES = frozenset(
    {"image-host-check-deferred", "image-url-normalised", "refused-values", "reloaded-system"}
)


def test_matrix_exercises_every_payload_and_error_entry_but_the_focused_ones():
    declared = {i for s in SCENARIOS for i in s.intended}
    assert declared == {e.id for e in REGISTRY} - FOCUSED_ENTRIES
