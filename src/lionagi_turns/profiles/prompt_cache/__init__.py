"""ADR-0127's prompt-cache profile as the ``PromptCache`` stage: its public names.

The modules are private; these names are the profile's API, pinned by the public-API test:
the stage, its compile (``compile_cached``, ``laid_out`` for a stage tuple ending with the
stage), what the compile returns (``CachedCompile``, ``CacheLayout``, ``IgnoredRecord``), the
record each sent instruction keeps (``SentRecord``, ``SegmentChanges``, ``RECORD_KEY``,
``read_record``), the blocks handed to lionagi's adapter (``SegmentedBlocks``) and the
cache account (D6).
"""

from lionagi_turns.profiles.prompt_cache._account import (
    PromptCacheAccount,
    PromptCacheCall,
    prompt_cache_account,
)
from lionagi_turns.profiles.prompt_cache._as_sent import IgnoredRecord
from lionagi_turns.profiles.prompt_cache._blocks import SegmentedBlocks
from lionagi_turns.profiles.prompt_cache._compile import (
    CachedCompile,
    CacheLayout,
    compile_cached,
    laid_out,
)
from lionagi_turns.profiles.prompt_cache._record import (
    RECORD_KEY,
    SegmentChanges,
    SentRecord,
    read_record,
)
from lionagi_turns.profiles.prompt_cache._stage import PromptCache

__all__ = (
    "RECORD_KEY",
    "CacheLayout",
    "CachedCompile",
    "IgnoredRecord",
    "PromptCache",
    "PromptCacheAccount",
    "PromptCacheCall",
    "SegmentChanges",
    "SegmentedBlocks",
    "SentRecord",
    "compile_cached",
    "laid_out",
    "prompt_cache_account",
    "read_record",
)
