"""Import paths of 0.1.0 modules that moved in 0.2.0, kept for one release.

``import lionagi_turns.<old>`` (and ``from lionagi_turns.<old> import x``) still works and
yields the module now at ``lionagi_turns.<new>``, with one ``DeprecationWarning`` naming the new
path. Only the names in ``MOVED`` are served; any other import is left to Python's own finders.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Any

__all__ = ("MOVED", "register")

_PACKAGE = __name__.rpartition(".")[0]

# old module (under lionagi_turns) -> where it lives now
MOVED: dict[str, str] = {
    "types": "core.contracts",
    "durable": "core.durable",
    "history": "core.history",
    "render": "core.render",
    "envelope": "core.envelope",
    "providers": "core.providers",
    "compiler": "core.pipeline",
    "adapters": "integration._adapters",
    "prepare_compat": "integration._prepare_compat",
    "legacy": "characterize.legacy",
    "differences": "characterize",
    "branch_io": "cli._load",
    "_cache": "memo.renders",
    "_fastyaml": "memo.yaml",
    "_switch": "memo.switch",
}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self._target = target
        self._own: tuple[Any, Any] = (None, None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = importlib.import_module(self._target)
        self._own = (module.__spec__, module.__loader__)
        return module

    def exec_module(self, module: ModuleType) -> None:
        """The target module is already executed; give back the identity the import machinery
        wrote over (``__spec__``, ``__loader__``), so the module stays what it was."""
        module.__spec__, module.__loader__ = self._own


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        package, _, leaf = fullname.rpartition(".")
        if package != _PACKAGE or leaf not in MOVED:
            return None
        new = f"{_PACKAGE}.{MOVED[leaf]}"
        warnings.warn(
            f"{fullname} moved to {new}; import the public names from {_PACKAGE} "
            "(the old path is removed in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


_FINDER = _MovedFinder()


def register() -> None:
    """Serve the old paths (idempotent)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_FINDER)
