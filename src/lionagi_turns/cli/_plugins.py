"""``LIONAGI_TURNS_STAGES``: the modules that register stage profiles before the CLI lists them.

Contract: ``load_stage_modules()`` imports each module named in the variable (comma-separated,
spaces ignored), in order, once per process; a module registers its profile with
``lionagi_turns.integration.register_stages`` when imported, and ``--profile`` then takes it.
A name that does not import exits 2 with one line naming it and the error.
"""

from __future__ import annotations

import importlib
import os
import sys

__all__ = ("ENV", "load_stage_modules")

ENV = "LIONAGI_TURNS_STAGES"


def load_stage_modules() -> None:
    """Import the modules ``LIONAGI_TURNS_STAGES`` names (module contract)."""
    for name in (n.strip() for n in os.environ.get(ENV, "").split(",")):
        if not name:
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:  # any failure is the same one line
            sys.stderr.write(
                f"lionagi-turns: {ENV} names {name!r}, which does not import: "
                f"{type(exc).__name__}: {exc}\n"
            )
            raise SystemExit(2) from None
