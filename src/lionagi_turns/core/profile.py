"""The compile-profile seam: a profile is a set of options of the compiler's passes.

``SEED_PROFILE`` (ADR-0007 as seeded, the default) reproduces ``compile_chat_request``'s output
byte for byte; every option's default is the seed behaviour. A later profile (ADR-0127's
prompt-cache layout, ADR-0007 Amendment 1) is a ``CompileProfile`` with some options changed,
run by the same pipeline (``_compiler.compile_traced``); it never copies a pass.

What an option may change (pass in brackets):

- ``bound`` [after project]: drop whole turns from the projection, e.g. a history bound; the
  trace keeps the full projection beside the bounded one, so the profile can record what it
  kept and left out. Defects are raised from the full walk before the bound runs, so the
  bound sees a valid view and a dropped turn's defect is still raised.
- ``fold_system`` / ``fold_context`` [plan fold]: whether the system text / the context
  section are folded into the first instruction. A part not folded is still on the trace
  (``Trace.parts``) for the profile to place (e.g. as a system block).
- ``fold_target`` [plan fold]: ``"first"`` (seed) folds into the first retained instruction,
  ``"current"`` into the current one (ADR-0127 D4: a block returned on a later call joins that
  call's turn segment, so no earlier message changes).
- ``envelope`` [plan fold]: the context-section encoder (D3; Amendment 1 adds a key).
- ``stable_blocks`` [finish]: text blocks the provider receives outside ``messages`` (ADR-0127:
  the system text, the Branch's tool section), on ``Trace.stable_blocks``.
- ``current_options`` / ``history_options`` [render]: the call options the current and each
  historical instruction render with (ADR-0127's profile sets ``current_options``: tool
  references by name, response sections kept). ``history_options`` returning None means the
  durable view (seed; no profile on main changes it).
- ``history_text`` [render]: ``(branch, turn, rendered) -> content`` replaces a historical
  instruction's rendering (not the fold target's); None (seed) sends the rendering. ADR-0127
  D2 uses it to send what the instruction was sent as, kept on its record's metadata, while
  its durable rendering is unchanged.
- ``results_section`` [render]: render an instruction's action results as a section after its
  content (``(results, prompt_context) -> text``) instead of merging them into its context.

- ``reuse`` [select, project, render]: None (no resuming) or a key; compiles of one branch
  under profiles with equal keys may resume each other's walk (``_fast.resume``): the profile
  promises its ``history_options``, ``history_text`` and ``results_section`` render a given
  turn object the same way under that key. Its ``bound`` runs on every compile, and rendered
  parts are reused only for leading turns the bound returns as the very same objects.

What no profile may change: selection and its errors (D2 §1), the kind rules and the
defects (``_kinds``, ``_errors``), the ordering checks (D2 §3), the ReAct step (D2 §2), the
guard against an empty current turn, the durable record (D1), and that no stored record,
content, progression or branch metadata is written and no I/O is done.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from lionagi_turns.core.contracts import ContextBlock, TurnRequest
from lionagi_turns.core.envelope import encode_context_section
from lionagi_turns.core.history import InstructionTurn, Projection
from lionagi_turns.core.render import CallOptions

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("SEED_PROFILE", "CompileProfile")


def _request_options(branch: Branch, request: TurnRequest) -> CallOptions:
    """The seed: the current instruction renders the request's Tools, ResponseSchema and
    ResponseFormat (D1)."""
    return CallOptions(request.tool_schemas, request.response_format, request.structure)


def _durable_only(branch: Branch, turn: InstructionTurn) -> CallOptions | None:
    """The seed: a historical instruction renders durable sections only (D1)."""
    return None


def _no_blocks(branch: Branch, request: TurnRequest) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True, slots=True)
class CompileProfile:
    """Options of the compiler's passes (module docstring); defaults are the seed ADR's."""

    name: str
    bound: Callable[[Projection, TurnRequest], Projection] | None = None
    fold_system: bool = True
    fold_context: bool = True
    fold_target: Literal["first", "current"] = "first"
    envelope: Callable[[Sequence[ContextBlock]], str] = encode_context_section
    stable_blocks: Callable[[Branch, TurnRequest], tuple[str, ...]] = _no_blocks
    current_options: Callable[[Branch, TurnRequest], CallOptions] = _request_options
    history_options: Callable[[Branch, InstructionTurn], CallOptions | None] = _durable_only
    results_section: Callable[[Sequence[dict[str, Any]], Sequence[Any]], str] | None = None
    history_text: Callable[[Branch, InstructionTurn, Any], Any] | None = None
    reuse: Hashable | None = None


SEED_PROFILE = CompileProfile(name="adr-0007", reuse="adr-0007")
