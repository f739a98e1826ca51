"""``lionagi-turns compile``: the provider messages of a turn, and their sections.

``compile_report`` is pure (it reads the loaded branch and returns a JSON-ready dict, the
``lionagi-turns/compile@1`` shape of ``schema/lionagi-turns.schema.json``); its text view is
``_compile_view.render_compile``.

The report: ``messages`` is exactly ``to_provider_messages(compile_chat_request(branch,
request))``; ``sections`` partitions every character of it (``_sections``: system, tools,
context blocks, guidance, history, current turn, and a total that is the sum of the rows), with
``o200k_base`` tokens counted offline (``tokenizer`` names the encoding). ``fold`` says which
message carries the fold, its parts and the compiler's ``FoldPlan.encoding``. ``at`` is None
for the next turn, else what ``--at K`` rebuilt (``_turn``).
"""

from __future__ import annotations

from typing import NoReturn

from lionagi_turns.cli._inputs import EXIT_REJECTED, die
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._load import LoadedBranch, one_line
from lionagi_turns.cli._sections import Measured, measure, text_parts
from lionagi_turns.cli._shape import header
from lionagi_turns.cli._turn import TurnSpec, turn_spec
from lionagi_turns.core.contracts import ContextBlock, TurnRequest
from lionagi_turns.core.errors import with_notes
from lionagi_turns.core.history import (
    HistoryError,
    UnknownMessageTypeError,
)
from lionagi_turns.core.measure import ENCODING
from lionagi_turns.core.pipeline import Trace, compile_traced
from lionagi_turns.core.providers import to_provider_messages
from lionagi_turns.core.stage import Stage

__all__ = (
    "TOKENIZER",
    "compile_error",
    "compile_report",
    "compiled_turn",
    "fold_parts",
    "fold_report",
    "measured_turn",
    "text_of",
    "turn_fields",
)

TOKENIZER = {"encoding": ENCODING, "package": "bpe-openai"}


def text_of(content: object) -> tuple[str, int]:
    """The text of a message's content (its text parts, one per line) and its images."""
    texts, images = text_parts(content)
    return "\n".join(texts), images


def fold_report(trace: Trace) -> JsonObject:
    """Where the compile put the fold: the message, the parts it folded, the encoding."""
    plan = trace.fold
    return {
        "message_index": trace.fold_message_index,
        "sections": [label for label, _ in plan.parts.sections()] if plan else [],
        "encoding": plan.encoding if plan else None,
    }


def fold_parts(trace: Trace) -> list[tuple[str, str]]:
    """The fold's ``(label, text)`` parts as the compile planned them (none: nothing folded)."""
    return trace.fold.parts.sections() if trace.fold is not None else []


def turn_fields(
    loaded: LoadedBranch, spec: TurnSpec, profile: str, measured: Measured
) -> JsonObject:
    """The fields every ``compile`` report starts with, in every profile."""
    return {
        **header("compile", loaded),
        "profile": profile,
        "instruction": spec.text,
        "instruction_is_placeholder": spec.placeholder,
        "lionagi_reload_sends_no_system": loaded.system_lost_by_from_dict,
        "context_blocks": [b.provider_name for b in spec.blocks],
        "at": spec.at,
        "sections": measured.sections,
        "tokenizer": dict(TOKENIZER),
    }


def compile_report(
    loaded: LoadedBranch,
    instruction: str | None = None,
    blocks: tuple[ContextBlock, ...] = (),
    at: int | None = None,
) -> JsonObject:
    """The ``compile --format json`` object for ``loaded`` (see the module docstring).

    Raises what ``compile_chat_request`` raises for a history it rejects.
    """
    return compiled_turn(loaded, turn_spec(loaded, instruction, blocks, at, "default"))[0]


def compiled_turn(loaded: LoadedBranch, spec: TurnSpec) -> tuple[JsonObject, Trace]:
    """``compile_report`` and the traced compile it reports (the fold plan the text view
    marks comes from it, never from a second walk)."""
    report, trace, _ = measured_turn(loaded, spec)
    return report, trace


def measured_turn(
    loaded: LoadedBranch, spec: TurnSpec, stages: tuple[Stage, ...] = ()
) -> tuple[JsonObject, Trace, Measured]:
    """``compiled_turn`` and the sections it measured (each message counted once), under
    ``stages`` (a registered stage profile; none: the default profile)."""
    request = TurnRequest(
        instruction=spec.instruction, progression=spec.progression, context_blocks=spec.blocks
    )
    trace = compile_traced(loaded.branch, request, stages=stages)
    messages = to_provider_messages(trace.compiled)
    measured = measure(messages, trace.fold_message_index, fold_parts(trace))
    report = {
        **turn_fields(loaded, spec, "default", measured),
        **({"stages": [stage.name for stage in stages]} if stages else {}),
        "fold": fold_report(trace),
        "messages": messages,
    }
    return report, trace, measured


def compile_error(loaded: LoadedBranch, exc: Exception) -> NoReturn:
    """Exit 1 with one line: the compiler rejects this history (``exc``)."""
    if isinstance(exc, HistoryError | UnknownMessageTypeError):
        die(
            EXIT_REJECTED,
            f"{loaded.path}: the compiler rejects this history: {one_line(with_notes(exc))} "
            f"(run `lionagi-turns check {loaded.path}` to list every defect)",
        )
    problem = f"{type(exc).__name__}: {one_line(with_notes(exc))}"
    die(EXIT_REJECTED, f"{loaded.path}: cannot compile: {problem}")
