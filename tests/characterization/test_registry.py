"""The intended-difference registry: shape, necessity of each entry, and failure detection."""

from __future__ import annotations

import re

import pytest
from lionagi import Branch
from scenarios import SCENARIOS, Scenario, by_id, request_for

from lionagi_turns import CompiledChatRequest, CompiledMessage, ContextBlock, TurnRequest
from lionagi_turns.characterize import REGISTRY, compare, registry_entry

from .test_matrix import FOCUSED_ENTRIES, run

_SLUG = re.compile(r"^[a-z]+(-[a-z]+)*$")


def test_entries_are_documented_and_unique():
    ids = [e.id for e in REGISTRY]
    assert len(set(ids)) == len(ids)
    for entry in REGISTRY:
        assert _SLUG.match(entry.id), entry.id
        assert re.fullmatch(r"D[1-6](\.[1-5])?", entry.adr_clause), entry
        assert re.fullmatch(
            r"intended-differences (§4\.(\d+)|§5)|architecture\.md, [A-Z][a-z ]+",
            entry.design_ref,
        ), entry
        assert "->" in entry.summary and "\n" not in entry.summary, entry


def test_registry_covers_every_design_item_that_reaches_a_payload_or_an_error():
    """intended-differences §4: every item but 9 (recorded instruction only) shows in messages
    or errors."""
    items = {int(e.design_ref.rsplit(".", 1)[1]) for e in REGISTRY if "§4." in e.design_ref}
    assert items == set(range(1, 14)) - {9}


def test_registry_entry_lookup_names_known_ids():
    assert registry_entry("fold-separators").adr_clause == "D2.4"
    with pytest.raises(KeyError, match="fold-separators"):
        registry_entry("no-such-entry")


def _declaring(entry_id: str) -> list[Scenario]:
    return [s for s in SCENARIOS if entry_id in s.intended]


@pytest.mark.parametrize("entry_id", [e.id for e in REGISTRY if e.id not in FOCUSED_ENTRIES])
def test_each_entry_is_needed(entry_id: str):
    """Without the entry, every scenario that declares it has an unexplained difference."""
    without = tuple(e for e in REGISTRY if e.id != entry_id)
    scenarios = _declaring(entry_id)
    assert scenarios, f"no scenario exercises {entry_id}"
    for scenario in scenarios:
        assert run(scenario).ok
        result = run(scenario, registry=without)
        assert not result.ok, f"{scenario.id} passes without {entry_id}"
        assert entry_id not in result.entries


def test_empty_registry_reports_each_differing_message():
    result = run(by_id("context-blocks-system"), registry=())
    assert result.entries == ()
    assert result.labels == {}
    assert len(result.unexplained) == 1
    assert result.unexplained[0].startswith("message[0] (user) content: first difference")


def test_labels_point_at_the_explained_message():
    result = run(by_id("plain-content-receives-results"))
    assert result.labels == {2: ("plain-content-sections",)}
    assert result.compiled is not None and result.legacy is not None
    assert result.compiled[:2] == result.legacy[:2]
    assert result.compiled[2] != result.legacy[2]


def _tampered(monkeypatch: pytest.MonkeyPatch, change) -> None:
    """Make compare's compiler return ``change(messages)`` instead of the real messages."""
    import lionagi_turns.characterize._compare as differences

    real = differences.compile_chat_request

    def fake(branch: Branch, request: TurnRequest) -> CompiledChatRequest:
        compiled = real(branch, request)
        return CompiledChatRequest(
            instruction=compiled.instruction,
            messages=tuple(change(list(compiled.messages))),
            provider_kwargs=compiled.provider_kwargs,
        )

    monkeypatch.setattr(differences, "compile_chat_request", fake)


def test_wrong_fold_separator_is_not_absorbed(monkeypatch: pytest.MonkeyPatch):
    """A fold joined by one newline instead of two is not what fold-separators predicts."""

    def one_newline(messages: list[CompiledMessage]) -> list[CompiledMessage]:
        first = messages[0]
        text = first.content
        assert isinstance(text, str) and "\n\n  Answer" in text
        return [CompiledMessage(first.role, text.replace("\n\n  Answer", "\n  Answer")),
                *messages[1:]]

    assert run(by_id("empty-system-guidance")).ok
    _tampered(monkeypatch, one_newline)
    result = run(by_id("empty-system-guidance"))
    assert not result.ok
    assert "fold-separators" not in result.entries


def test_changed_history_message_is_unexplained(monkeypatch: pytest.MonkeyPatch):
    def edit_assistant(messages: list[CompiledMessage]) -> list[CompiledMessage]:
        return [m if i != 1 else CompiledMessage(m.role, "Lyon.") for i, m in enumerate(messages)]

    _tampered(monkeypatch, edit_assistant)
    result = run(by_id("system-history-guidance"))
    assert not result.ok
    assert any(u.startswith("message[1] (assistant)") for u in result.unexplained)
    assert result.entries == ("fold-separators",)


def test_dropped_message_is_unexplained(monkeypatch: pytest.MonkeyPatch):
    _tampered(monkeypatch, lambda messages: messages[:-1])
    result = run(by_id("systemless-history"))
    assert not result.ok
    assert "legacy has 5 message(s), compiled has 4" in result.unexplained


def test_unregistered_compiled_error_is_unexplained(monkeypatch: pytest.MonkeyPatch):
    import lionagi_turns.characterize._compare as differences

    def boom(branch: Branch, request: TurnRequest) -> CompiledChatRequest:
        raise ValueError("not a registered error")

    monkeypatch.setattr(differences, "compile_chat_request", boom)
    result = run(by_id("empty-no-system"))
    assert not result.ok
    assert result.compiled_error == "ValueError: not a registered error"
    assert result.unexplained[0].startswith("outcomes differ: legacy returned messages")


def test_both_sides_raising_the_same_rule_is_not_a_difference():
    result = run(by_id("assistant-first-under-system"))
    assert result.ok and result.entries == ()
    assert result.legacy_error == (
        "ValueError: First message in progression must be an Instruction or System"
    )
    assert result.compiled_error is not None
    assert result.compiled_error == (
        "HistoryError: First message in progression must be an Instruction or System"
    )


def test_image_host_refusal_moves_from_rendering_to_the_adapter():
    """lionagi refuses a loopback image host while rendering; the compiler renders offline
    and check_image_hosts refuses it. 127.0.0.1 is an address literal: no DNS lookup."""
    url = "http://127.0.0.1/pixel.png"
    branch = Branch()
    request = TurnRequest(
        instruction=branch.msgs.create_instruction(instruction="Describe.", images=[url])
    )
    entry = registry_entry("image-host-check-deferred")

    result = compare(branch, request)
    assert result.ok, result.unexplained
    assert result.entries == (entry.id,)
    assert result.legacy_error is not None and "127.0.0.1" in result.legacy_error
    assert result.compiled is not None
    assert result.compiled[0]["content"][1]["image_url"]["url"] == url

    without = compare(branch, request, registry=tuple(e for e in REGISTRY if e is not entry))
    assert not without.ok


def test_reserved_key_through_the_request_builder_raises_the_adr_error():
    scenario = by_id("reserved-kwarg")
    branch = scenario.build()
    message = r"^provider_kwargs must not contain reserved key 'messages'$"
    with pytest.raises(ValueError, match=message):
        request_for(branch, scenario)


def test_keep_chomped_guidance_rewritten_inside_the_document() -> None:
    """Regression (found by test_random_histories): guidance ending in blank lines renders as a
    ``|+`` block; re-rendered alone it ends with YAML's ``...`` marker, which lionagi's emitter
    writes only at the end of a document, never before the next section."""
    branch = Branch()
    request = TurnRequest(
        instruction=branch.msgs.create_instruction(instruction="q", guidance=":\n\n"),
        context_blocks=(ContextBlock(":", ":"),),
    )
    result = compare(branch, request)
    assert result.ok, result.unexplained
    assert result.entries == ("systemless-context",)
