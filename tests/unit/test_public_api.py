"""The public API is exactly what docs/usage.md's "Public API" section promises (httpx-style
pin), and 0.1's moved import paths still work with a DeprecationWarning."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import lionagi_turns
import lionagi_turns.amendment1
import lionagi_turns.integration
from lionagi_turns import _moved

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


def test_every_moved_path_imports_the_new_module_with_a_deprecation_warning() -> None:
    # A fresh interpreter, so no old name already sits in sys.modules.
    code = (
        "import importlib, json, warnings\n"
        "import lionagi_turns\n"
        "from lionagi_turns._moved import MOVED\n"
        "seen = {}\n"
        "for old, new in MOVED.items():\n"
        "    with warnings.catch_warnings(record=True) as caught:\n"
        "        warnings.simplefilter('always')\n"
        "        module = importlib.import_module('lionagi_turns.' + old)\n"
        "    target = importlib.import_module('lionagi_turns.' + new)\n"
        "    seen[old] = [module is target, target.__spec__.name,\n"
        "                 [str(w.message) for w in caught if w.category is DeprecationWarning]]\n"
        "print(json.dumps(seen))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    seen = json.loads(out)
    assert set(seen) == set(_moved.MOVED)
    for old, (same, spec_name, warned) in seen.items():
        new = f"lionagi_turns.{_moved.MOVED[old]}"
        assert same, old
        assert spec_name == new, old
        assert len(warned) == 1 and warned[0].startswith(f"lionagi_turns.{old} moved to {new};")


def test_unknown_submodules_are_not_served() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("lionagi_turns.no_such_module")
