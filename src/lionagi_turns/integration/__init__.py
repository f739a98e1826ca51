"""ADR-0007 D5/D6: lionagi 0.36's call surfaces routed through the compiler."""

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

__all__ = (
    "IntegrationError",
    "TurnsCompatibilityWarning",
    "build_instruction",
    "install",
    "installed",
    "is_installed",
    "prepare_run_kwargs",
    "propagate_structure",
    "uninstall",
)
