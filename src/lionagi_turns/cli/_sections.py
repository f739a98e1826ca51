"""The sections of a request, for the CLI's views: ``core.sections`` (the measure lives in the
core so the integration's spans count a call's sections as ``compile`` does)."""

from __future__ import annotations

from lionagi_turns.core.sections import (
    SECTION_NAMES,
    Measured,
    MessageSize,
    count_tokens,
    fold_labels,
    measure,
    text_parts,
)

__all__ = (
    "SECTION_NAMES",
    "Measured",
    "MessageSize",
    "count_tokens",
    "fold_labels",
    "measure",
    "text_parts",
)
