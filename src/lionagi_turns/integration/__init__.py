"""ADR-0007 D5/D6: lionagi 0.36's call surfaces routed through the compiler."""

from ._adapters import (
    context_blocks_from_report,
    legacy_progression,
    progression_ids,
    turn_request_from_param,
)
from ._install import (
    IntegrationError,
    TurnsCompatibilityWarning,
    build_instruction,
    install,
    installed,
    is_installed,
    prepare_run_kwargs,
    propagate_structure,
    uninstall,
)
from ._unanswered import mark_unanswered_turns

__all__ = (
    "IntegrationError",
    "TurnsCompatibilityWarning",
    "build_instruction",
    "context_blocks_from_report",
    "install",
    "installed",
    "is_installed",
    "legacy_progression",
    "mark_unanswered_turns",
    "prepare_run_kwargs",
    "progression_ids",
    "propagate_structure",
    "turn_request_from_param",
    "uninstall",
)
