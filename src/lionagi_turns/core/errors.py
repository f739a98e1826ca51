"""The compiler's refusals: one table, defect kind -> exception class, ADR sentence, hint.

Contract:

- ``DEFECT_RULES`` is the only place a history defect's exception class, its text and its next
  step are written; its order is the order the compiler raises kinds in (selection, then
  projection, then ordering). ``lionagi-turns check`` reads the same defects, unraised.
- Where ADR-0007 gives an exact error text, ``str(exc)`` is exactly it and nothing else; the
  positions and ids travel as ``exc.defects`` and as ``exc.__notes__`` lines (one per defect,
  then the next step), so tracebacks and the CLI still show them.
- Kinds the ADR gives no sentence for keep one specific message naming ids and positions and
  ending with the next step.
- Every refusal is a ``ValueError`` except an unknown message kind (``TypeError``, ADR D2 §2);
  the missing-ids error is also lionagi's ``NotFoundError``, which lionagi 0.36 raises there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from lionagi._errors import NotFoundError

__all__ = (
    "CONSECUTIVE_INSTRUCTIONS",
    "DEFECT_ORDER",
    "DEFECT_RULES",
    "FIRST_MESSAGE_RULE",
    "RESERVED_KEY_ERROR",
    "Defect",
    "DefectKind",
    "DefectRule",
    "HistoryError",
    "MissingIdsError",
    "UnknownMessageTypeError",
    "error_for",
    "raise_first",
    "with_notes",
)

# ADR-0007's exact texts (D2 §3 and D1).
CONSECUTIVE_INSTRUCTIONS = "Consecutive instructions require an intervening assistant response"
FIRST_MESSAGE_RULE = "First message in progression must be an Instruction or System"
RESERVED_KEY_ERROR = "provider_kwargs must not contain reserved key 'messages'"

DefectKind = Literal[
    "missing_id",
    "duplicate_id",
    "unknown_subtype",
    "consecutive_instructions",
    "first_not_instruction",
]


@dataclass(frozen=True, slots=True)
class Defect:
    """One reason the compiler would reject a history view: positions index the view."""

    kind: DefectKind
    message: str
    positions: tuple[int, ...]
    ids: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message": self.message,
            "positions": list(self.positions),
            "ids": list(self.ids),
        }


class HistoryError(ValueError):
    """A history view the compiler refuses; ``defects`` are all of the raised kind."""

    def __init__(self, message: str, defects: tuple[Defect, ...]) -> None:
        super().__init__(message)
        self.defects = defects


class MissingIdsError(HistoryError, NotFoundError):
    """Progression ids absent from ``branch.msgs.messages``: a ``ValueError`` as ADR-0007 D2 §1
    says, and lionagi's ``NotFoundError`` as lionagi 0.36 raises, so either ``except`` works."""

    def __init__(self, message: str, defects: tuple[Defect, ...]) -> None:
        NotFoundError.__init__(self, message, details={"ids": [d.ids[0] for d in defects]})
        self.defects = defects


class UnknownMessageTypeError(TypeError):
    """A record of a fixed-role kind the compiler has no rule for (ADR D2: never a fallback)."""

    def __init__(self, message: str, defects: tuple[Defect, ...]) -> None:
        super().__init__(message)
        self.defects = defects


@dataclass(frozen=True, slots=True)
class DefectRule:
    """How one defect kind is raised. ``message`` is the ADR's exact sentence (a ``str``: then
    ``str(exc)`` is it and the details are notes) or, for a kind the ADR gives no sentence for,
    the function building one specific message from the defects (the hint is appended)."""

    error: type[HistoryError] | type[UnknownMessageTypeError]
    message: str | Callable[[tuple[Defect, ...]], str]
    hint: str


def _details(defects: Iterable[Defect]) -> str:
    return "; ".join(d.message for d in defects)


def _missing(defects: tuple[Defect, ...]) -> str:
    ids = ", ".join(d.ids[0] for d in defects)
    return (
        f"{len(defects)} progression id(s) not found in branch.msgs.messages: {ids} "
        f"({_details(defects)})"
    )


DEFECT_RULES: dict[DefectKind, DefectRule] = {
    "missing_id": DefectRule(
        MissingIdsError,
        _missing,
        "Remove them from the progression or add the messages first.",
    ),
    "duplicate_id": DefectRule(
        HistoryError,
        lambda found: f"duplicate ids in progression: {_details(found)}",
        "A record may appear once; remove the repeats.",
    ),
    "unknown_subtype": DefectRule(
        UnknownMessageTypeError,
        lambda found: f"unsupported message kind in history: {_details(found)}",
        "Add an explicit compiler rule for it or leave it out of the progression.",
    ),
    "consecutive_instructions": DefectRule(
        HistoryError,
        CONSECUTIVE_INSTRUCTIONS,
        "await lionagi_turns.mark_unanswered_turns(branch) records an assistant marker after "
        "each unanswered instruction (install() does so before every call); or record an "
        "assistant response between them, or leave one out of the progression.",
    ),
    "first_not_instruction": DefectRule(
        HistoryError,
        FIRST_MESSAGE_RULE,
        "Start the progression at an instruction.",
    ),
}
DEFECT_ORDER: tuple[DefectKind, ...] = tuple(DEFECT_RULES)


def error_for(
    kind: DefectKind, defects: tuple[Defect, ...]
) -> HistoryError | UnknownMessageTypeError:
    """The exception the compiler raises for ``defects`` (all of ``kind``)."""
    rule = DEFECT_RULES[kind]
    if not isinstance(rule.message, str):
        return rule.error(f"{rule.message(defects)}. {rule.hint}", defects)
    exc = rule.error(rule.message, defects)
    for defect in defects:
        exc.add_note(defect.message)
    exc.add_note(f"next step: {rule.hint}")
    return exc


def raise_first(defects: Iterable[Defect]) -> None:
    """Raise the first defect kind in ``DEFECT_ORDER``, with every defect of that kind."""
    found = tuple(defects)
    for kind in DEFECT_ORDER:
        of_kind = tuple(d for d in found if d.kind == kind)
        if of_kind:
            raise error_for(kind, of_kind)


def with_notes(exc: BaseException) -> str:
    """``str(exc)`` followed by its notes (positions, ids, next step), joined by ``"; "``:
    the one-line form the CLI prints."""
    return "; ".join([str(exc), *getattr(exc, "__notes__", ())])
