"""Stages: the one way a profile changes a compile (``core.pipeline.compile_traced``).

A stage is a value with up to three hooks at fixed points of the one pipeline, each given the
``Plan`` and returning the next one:

- ``prepare`` runs after the view is selected (``Plan.view`` is set, nothing is walked yet).
  It reads what the stage needs from the branch and sets the pass options the stage changes
  (``Plan.profile``, a ``core.profile.CompileProfile``: the fold, the envelope, the call
  options, the historical texts, the resume key, a ``bound``), may narrow the request's
  context blocks, and keeps what its later hooks need in its own slot (``Plan.slot``).
- the ``bound`` option it sets runs at the pipeline's bound pass, on a valid view.
- ``finish`` runs after the pipeline built the compiled request. It may replace the messages
  sent (``Plan.messages`` and ``Plan.compiled`` together), attach records to the compiled
  instruction, raise a refusal, and puts its output in its slot (``Trace.slots``).

Order: the stages of ``stages=(a, b)`` run ``a.prepare``, ``b.prepare``, the passes,
``a.finish``, ``b.finish``. A later stage sees the options and blocks the earlier ones set and
finishes on the messages they finished, so ``(amendment1, prompt_cache)`` bounds the history,
then lays the bounded request out for the prompt cache. A stage that must know, before it
bounds, what a later stage sends beyond the messages (a tool section in the system blocks,
instructions sent as recorded) reads it from ``sent_layout(plan.stages)``: any stage may
provide it through ``SendsLayout``.

Contract for every stage: the hooks are pure functions of the plan and the stage's own
options (the branch is read, never written; the compiled instruction is new and may be
written); a stage never copies a pass; it raises before producing output; its ``name`` is
unique in a tuple and names its slot.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

if TYPE_CHECKING:
    from lionagi.protocols.messages import Instruction

    from lionagi_turns.core.plan import Plan
    from lionagi_turns.core.render import Content

__all__ = ("SendsLayout", "SentLayout", "Stage", "check_stages", "sent_layout")


class Stage:
    """The base of a stage: both hooks leave the plan as it is (see the module contract)."""

    name: str = "stage"

    def prepare(self, plan: Plan) -> Plan:
        return plan

    def finish(self, plan: Plan) -> Plan:
        return plan


@dataclass(frozen=True, slots=True)
class SentLayout:
    """What a stage's layout sends beyond the messages, for a measure to count: ``outside``,
    texts sent outside ``messages`` (a tool section in the system blocks); ``sent_text``, the
    text a historical instruction is sent as when the layout sends a recorded text (None: its
    rendering)."""

    outside: tuple[str, ...] = ()
    sent_text: Callable[[Instruction], Content | None] | None = None


@runtime_checkable
class SendsLayout(Protocol):
    """A stage whose layout sends more than the messages (``SentLayout``)."""

    def sent_layout(self) -> SentLayout: ...


def sent_layout(stages: Sequence[object]) -> SentLayout | None:
    """The layout of the last stage in ``stages`` that provides one, else None."""
    for stage in reversed(stages):
        provide = getattr(type(stage), "sent_layout", None)  # ``SendsLayout``, checked cheaply
        if callable(provide):
            return cast("SendsLayout", stage).sent_layout()
    return None


def check_stages(stages: object) -> tuple[Stage, ...]:
    """``stages`` as a tuple; ``TypeError`` for anything but a sequence of ``Stage`` values,
    ``ValueError`` for two stages of one name."""
    if isinstance(stages, str | bytes) or not isinstance(stages, Sequence):
        raise TypeError(f"stages must be a tuple of Stage values, got {type(stages).__name__}")
    names: set[str] = set()
    for stage in stages:
        if not isinstance(stage, Stage):
            raise TypeError(
                f"stages holds {type(stage).__name__}, not a Stage; subclass "
                "lionagi_turns.core.stage.Stage"
            )
        if stage.name in names:
            raise ValueError(f"two stages are named {stage.name!r}; give each its own name")
        names.add(stage.name)
    return tuple(stages)

