"""The public API is exactly what docs/usage.md's "Public API" section promises (httpx-style
pin), and the 0.1 import paths dropped in 0.4.0 are gone."""

from __future__ import annotations

import importlib
import re
import typing
from pathlib import Path

import pytest

import lionagi_turns
import lionagi_turns.amendment1
import lionagi_turns.integration

USAGE = Path(__file__).resolve().parents[2] / "docs" / "usage.md"


def _promised() -> dict[str, set[str]]:
    """``{module: names}`` listed under the usage doc's "## Public API" heading."""
    text = USAGE.read_text(encoding="utf-8")
    section = text.split("\n## Public API\n", 1)[1].split("\n## ", 1)[0]
    promised: dict[str, set[str]] = {}
    for block in re.split(r"\n\n", section):
        head, _, body = block.partition(":\n")
        module = head.strip().strip("`")
        if module.startswith("lionagi_turns") and body:
            promised[module] = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", body))
    return promised


def test_the_docs_list_the_public_modules() -> None:
    assert set(_promised()) == {
        "lionagi_turns", "lionagi_turns.amendment1", "lionagi_turns.integration"
    }


@pytest.mark.parametrize(
    "module",
    [lionagi_turns, lionagi_turns.amendment1, lionagi_turns.integration],
    ids=lambda m: m.__name__,
)
def test_all_is_exactly_what_the_docs_promise(module) -> None:
    assert set(module.__all__) == _promised()[module.__name__]
    assert len(module.__all__) == len(set(module.__all__))


@pytest.mark.parametrize(
    "module",
    [lionagi_turns, lionagi_turns.amendment1, lionagi_turns.integration],
    ids=lambda m: m.__name__,
)
def test_every_public_name_is_defined_and_not_a_private_module(module) -> None:
    for name in module.__all__:
        value = getattr(module, name)
        assert not name.startswith("_")
        if typing.get_origin(value) is typing.Literal:  # a vocabulary alias (LeftOutReason)
            continue
        assert getattr(value, "__module__", "lionagi_turns").startswith("lionagi_turns")


# The 0.1 paths served until 0.3.0 (CHANGELOG 0.4.0 names each one's new place).
DROPPED_0_1_PATHS = (
    "types", "durable", "history", "render", "envelope", "providers", "compiler", "adapters",
    "prepare_compat", "legacy", "differences", "branch_io", "_cache", "_fastyaml", "_switch",
    "_moved",
)


@pytest.mark.parametrize("old", DROPPED_0_1_PATHS)
def test_the_dropped_0_1_paths_do_not_import(old: str) -> None:
    assert not (Path(lionagi_turns.__file__).parent / f"{old}.py").exists()
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"lionagi_turns.{old}")


def test_unknown_submodules_are_not_served() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("lionagi_turns.no_such_module")


def test_the_two_profile_packages_have_one_shape() -> None:
    """Each profile package: private modules only, a public ``__init__`` whose names are its
    stage and its API, defined in its own modules (or the core's, unchanged);
    ``lionagi_turns.amendment1`` re-exports Amendment 1's names as the same objects (plus the
    composition with the cache layout)."""
    import pkgutil

    import lionagi_turns.profiles.amendment1 as amendment1
    import lionagi_turns.profiles.prompt_cache as prompt_cache

    for package, stage in ((amendment1, "Amendment1"), (prompt_cache, "PromptCache")):
        modules = [m.name for m in pkgutil.iter_modules(package.__path__)]
        assert modules and all(name.startswith("_") for name in modules), modules
        assert stage in package.__all__
        for name in package.__all__:
            value = getattr(package, name)
            if typing.get_origin(value) is typing.Literal:  # a vocabulary alias (LeftOutReason)
                continue
            owner = getattr(value, "__module__", None)
            # a core contract the profile uses unchanged (CompiledMessage) is the core's own
            homes = (f"{package.__name__}._", "lionagi_turns.core.")
            mine = owner is None or owner.startswith(homes)
            assert mine, (name, owner)
    public = lionagi_turns.amendment1
    shared = set(public.__all__) - {"compile_for_prompt_cache"}
    assert shared == set(amendment1.__all__) - {"Amendment1"}
    assert all(getattr(public, n) is getattr(amendment1, n) for n in shared)
