"""The versioned JSON shape every ``--format json`` output shares.

Every object starts with ``schema`` (``"lionagi-turns/<shape>@<version>"``: ``compile``,
``check``, ``diff`` or ``branch-diff``), the package ``version`` that wrote it, and the branch's
``path``, ``view`` (where its stored view came from) and ``records`` (the number of records in
that view; an integer in every shape). The shapes are defined by the JSON Schema shipped at
``SCHEMA_FILE`` (draft 2020-12); ``SCHEMA_VERSION`` changes only when a field changes meaning
or type or is removed.
"""

from __future__ import annotations

from pathlib import Path

from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._load import LoadedBranch
from lionagi_turns.core.version import __version__

__all__ = ("SCHEMA_FILE", "SCHEMA_VERSION", "header", "schema_name")

SCHEMA_VERSION = 1
SCHEMA_FILE = Path(__file__).parent / "schema" / "lionagi-turns.schema.json"


def schema_name(shape: str) -> str:
    return f"lionagi-turns/{shape}@{SCHEMA_VERSION}"


def header(shape: str, loaded: LoadedBranch) -> JsonObject:
    """The leading fields of a ``shape`` object for ``loaded`` (module docstring)."""
    return {
        "schema": schema_name(shape),
        "version": __version__,
        "path": loaded.path,
        "view": loaded.view_name,
        "records": len(loaded.view),
    }
