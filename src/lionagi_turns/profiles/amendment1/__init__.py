"""ADR-0007 Amendment 1 as the ``Amendment1`` stage: its public names.

The modules are private; these names are the profile's API (contracts with the amended
fields, the compile, the input ceiling and its tiers, the reports), re-exported unchanged by
``lionagi_turns.amendment1``, the public path, which adds the composition with the
prompt-cache layout (``compile_for_prompt_cache``, from ``profiles.composed``) and keeps
importing under a lionagi it does not support.
"""

from lionagi_turns.profiles.amendment1._calibration import Calibration
from lionagi_turns.profiles.amendment1._ceiling import CEILING_KEY, InputCeiling
from lionagi_turns.profiles.amendment1._clearing import ToolResultClearing, UnknownToolWarning
from lionagi_turns.profiles.amendment1._compile import compile_chat_request
from lionagi_turns.profiles.amendment1._contracts import (
    CompiledChatRequest,
    CompiledMessage,
    ContextBlock,
    LeftOut,
    LeftOutReason,
    SectionAuthority,
    SectionBound,
    SectionBudgetRefused,
    SectionBudgets,
    TurnRequest,
)
from lionagi_turns.profiles.amendment1._integration import last_skip_reading
from lionagi_turns.profiles.amendment1._report import (
    bounds_rows,
    compile_report,
    exclusions_rows,
)
from lionagi_turns.profiles.amendment1._sections import (
    decode_context_section,
    encode_context_section,
    marker,
)
from lionagi_turns.profiles.amendment1._skips import SkipReading, UndeterminedSkip, read_skips
from lionagi_turns.profiles.amendment1._stage import Amendment1
from lionagi_turns.profiles.amendment1._summary import Compaction
from lionagi_turns.profiles.amendment1._views import (
    EXCLUSIONS_KEY,
    ViewExclusions,
    view_exclusions,
)

__all__ = (
    "CEILING_KEY",
    "EXCLUSIONS_KEY",
    "Amendment1",
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
    "compile_report",
    "decode_context_section",
    "encode_context_section",
    "exclusions_rows",
    "last_skip_reading",
    "marker",
    "read_skips",
    "view_exclusions",
)
