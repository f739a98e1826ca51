"""ADR-0007 Amendment 1 (D7 section bounds, D8 section authority, the tool_results section) as
an opt-in compile profile. The default profile (``lionagi_turns.compile_chat_request``) is
unchanged; this package has its own contracts with the amended fields. ``InputCeiling`` bounds
a whole request with stepped truncation (old tool results cleared first with
``ToolResultClearing``); ``compile_for_prompt_cache`` composes the profile with
the ADR-0127 prompt-cache layout.

With a lionagi other than 0.36.x this module still imports, and each name raises
``IntegrationError`` on access (``lionagi_turns.core.support``).

Its names are those of ``lionagi_turns.profiles.amendment1`` (the profile package) and
``compile_for_prompt_cache``; this is their public path.
"""

from typing import TYPE_CHECKING

from lionagi_turns.core.support import unsupported_lionagi, unsupported_module

if TYPE_CHECKING or unsupported_lionagi() is None:
    from lionagi_turns.profiles.amendment1 import (
        CEILING_KEY,
        EXCLUSIONS_KEY,
        Calibration,
        Compaction,
        CompiledChatRequest,
        CompiledMessage,
        ContextBlock,
        InputCeiling,
        LeftOut,
        LeftOutReason,
        SectionAuthority,
        SectionBound,
        SectionBudgetRefused,
        SectionBudgets,
        SkipReading,
        ToolResultClearing,
        TurnRequest,
        UndeterminedSkip,
        UnknownToolWarning,
        ViewExclusions,
        bounds_rows,
        compile_chat_request,
        compile_report,
        decode_context_section,
        encode_context_section,
        exclusions_rows,
        last_skip_reading,
        marker,
        read_skips,
        view_exclusions,
    )
    from lionagi_turns.profiles.composed import compile_for_prompt_cache

__all__ = (
    "CEILING_KEY",
    "EXCLUSIONS_KEY",
    "Calibration",
    "Compaction",
    "CompiledChatRequest",
    "CompiledMessage",
    "ContextBlock",
    "InputCeiling",
    "LeftOut",
    "LeftOutReason",
    "SectionAuthority",
    "SectionBound",
    "SectionBudgetRefused",
    "SectionBudgets",
    "SkipReading",
    "ToolResultClearing",
    "TurnRequest",
    "UndeterminedSkip",
    "UnknownToolWarning",
    "ViewExclusions",
    "bounds_rows",
    "compile_chat_request",
    "compile_for_prompt_cache",
    "compile_report",
    "decode_context_section",
    "encode_context_section",
    "exclusions_rows",
    "last_skip_reading",
    "marker",
    "read_skips",
    "view_exclusions",
)

if not TYPE_CHECKING and unsupported_lionagi() is not None:
    __getattr__ = unsupported_module(unsupported_lionagi(), __all__, ())
