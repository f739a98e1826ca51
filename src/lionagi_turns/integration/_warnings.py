"""The integration's one-time warnings (``TurnsCompatibilityWarning``).

Contract: ``warn_once(key, message)`` warns at most once per process per ``key`` (the table of
keys is guarded by the integration's one lock, ``_originals.lock``);
``reset_warnings()`` forgets which keys warned (for tests). ``note_gaps`` warns the
prompt-cache gap once when an endpoint places the prompt cache but the call does not use the
layout (the seed profile is forced).
"""

from __future__ import annotations

import warnings

from lionagi_turns.integration._originals import lock
from lionagi_turns.integration._state import STATE

__all__ = (
    "PROMPT_CACHE_GAP",
    "REACT_RESUME_BLOCKS_GAP",
    "TurnsCompatibilityWarning",
    "note_gaps",
    "reset_warnings",
    "warn_once",
)


class TurnsCompatibilityWarning(UserWarning):
    """A lionagi behaviour the compiler does not reproduce bit this call (warned once)."""


PROMPT_CACHE_GAP = (
    "lionagi-turns: this model's endpoint places the prompt cache (ADR-0127, "
    "places_prompt_cache) but the seed profile is forced (seed_profile_forced()), so the "
    "system text is folded into the first instruction as ADR-0007 D2 step 4 says and no "
    "system_blocks are built. Requests stay correct but lose the cache placement."
)

REACT_RESUME_BLOCKS_GAP = (
    "lionagi-turns: a later ReAct round resumes a CLI session and carries context blocks; "
    "sending them would re-send the caller's ReAct context every round, so this round keeps "
    "lionagi's request and its context blocks do not reach the session (as in lionagi 0.36)."
)


def warn_once(key: str, message: str, *, stacklevel: int = 3) -> None:
    """Warn ``message`` as ``TurnsCompatibilityWarning`` unless ``key`` already warned."""
    with lock:
        if key in STATE.warned:
            return
        STATE.warned.add(key)
    warnings.warn(message, TurnsCompatibilityWarning, stacklevel=stacklevel)


def reset_warnings() -> None:
    """Forget which one-time warnings were issued (for tests)."""
    with lock:
        STATE.warned.clear()


def note_gaps(places_cache: bool, cache: bool) -> None:
    """Warn the prompt-cache gap once when the endpoint ``places_cache`` but the call does not
    use the layout (``cache`` False: only the forced seed profile loses it)."""
    if cache or not places_cache:
        return
    warn_once("prompt_cache", PROMPT_CACHE_GAP)
