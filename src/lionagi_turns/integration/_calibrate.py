"""The provider's count of each installed request, written where the next compile reads it.

Contract:

- ``note_reported(record, total, model)`` (called once the call settled, before its record is
  completed; ``total`` the input tokens the response reported, ``_capture.reported_input``;
  ``model`` the payload's) adds ``{"input": total, "model": model}``
  under ``"reported"`` to the ceiling record of the instruction the call was compiled for,
  when that record is the very one this call's compile wrote (its ``used`` is the record's),
  and to the capture record's copy of it. A call compiled without a ceiling, or whose
  response reports no input count (None), writes nothing. The record lives in the
  instruction's metadata, so ``Branch.to_dict``/``from_dict`` keeps it; Amendment 1's next
  compile reads it (``profiles.amendment1._calibration``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lionagi_turns.integration._capture_record import CallRecord

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = ("note_reported",)


def note_reported(record: CallRecord, total: int | None, model: str | None) -> None:
    """Record the provider's count of ``record``'s request (see the contract)."""
    from lionagi_turns.profiles.amendment1._calibration import REPORTED
    from lionagi_turns.profiles.amendment1._ceiling import CEILING_KEY

    if record.ceiling is None or total is None:
        return
    metadata: Any = getattr(record.compiled.instruction, "metadata", None)
    written: Mapping[str, object] | None = (
        metadata.get(CEILING_KEY) if isinstance(metadata, dict) else None
    )
    report = {"input": total, "model": model}
    if isinstance(written, dict) and written.get("used") == record.ceiling.get("used"):
        written[REPORTED] = dict(report)
    record.ceiling[REPORTED] = report
