"""ADR-0007 D5/D6: lionagi 0.36's call surfaces routed through the compiler.

With a lionagi other than 0.36.x this module still imports: ``install()``, ``uninstall()``,
``installed()`` and ``is_installed()`` raise ``IntegrationError`` naming the installed and the
supported versions, and every other name raises it on access (``lionagi_turns.core.support``).
"""

from typing import TYPE_CHECKING

from lionagi_turns.core.support import IntegrationError, unsupported_lionagi, unsupported_module

if TYPE_CHECKING or unsupported_lionagi() is None:
    from lionagi_turns.integration._adapters import (
        context_blocks_from_report,
        legacy_progression,
        progression_ids,
        turn_request_from_param,
    )
    from lionagi_turns.integration._capture import capture, last_request
    from lionagi_turns.integration._capture_record import CallRecord
    from lionagi_turns.integration._install import (
        TurnsCompatibilityWarning,
        build_instruction,
        install,
        installed,
        is_installed,
        prepare_run_kwargs,
        propagate_structure,
        uninstall,
    )
    from lionagi_turns.integration._registry import register_stages
    from lionagi_turns.integration._unanswered import mark_unanswered_turns

__all__ = (
    "CallRecord",
    "IntegrationError",
    "TurnsCompatibilityWarning",
    "build_instruction",
    "capture",
    "context_blocks_from_report",
    "install",
    "installed",
    "is_installed",
    "last_request",
    "legacy_progression",
    "mark_unanswered_turns",
    "prepare_run_kwargs",
    "progression_ids",
    "propagate_structure",
    "register_stages",
    "turn_request_from_param",
    "uninstall",
)

if not TYPE_CHECKING and unsupported_lionagi() is not None:
    __getattr__ = unsupported_module(
        unsupported_lionagi(), __all__, ("install", "installed", "is_installed", "uninstall")
    )
