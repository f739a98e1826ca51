"""The integration's one patch table and one lock: Amendment 1's ``ContextTool.bind`` is a target
of ``_patches.TARGETS`` (rebound only while that profile is installed, checked and restored like
every other target), its settings live in the installed cell, and no integration module keeps a
lock of its own besides the capture file's I/O lock."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Any

import pytest
from lionagi.tools.context.context import ContextTool

from lionagi_turns.amendment1 import InputCeiling, SectionBudgets
from lionagi_turns.integration import IntegrationError, _originals, _registry
from lionagi_turns.integration import _install as integration
from lionagi_turns.integration._patches import TARGETS, recording_bind, targets_for

LIONAGI_BIND = ContextTool.__dict__["bind"]
SRC = Path(__file__).resolve().parents[2] / "src" / "lionagi_turns"
SITE = "lionagi.tools.context.context:ContextTool"


def test_context_tool_bind_is_a_target_of_the_amendment1_profile_only() -> None:
    (bind,) = [t for t in TARGETS if t.name == "bind"]
    assert (bind.site, bind.origin, bind.profile) == (SITE, SITE, "amendment1")
    assert bind in targets_for("amendment1")
    assert bind not in targets_for("default")
    assert len(targets_for("default")) == len(TARGETS) - 1


def test_the_default_profile_leaves_bind_alone_and_amendment1_rebinds_and_restores_it() -> None:
    integration.install()
    assert ContextTool.__dict__["bind"] is LIONAGI_BIND
    assert (SITE, "bind") not in _originals.saved
    integration.uninstall()
    integration.install(profile="amendment1")
    assert ContextTool.__dict__["bind"] is recording_bind
    assert _originals.saved[(SITE, "bind")] is LIONAGI_BIND
    integration.uninstall()
    assert ContextTool.__dict__["bind"] is LIONAGI_BIND


def test_a_foreign_bind_is_refused_naming_what_is_there(monkeypatch: pytest.MonkeyPatch) -> None:
    def _foreign(self: Any, branch: Any) -> Any:
        return LIONAGI_BIND(self, branch)

    monkeypatch.setattr(ContextTool, "bind", _foreign)
    with pytest.raises(IntegrationError, match=rf"{SITE}\.bind is .*_foreign") as info:
        integration.install(profile="amendment1")
    assert "not lionagi" in str(info.value)
    assert not integration.is_installed()
    assert ContextTool.__dict__["bind"] is _foreign


def test_uninstall_refuses_when_a_later_patch_sits_on_bind() -> None:
    integration.install(profile="amendment1")

    def _later(self: Any, branch: Any) -> Any:
        return recording_bind(self, branch)

    ContextTool.bind = _later  # type: ignore[method-assign]
    try:
        with pytest.raises(IntegrationError, match=rf"{SITE}\.bind is .*_later"):
            integration.uninstall()
        assert integration.is_installed()
    finally:
        ContextTool.bind = recording_bind  # type: ignore[method-assign]
    integration.uninstall()
    assert ContextTool.__dict__["bind"] is LIONAGI_BIND


def test_the_settings_live_in_the_installed_cell() -> None:
    budgets, ceiling = SectionBudgets(system=50), InputCeiling(tokens=10_000)
    integration.install(profile="amendment1", budgets=budgets, ceiling=ceiling)
    cell = _registry.current()
    assert (cell.profile.name, cell.budgets, cell.ceiling) == ("amendment1", budgets, ceiling)
    integration.uninstall()
    assert _registry.current() == _registry.Installed(_registry.DEFAULT)
    profile = importlib.import_module("lionagi_turns.profiles.amendment1._integration")
    assert not hasattr(profile, "_state") and not hasattr(profile, "_lock")


def _module_locks(path: Path) -> list[str]:
    found = []
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        call = value.func if isinstance(value, ast.Call) else None
        if isinstance(call, ast.Attribute) and call.attr in {"Lock", "RLock"}:
            found.append(path.name)
    return found


def test_the_integration_has_one_lock_besides_the_capture_files_io_lock() -> None:
    profile = SRC / "profiles" / "amendment1" / "_integration.py"
    modules = [*sorted((SRC / "integration").glob("*.py")), profile]
    locks = [name for path in modules for name in _module_locks(path)]
    assert sorted(locks) == ["_capture_file.py", "_originals.py"]
    assert isinstance(_originals.lock, type(importlib.import_module("threading").RLock()))



def _mutable_module_values() -> dict[int, list[str]]:
    """Every integration module's top-level value that can change in place (containers,
    counters, mutable dataclass instances; not a module, function or class), by identity, with
    the ``module.name`` entries that hold it."""
    import dataclasses
    import itertools
    import pkgutil

    import lionagi_turns.integration as package

    found: dict[int, list[str]] = {}
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for name, value in vars(module).items():
            if name.startswith("__") or isinstance(value, type):
                continue
            if isinstance(value, (dict, list, set, bytearray, itertools.count)) or (
                dataclasses.is_dataclass(value)
                and not type(value).__dataclass_params__.frozen  # type: ignore[attr-defined]
            ):
                found.setdefault(id(value), []).append(f"{info.name}.{name}")
    return found


def test_the_integration_has_one_patch_table_one_state_value_and_nothing_else_mutable() -> None:
    """Process-wide tables live in ``_state.STATE``; the patch table is ``_originals.saved``."""
    from lionagi_turns.integration._state import STATE

    found = _mutable_module_values()
    assert set(found) == {id(_originals.saved), id(STATE)}, found
