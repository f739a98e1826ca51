"""The integration's process-wide state: one value, ``STATE``.

A leaf of ``integration``: it imports nothing from this package, not even for annotations, so
every module reaches the state without an import circle. The tables whose values are other
modules' types hold them as ``Any``; each owner module reads them through its typed functions.

Contract:

- Besides the patch table and the one lock (``_originals.saved``, ``_originals.lock``) and the
  capture file's append lock, ``STATE`` is the integration's only module-level mutable value.
  Each field names the module that owns it; no other module writes it.
- Per-call and per-task values are context variables in their own modules (they are not
  shared between tasks); per-branch values are slots of the branch memory
  (``memo.branch_memory``), dropped with their branch.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from uuid import UUID

if TYPE_CHECKING:
    import anyio

__all__ = ("STATE", "IntegrationState")


@dataclass(slots=True)
class IntegrationState:
    """Every process-wide table of the integration (module contract)."""

    # _registry: the profiles by registered name, every name or alias to its registered name,
    # and the installed cell (None: the default profile, installed with no settings).
    profiles: dict[str, Any] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)
    installed: Any = None
    # _install: how many ``installed()`` scopes are open, and whether the first one installed.
    scopes: int = 0
    scope_owned: bool = False
    # _warnings: the keys already warned once.
    warned: set[str] = field(default_factory=set)
    # _capture: the records of calls not settled yet, by number, and the numbers' source.
    calls: dict[int, Any] = field(default_factory=dict)
    call_numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    # _capture_file: the directory ``install(capture_dir=...)`` set (None: the environment's),
    # and the directories a write error was already warned for.
    capture_dir: Path | None = None
    capture_warned: set[str] = field(default_factory=set)
    # _otel: spans on (True), off (False), or as the environment says (None).
    otel: bool | None = None
    # _repair: every installed call's instruction not settled yet, and the repairs running,
    # by branch identity (a later repair of that branch waits for the event).
    in_flight: dict[UUID, Any] = field(default_factory=dict)
    repairing: dict[int, anyio.Event] = field(default_factory=dict)
    # _resume: ``sends_last_message_only``'s answer per endpoint class (a pure probe, kept).
    resumes: dict[type, bool] = field(default_factory=dict)


STATE = IntegrationState()

