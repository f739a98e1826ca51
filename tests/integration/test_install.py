"""install()/uninstall()/installed(): which names are rebound, identity on restore, refusals."""

from __future__ import annotations

import importlib
import threading

import lionagi
import pytest
from lionagi.agent import context_fold
from lionagi.agent import nudge as nudge_mod
from lionagi.operations.chat import _prepare
from lionagi.operations.chat import chat as chat_mod
from lionagi.operations.parse import parse as parse_mod
from lionagi.operations.run import run as run_mod
from lionagi.protocols import messages as messages_pkg
from lionagi.protocols.messages import prepare as prepare_mod
from lionagi.service import token_budget as budget_mod

import lionagi_turns
from lionagi_turns.integration import IntegrationError
from lionagi_turns.integration import _budget as budget
from lionagi_turns.integration import _estimate as estimate
from lionagi_turns.integration import _in_call as in_call
from lionagi_turns.integration import _install as integration
from lionagi_turns.integration import _prepare_compat as prepare_compat

SITES = [
    (chat_mod, "_prepare_run_kwargs", integration.prepare_run_kwargs),
    (run_mod, "_prepare_run_kwargs", integration.prepare_run_turn_kwargs),
    (chat_mod, "_build_instruction", integration.build_instruction),
    (chat_mod, "_apply_context_providers", integration.apply_context_providers),
    (run_mod, "_apply_context_providers", integration.apply_context_providers),
    (run_mod, "_build_instruction", integration.build_instruction),
    (messages_pkg, "prepare_messages_for_chat", prepare_compat.prepare_messages_for_chat),
    (prepare_mod, "prepare_messages_for_chat", prepare_compat.prepare_messages_for_chat),
    (parse_mod, "_try_propagate_structure", integration.propagate_structure),
    (run_mod, "run", integration.run_recording_outcome),
    (context_fold, "estimate_next_request_tokens", estimate.estimate_next_request_tokens),
    (chat_mod, "emit_api_pre_call", in_call.emit_api_pre_call),
    (run_mod, "emit_api_pre_call", in_call.emit_api_pre_call),
    (budget_mod, "get_token_budget", budget.get_token_budget),
    (nudge_mod, "get_token_budget", budget.get_token_budget),
]


def _snapshot() -> list[object]:
    return [getattr(module, name) for module, name, _ in SITES]


def test_install_rebinds_every_call_site_and_uninstall_restores_identity() -> None:
    originals = _snapshot()
    assert all(
        getattr(fn, "__module__", "").startswith("lionagi.") for fn in originals
    ), originals
    lionagi_turns.install()
    assert integration.is_installed()
    for module, name, replacement in SITES:
        assert getattr(module, name) is replacement, f"{module.__name__}.{name}"
    lionagi_turns.uninstall()
    assert not integration.is_installed()
    assert all(a is b for a, b in zip(_snapshot(), originals, strict=True))


def test_the_legacy_reference_is_never_touched() -> None:
    legacy = _prepare._prepare_run_kwargs
    build = _prepare._build_instruction
    lionagi_turns.install()
    assert _prepare._prepare_run_kwargs is legacy
    assert _prepare._build_instruction is build
    assert chat_mod._prepare_run_kwargs is not legacy


def test_install_and_uninstall_are_idempotent() -> None:
    originals = _snapshot()
    lionagi_turns.install()
    lionagi_turns.install()
    assert _snapshot() == [replacement for _, _, replacement in SITES]
    lionagi_turns.uninstall()
    lionagi_turns.uninstall()
    assert all(a is b for a, b in zip(_snapshot(), originals, strict=True))


def test_installed_context_manager_restores_and_respects_outer_install() -> None:
    originals = _snapshot()
    with lionagi_turns.installed():
        assert chat_mod._prepare_run_kwargs is integration.prepare_run_kwargs
        with lionagi_turns.installed():
            pass
        assert integration.is_installed(), "inner block must not uninstall the outer one"
    assert all(a is b for a, b in zip(_snapshot(), originals, strict=True))

    lionagi_turns.install()
    with lionagi_turns.installed():
        pass
    assert integration.is_installed(), "a block must not undo an install it did not make"


def test_installed_uninstalls_when_the_block_raises() -> None:
    with pytest.raises(RuntimeError, match="boom"), lionagi_turns.installed():
        raise RuntimeError("boom")
    assert not integration.is_installed()


def _foreign(*args: object, **kwargs: object) -> None:
    raise AssertionError("foreign patch must never be called")


@pytest.mark.parametrize(("module", "name", "_replacement"), SITES)
def test_foreign_patch_is_refused_and_nothing_changes(
    monkeypatch: pytest.MonkeyPatch, module: object, name: str, _replacement: object
) -> None:
    monkeypatch.setattr(module, name, _foreign)
    before = _snapshot()
    with pytest.raises(IntegrationError) as info:
        lionagi_turns.install()
    message = str(info.value)
    assert name in message
    assert "test_install._foreign" in message
    assert "0.36" in message
    assert not integration.is_installed()
    assert all(a is b for a, b in zip(_snapshot(), before, strict=True))


@pytest.mark.parametrize("version", ["0.37.0", "0.3.6", "1.0.0"])
def test_other_lionagi_version_is_refused(monkeypatch: pytest.MonkeyPatch, version: str) -> None:
    monkeypatch.setattr(lionagi, "__version__", version)
    with pytest.raises(IntegrationError, match=rf"lionagi {version}\b.*lionagi>=0.36,<0.37"):
        lionagi_turns.install()
    assert not integration.is_installed()


def test_installed_distribution_version_is_checked_too(monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.metadata.version

    def fake_version(name: str) -> str:
        return "0.40.1" if name == "lionagi" else real(name)

    monkeypatch.setattr(importlib.metadata, "version", fake_version)
    with pytest.raises(IntegrationError, match=r"0\.40\.1"):
        lionagi_turns.install()


def test_uninstall_refuses_when_a_later_patch_sits_on_top(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lionagi_turns.install()
    monkeypatch.setattr(run_mod, "_prepare_run_kwargs", _foreign)
    with pytest.raises(IntegrationError, match=r"run\.run\._prepare_run_kwargs.*_foreign"):
        lionagi_turns.uninstall()
    # nothing was restored: our other replacements are still in place
    assert chat_mod._prepare_run_kwargs is integration.prepare_run_kwargs
    monkeypatch.undo()  # puts our replacement back on top
    lionagi_turns.uninstall()
    assert chat_mod._prepare_run_kwargs is _prepare._prepare_run_kwargs
    assert run_mod._prepare_run_kwargs is _prepare._prepare_run_kwargs


def test_concurrent_install_uninstall_leaves_a_consistent_state() -> None:
    originals = _snapshot()
    replacements = [replacement for _, _, replacement in SITES]
    errors: list[BaseException] = []

    def worker(i: int) -> None:
        try:
            for _ in range(50):
                (lionagi_turns.install if i % 2 else lionagi_turns.uninstall)()
                # Read under the same lock: a torn state here means one install/uninstall
                # was not atomic with respect to the others.
                with integration._lock:
                    state = _snapshot()
                assert state in (originals, replacements), "torn install state observed"
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    lionagi_turns.uninstall()
    assert all(a is b for a, b in zip(_snapshot(), originals, strict=True))
