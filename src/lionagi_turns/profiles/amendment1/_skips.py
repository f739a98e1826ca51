"""D7/ADR-0008 delta 2: ``TurnRequest.skipped`` from lionagi 0.36's registry and report.

lionagi's ``ProviderReport.skipped`` names skipped providers without a reason. A reason is
filled only where the registry's own admission arithmetic (ADR-0008 D3) leaves one
possibility; every other skipped name is returned in ``undetermined`` with why, never guessed.

No registered provider (``registry`` None or empty): lionagi runs no pass and leaves an older
report in place, so nothing was skipped this turn. Otherwise, for a name in ``report.skipped``
whose registry entry is unique (the registry considers entries by descending priority,
registration order among equals, and admits a result when ``total + tokens <= budget``;
``total`` is the sum of the tokens ``report.fired`` records for the admitted entries considered
before it):

- no system message on the branch and the report is lionagi's systemless shape (every
  registered name skipped, none fired or failed): undetermined - no provider ran, which is
  neither registry reason;
- the name is registered more than once, or not registered: undetermined - the report
  cannot be correlated with one entry;
- ``max_tokens`` falsy (None or 0: no cap): ``section_budget`` - only the total can skip it;
- ``max_tokens`` negative: ``per_provider_limit`` - every count exceeds it;
- an entry admitted before it has a repeated name: undetermined - ``total`` is unknown;
- ``max_tokens <= budget - total``: ``per_provider_limit`` - a result within its cap would
  have been admitted;
- otherwise undetermined - the result's token count, which the report does not keep, decides
  between the two.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from lionagi_turns.profiles.amendment1._contracts import LeftOut

__all__ = ("SkipReading", "UndeterminedSkip", "read_skips")

SYSTEMLESS = (
    "the branch has no system message, so lionagi 0.36 ran no provider and reported every "
    "registered name as skipped; neither registry reason applies"
)
AMBIGUOUS_NAME = "registered {n} times; lionagi's report names cannot be matched to one entry"
AMBIGUOUS_TOTAL = (
    "a provider admitted before it is registered under a repeated name, so the budget it "
    "met cannot be computed from the report"
)
UNREGISTERED = "not registered in the branch's registry (it changed after the report was made)"
TOKENS_UNKNOWN = (
    "its result was over its cap ({cap}) or over the remaining total budget ({room}); the "
    "report does not keep the result's token count, which decides between the two"
)


@dataclass(frozen=True, slots=True)
class UndeterminedSkip:
    """A skipped provider whose reason lionagi 0.36's report does not determine."""

    name: str
    why: str


@dataclass(frozen=True, slots=True)
class SkipReading:
    """``skipped``: entries with an exactly determined reason (``TurnRequest.skipped``);
    ``undetermined``: the rest, with why."""

    skipped: tuple[LeftOut, ...]
    undetermined: tuple[UndeterminedSkip, ...]


def read_skips(registry: Any, report: Any, *, system_present: bool) -> SkipReading:
    """The reading of ``report.skipped`` against ``registry`` (see the module rules)."""
    skipped_names = list(getattr(report, "skipped", None) or ())
    if not skipped_names or not registry:
        # no registered provider: lionagi ran no pass this turn and its report is an older one
        return SkipReading((), ())
    entries = list(registry._entries)
    names = [e.name for e in entries]
    fired = list(getattr(report, "fired", None) or ())
    failed = list(getattr(report, "failed", None) or ())
    if not system_present and not fired and not failed and skipped_names == names:
        return SkipReading((), tuple(UndeterminedSkip(n, SYSTEMLESS) for n in skipped_names))

    counts = Counter(names)
    fired_tokens = {f["provider_name"]: f["tokens"] for f in fired}
    by_priority = sorted(entries, key=lambda e: e.priority, reverse=True)
    exact: list[LeftOut] = []
    open_: list[UndeterminedSkip] = []
    for name in skipped_names:
        if counts[name] != 1:
            why = AMBIGUOUS_NAME.format(n=counts[name]) if counts[name] else UNREGISTERED
            open_.append(UndeterminedSkip(name, why))
            continue
        entry = entries[names.index(name)]
        cap = entry.max_tokens
        if not cap:
            exact.append(LeftOut(name, "section_budget"))
            continue
        if cap < 0:
            exact.append(LeftOut(name, "per_provider_limit"))
            continue
        total = 0
        unclear = False
        for other in by_priority:
            if other is entry:
                break
            if other.name in fired_tokens:
                unclear = unclear or counts[other.name] != 1
                total += fired_tokens[other.name]
        if unclear:
            open_.append(UndeterminedSkip(name, AMBIGUOUS_TOTAL))
            continue
        room = registry.budget - total
        if cap <= room:
            exact.append(LeftOut(name, "per_provider_limit"))
        else:
            open_.append(UndeterminedSkip(name, TOKENS_UNKNOWN.format(cap=cap, room=room)))
    return SkipReading(tuple(exact), tuple(open_))
