"""``LIONAGI_TURNS_STAGES``: the modules that register stage profiles before the CLI lists them.

Contract: ``load_stage_modules()`` imports each module named in the variable (comma-separated,
spaces ignored), in order, once per process; a module registers its profile with
``lionagi_turns.integration.register_stages`` when imported, and ``--profile`` then takes it.
A name that does not import exits 2 with one line naming it and the error.
``registered_stages(profile)``: the stages a ``--profile`` value names and whether the
prompt-cache layout lays them out.
"""

from __future__ import annotations

import importlib
import os
import sys

from lionagi_turns.core.stage import Stage
from lionagi_turns.integration._registry import stages_of

__all__ = ("ENV", "load_stage_modules", "registered_stages")

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


def registered_stages(profile: str) -> tuple[tuple[Stage, ...], bool]:
    """The stages of ``--profile`` ``profile`` when it is not one the CLI shows itself (a
    profile registered with ``register_stages``, alone or ``NAME+prompt-cache``; else
    ``()``), and whether the prompt-cache layout lays the request out."""
    base, _, layout = profile.partition("+")
    if base in ("default", "amendment1", "prompt-cache"):
        return (), profile == "prompt-cache"
    return stages_of(base) or (), layout == "prompt-cache"
