"""The lionagi call sites ``install()`` rebinds, and lionagi's originals it saved.

A leaf of ``integration``: it imports nothing else from this package, so every replacement can
reach lionagi's own function through ``original`` without importing ``_install``.

Contract:

- ``original(origin, name)`` is lionagi's own ``origin.name``: while installed, the object
  ``install()`` saved for that site; otherwise the current attribute of that module (or class,
  for a ``module:Class`` path).
- ``saved`` maps ``(site, name)`` to the original ``install()`` replaced; it is empty exactly
  when the integration is not installed. It is read and written only under ``lock``.
- ``lock`` is the integration's one lock (process-wide, re-entrant): ``install``,
  ``uninstall`` and ``installed`` hold it, and so do the installed-profile cell
  (``_registry``) and the warned-once table (``_warnings``). The capture file's append lock
  (``_capture_file``) guards file I/O only, and stays separate so a disk write never blocks
  a compile.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = (
    "ANTHROPIC",
    "BUDGET",
    "CHAT",
    "CONTEXT_TOOL",
    "FOLD",
    "HOOKS",
    "MESSAGES",
    "MSG_PREPARE",
    "NUDGE",
    "PARSE",
    "PREPARE",
    "RUN",
    "lock",
    "original",
    "original_token_budget",
    "saved",
    "site",
)

PREPARE = "lionagi.operations.chat._prepare"
CHAT = "lionagi.operations.chat.chat"
RUN = "lionagi.operations.run.run"
MESSAGES = "lionagi.protocols.messages"
MSG_PREPARE = "lionagi.protocols.messages.prepare"
PARSE = "lionagi.operations.parse.parse"
# A class attribute: ``module:Class`` (the Anthropic projection, ADR-0127 D5).
ANTHROPIC = "lionagi.providers.anthropic.messages:AnthropicMessagesEndpoint"
FOLD = "lionagi.agent.context_fold"
HOOKS = "lionagi.operations._api_hooks"
BUDGET = "lionagi.service.token_budget"
NUDGE = "lionagi.agent.nudge"
# A class attribute, rebound only while the Amendment 1 profile is installed (ADR-0007 D7).
CONTEXT_TOOL = "lionagi.tools.context.context:ContextTool"

lock = threading.RLock()
# (site, name) -> the lionagi original install() replaced; empty when not installed.
saved: dict[tuple[str, str], Any] = {}


def site(path: str) -> ModuleType | type:
    """The module ``path`` names, or the class of a ``module:Class`` path."""
    module, _, cls = path.partition(":")
    found = importlib.import_module(module)
    if not cls:
        return found
    owner: type = getattr(found, cls)
    return owner


def original(origin: str, name: str) -> Callable[..., Any]:
    """lionagi's original ``origin.name``, also while installed (then read from ``saved``)."""
    kept = saved.get((origin, name))
    if kept is not None:
        return kept
    fn: Callable[..., Any] = getattr(site(origin), name)
    return fn


def original_token_budget() -> Callable[..., Any]:
    """lionagi's own ``get_token_budget`` (also while installed)."""
    return original(BUDGET, "get_token_budget")
