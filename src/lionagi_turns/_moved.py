"""Import paths of 0.1.0 modules that moved in 0.2.0, kept for one release.

``import lionagi_turns.<old>`` (and ``from lionagi_turns.<old> import x``) still works and
yields the module now at ``lionagi_turns.<new>``, with one ``DeprecationWarning`` naming the new
path. Each old path is a stub module (``lionagi_turns/<old>.py``) that calls ``serve``; no
import hook is installed, so every other import is Python's own. Only the names in ``MOVED``
have a stub.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from types import ModuleType

__all__ = ("MOVED", "serve")

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


def serve(fullname: str) -> ModuleType:
    """Warn once that ``fullname`` (a key of ``MOVED`` under this package) moved, and make
    the import of ``fullname`` yield the module at its new path (``sys.modules`` holds that
    very module under the old name)."""
    package, _, leaf = fullname.rpartition(".")
    if package != _PACKAGE or leaf not in MOVED:
        raise ValueError(f"{fullname} is not a moved 0.1 path (see lionagi_turns._moved.MOVED)")
    new = f"{_PACKAGE}.{MOVED[leaf]}"
    warnings.warn(
        f"{fullname} moved to {new}; import the public names from {_PACKAGE} "
        "(the old path is removed in the next release)",
        DeprecationWarning,
        stacklevel=3,  # the importer (warnings skips the import machinery's frames)
    )
    module = importlib.import_module(new)
    sys.modules[fullname] = module
    return module
