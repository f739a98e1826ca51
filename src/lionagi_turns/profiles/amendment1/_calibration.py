"""The input ceiling in the provider's own tokens: the offline measure calibrated by the usage
each response reported.

Contract (``read_calibration(branch, ids, key, policy)`` -> ``InForce``):

- A report is the ``"reported"`` entry of a ceiling record (``CEILING_KEY``) the integration
  writes once the call that record was compiled for settled: ``{"input": P, "model": name}``,
  ``P`` the input tokens the provider counted for that request, cache reads and writes
  included (``integration._calibrate``). Its ratio is ``P / used``, ``used`` the record's own
  measure of the same request. A ratio outside ``PLAUSIBLE`` is not a tokenizer's count of that
  request (a stub's fixed count, a count of characters) and is passed over.
- The newest ``Calibration.window`` plausible reports of the newest reporting model, among
  the ceiling records of the view's newest ``SCAN`` instructions (a bounded walk), make the
  calibration: its ``factor`` is the largest of their ratios times ``1 + Calibration.margin``
  (``window`` is at most ``SCAN``), and the ceiling then bounds
  ``used × factor``: the compile keeps ``used <= limit = floor(tokens / factor)``, so
  ``used × factor <= tokens``.
- Without a report (before any response, a CLI model that reports no usage) the calibration
  is the offline measure with ``Calibration.unreported_margin``:
  ``limit = tokens - ceil(tokens × margin)``; the default margin 0 keeps ``limit == tokens``,
  today's bound exactly.
- The low-water mark is mapped the same way (never above the limit). A ceiling with
  ``calibration=None`` is never calibrated: the offline measure, no margin.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal
from uuid import UUID

from lionagi.protocols.messages import Instruction

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = (
    "DEFAULT",
    "OFFLINE",
    "PLAUSIBLE",
    "REPORTED",
    "SCAN",
    "Calibration",
    "InForce",
    "check_policy",
    "read_calibration",
    "report_ratio",
)

REPORTED = "reported"  # the key of a ceiling record the integration adds once the call settled
PLAUSIBLE = (0.5, 2.0)  # the ratios a provider's tokenizer gives against o200k
SCAN = 16  # how many of the view's newest instructions are read for reports


@dataclass(frozen=True, slots=True)
class Calibration:
    """How an ``InputCeiling`` follows the provider's count (module contract): ``margin``, the
    safety margin on the reported ratio (0 <= margin < 1); ``window``, how many recent reports
    the largest ratio is taken over (1 to ``SCAN``); ``unreported_margin``, the share of the
    ceiling kept free while no report is known (0 <= margin < 1; 0: the offline measure
    exactly)."""

    margin: float = 0.05
    window: int = 4
    unreported_margin: float = 0.0

    def __post_init__(self) -> None:
        for name in ("margin", "unreported_margin"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or isinstance(value, bool):
                raise TypeError(f"Calibration.{name} must be a number, got {value!r}")
            if not 0 <= value < 1:
                raise ValueError(
                    f"Calibration.{name} must be at least 0 and below 1, got {value}; pass a "
                    "share such as 0.05"
                )
        window = self.window
        if not isinstance(window, int) or isinstance(window, bool) or not 1 <= window <= SCAN:
            raise ValueError(
                f"Calibration.window must be an int from 1 to {SCAN} (recent reports), got "
                f"{window!r}"
            )


@dataclass(frozen=True, slots=True)
class InForce:
    """The calibration a compile under a ceiling is in force with (module contract):
    ``source`` ``"reported"`` (``factor`` from ``ratios``, newest first, of ``model``'s
    reports; ``margin`` the safety margin) or ``"offline"`` (no report: ``margin`` is the
    unreported margin)."""

    source: Literal["reported", "offline"]
    factor: float
    margin: float
    ratios: tuple[float, ...] = ()
    model: str | None = None

    def limit(self, tokens: int) -> int:
        """The largest offline measure whose calibrated count is at most ``tokens``."""
        if self.source == "offline":
            return max(0, tokens - math.ceil(tokens * self.margin))
        return max(0, math.floor(tokens / self.factor))

    def record(self, tokens: int, low: int) -> dict[str, object]:
        """What the ceiling record of a ceiling of ``tokens`` (low-water mark ``low``) carries
        under ``"calibration"``."""
        return {
            "source": self.source,
            "factor": round(self.factor, 4),
            "margin": self.margin,
            "ratios": [round(r, 4) for r in self.ratios],
            "model": self.model,
            "limit": self.limit(tokens),
            "low_limit": min(self.limit(tokens), self.limit(low)),
        }


DEFAULT = Calibration()
OFFLINE = InForce("offline", 1.0, 0.0)  # never calibrated: the offline measure, no margin


def report_ratio(record: Mapping[str, object]) -> tuple[float, str | None] | None:
    """A ceiling record's plausible ratio and model (module contract), None without one."""
    report = record.get(REPORTED)
    used = record.get("used")
    if not isinstance(report, Mapping) or not isinstance(used, int) or not _count(used):
        return None
    reported = report.get("input")
    if not isinstance(reported, int) or not _count(reported):
        return None
    ratio = reported / used
    if not PLAUSIBLE[0] <= ratio <= PLAUSIBLE[1]:
        return None
    model = report.get("model")
    return ratio, model if isinstance(model, str) else None


def read_calibration(
    branch: Branch, ids: Sequence[UUID], key: str, policy: Calibration | None
) -> InForce:
    """The calibration a compile of the view ``ids`` is in force with, read from the ceiling
    records under ``key`` (``policy`` None: never calibrated, no margin)."""
    if policy is None:
        return OFFLINE
    offline = InForce("offline", 1.0, policy.unreported_margin)
    table: Mapping[UUID, object] = branch.msgs.messages.collections  # type: ignore[has-type]
    ratios: list[float] = []
    model: str | None = None
    seen = 0
    for at in range(len(ids) - 1, -1, -1):
        msg = table.get(ids[at])
        if not isinstance(msg, Instruction):
            continue
        seen += 1
        record = msg.metadata.get(key)
        found = report_ratio(record) if isinstance(record, dict) else None
        if found is not None and (not ratios or found[1] == model):
            model = found[1]
            ratios.append(found[0])
        if len(ratios) >= policy.window or seen >= SCAN:
            break
    if not ratios:
        return offline
    factor = max(ratios) * (1 + policy.margin)
    return InForce("reported", factor, policy.margin, tuple(ratios), model)


def check_policy(policy: object) -> None:
    """``TypeError`` unless ``policy`` (``InputCeiling.calibration``) is a Calibration or None."""
    if policy is not None and not isinstance(policy, Calibration):
        raise TypeError(
            "InputCeiling.calibration must be an amendment1.Calibration or None, got "
            f"{policy!r}; pass Calibration(...) or None (the offline measure only)"
        )


def _count(value: int) -> bool:
    return not isinstance(value, bool) and value > 0
