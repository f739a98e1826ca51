"""The table of lionagi names ``install()`` rebinds, and the checks that each is lionagi's own.

Contract:

- ``TARGETS`` lists every ``(site, name)`` ``install()`` rebinds, with the module (or
  ``module:Class``) defining lionagi's original and this package's replacement. A target
  with a ``profile`` is rebound only while that profile is installed (``targets_for``):
  ``ContextTool.bind`` records lionagi's context-tool evictions for Amendment 1 only.
- ``check_target`` returns the site's current value when it is lionagi's own definition (its
  ``__module__`` and ``__qualname__`` are those of the defining module) and the site still
  holds it; otherwise it raises ``IntegrationError`` naming what is there instead.
- ``lionagi_version`` is lionagi's version when both the module and the installed distribution
  are 0.36.x; otherwise it raises ``IntegrationError`` naming both.
- ``fold_kwdefaults`` is ``ContextFold.__init__``'s keyword defaults (its ``estimate``, bound at
  definition time, is patched and checked like a target: ``FOLD_DEFAULT``).
"""

from __future__ import annotations

import importlib
import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lionagi_turns.core.support import REQUIREMENT, SUPPORTED_LIONAGI, IntegrationError, supports
from lionagi_turns.integration._anthropic import create_payload as anthropic_create_payload
from lionagi_turns.integration._budget import get_token_budget
from lionagi_turns.integration._capture import emit_api_post_call
from lionagi_turns.integration._estimate import estimate_next_request_tokens
from lionagi_turns.integration._in_call import emit_api_pre_call
from lionagi_turns.integration._originals import (
    ANTHROPIC,
    BUDGET,
    CHAT,
    CONTEXT_TOOL,
    FOLD,
    HOOKS,
    MESSAGES,
    MSG_PREPARE,
    NUDGE,
    PARSE,
    PREPARE,
    RUN,
    original,
    site,
)
from lionagi_turns.integration._prepare_compat import prepare_messages_for_chat
from lionagi_turns.integration._run import (
    apply_context_providers,
    prepare_run_kwargs,
    prepare_run_turn_kwargs,
    run_recording_outcome,
)
from lionagi_turns.integration._structure import build_instruction, propagate_structure
from lionagi_turns.profiles.amendment1._views import record_context_tool

if TYPE_CHECKING:
    from lionagi.protocols.action.tool import Tool
    from lionagi.session.branch import Branch
    from lionagi.tools.context.context import ContextTool

__all__ = (
    "FOLD_DEFAULT",
    "TARGETS",
    "Target",
    "check_target",
    "describe",
    "fold_kwdefaults",
    "lionagi_version",
    "recording_bind",
    "targets_for",
)


@dataclass(frozen=True, slots=True)
class Target:
    site: str  # module whose attribute is rebound
    name: str
    origin: str  # module defining lionagi's original
    replacement: Callable[..., object]
    profile: str | None = None  # rebound only while this profile is installed (None: always)


def _lionagi_bind(self: ContextTool, branch: Branch) -> Tool:
    """lionagi's own ``ContextTool.bind`` (the one ``install()`` saved)."""
    bind: Callable[[ContextTool, Branch], Tool] = original(CONTEXT_TOOL, "bind")
    return bind(self, branch)


# ContextTool.bind whose tool records each evict/compact/restore at its source (ADR-0007 D7).
recording_bind = record_context_tool(_lionagi_bind)


TARGETS: tuple[Target, ...] = (
    Target(CHAT, "_prepare_run_kwargs", PREPARE, prepare_run_kwargs),
    Target(RUN, "_prepare_run_kwargs", PREPARE, prepare_run_turn_kwargs),
    Target(CHAT, "_build_instruction", PREPARE, build_instruction),
    Target(CHAT, "_apply_context_providers", PREPARE, apply_context_providers),
    Target(RUN, "_apply_context_providers", PREPARE, apply_context_providers),
    Target(RUN, "_build_instruction", PREPARE, build_instruction),
    Target(MESSAGES, "prepare_messages_for_chat", MSG_PREPARE, prepare_messages_for_chat),
    Target(MSG_PREPARE, "prepare_messages_for_chat", MSG_PREPARE, prepare_messages_for_chat),
    Target(PARSE, "_try_propagate_structure", PARSE, propagate_structure),
    Target(RUN, "run", RUN, run_recording_outcome),
    Target(ANTHROPIC, "create_payload", ANTHROPIC, anthropic_create_payload),
    Target(FOLD, "estimate_next_request_tokens", FOLD, estimate_next_request_tokens),
    Target(CHAT, "emit_api_pre_call", HOOKS, emit_api_pre_call),
    Target(RUN, "emit_api_pre_call", HOOKS, emit_api_pre_call),
    Target(CHAT, "emit_api_post_call", HOOKS, emit_api_post_call),
    Target(RUN, "emit_api_post_call", HOOKS, emit_api_post_call),
    Target(BUDGET, "get_token_budget", BUDGET, get_token_budget),
    Target(NUDGE, "get_token_budget", BUDGET, get_token_budget),
    Target(CONTEXT_TOOL, "bind", CONTEXT_TOOL, recording_bind, profile="amendment1"),
)


def targets_for(profile: str) -> tuple[Target, ...]:
    """The targets ``install(profile=profile)`` rebinds, in table order."""
    return tuple(t for t in TARGETS if t.profile in (None, profile))

# ContextFold binds lionagi's estimate as the default of its keyword-only ``estimate`` parameter
# at definition time, so the module attribute alone does not reach it: install() swaps that
# default too (and uninstall() restores it), checked like every other target.
FOLD_DEFAULT = (FOLD, "ContextFold.__init__(estimate=)")


def fold_kwdefaults() -> dict[str, object]:
    """``ContextFold.__init__.__kwdefaults__`` (the live dict: writing to it patches)."""
    init = importlib.import_module(FOLD).ContextFold.__init__
    defaults: dict[str, object] = init.__kwdefaults__
    return defaults


def _qualname(path: str, name: str) -> tuple[str, str]:
    """The ``__module__`` and ``__qualname__`` lionagi's own definition has."""
    module, _, cls = path.partition(":")
    return module, f"{cls}.{name}" if cls else name


def lionagi_version() -> str:
    """lionagi's version, checked (see the module contract)."""
    import lionagi

    module_version = str(getattr(lionagi, "__version__", ""))
    try:
        dist_version = importlib.metadata.version("lionagi")
    except importlib.metadata.PackageNotFoundError:
        dist_version = module_version
    for version in (module_version, dist_version):
        if not supports(version):
            raise IntegrationError(
                f"lionagi-turns {SUPPORTED_LIONAGI}.x integration cannot patch lionagi "
                f"{version or '<unknown version>'} (lionagi.__version__={module_version!r}, "
                f"installed distribution {dist_version!r}); install {REQUIREMENT} or call "
                "compile_chat_request directly without install()"
            )
    return module_version


def check_target(target: Target, version: str) -> object:
    """The current value of the target name, verified to be lionagi's original."""
    origin_fn = getattr(site(target.origin), target.name, None)
    current = getattr(site(target.site), target.name, None)
    module, qualname = _qualname(target.origin, target.name)
    genuine = (
        callable(origin_fn)
        and getattr(origin_fn, "__module__", None) == module
        and getattr(origin_fn, "__qualname__", None) == qualname
    )
    if not genuine:
        raise IntegrationError(
            f"cannot install lionagi-turns: {target.origin}.{target.name} is "
            f"{describe(origin_fn)}, not lionagi {version}'s own definition. Another patch is "
            "active (undo it, or install lionagi-turns first), or this lionagi build differs "
            "from 0.36.x."
        )
    if current is not origin_fn:
        raise IntegrationError(
            f"cannot install lionagi-turns: {target.site}.{target.name} is "
            f"{describe(current)}, not lionagi {version}'s original "
            f"{target.origin}.{target.name}. Another patch is active (undo it, or install "
            "lionagi-turns first), or this lionagi build differs from 0.36.x."
        )
    return current


def describe(obj: object) -> str:
    """``module.qualname`` of ``obj``, or its repr."""
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if module and qualname:
        return f"{module}.{qualname}"
    return repr(obj)
