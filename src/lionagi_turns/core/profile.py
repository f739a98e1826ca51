"""The compile-profile seam: a profile is a set of options of the compiler's passes.

``SEED_PROFILE`` (ADR-0007 as seeded, the default) reproduces ``compile_chat_request``'s output
byte for byte; every option's default is the seed behaviour. A later profile (ADR-0127's
prompt-cache layout, ADR-0007 Amendment 1) is a ``CompileProfile`` with some options changed,
run by the same pipeline (``core.pipeline.compile_traced``); it never copies a pass.

What an option may change (pass in brackets):

- ``bound`` [bound, pass 5]: drop whole turns from the projection, e.g. a history bound. It
  returns a ``Bounded`` value: the projection the compile renders and the profile's own
  record of what it kept and left out (``Trace.bounded``; the pipeline never reads it). The
  trace keeps the full projection beside the bounded one. Defects are raised from the full
  walk before the bound runs, so the bound sees a valid view and a dropped turn's defect is
  still raised.
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
  references by name, response sections kept; a ``ShownSections`` renders the response
  sections a call recorded, as the CLI's rebuild of that call does). ``history_options`` None
  (seed), or returning None for a turn, means the durable view.
- ``history_text`` [render]: ``(branch, turn, rendered) -> content`` replaces a historical
  instruction's rendering (not the fold target's); None (seed) sends the rendering. ADR-0127
  D2 uses it to send what the instruction was sent as, kept on its record's metadata, while
  its durable rendering is unchanged.
- ``results_section`` [render]: render an instruction's action results as a section after its
  content (``(results, prompt_context) -> text``) instead of merging them into its context.

- ``reuse`` [select, project, render]: None (no resuming) or a key; compiles of one branch
  under profiles with equal keys may resume each other's walk (``Memo.resume``): the profile
  promises its ``history_options``, ``history_text`` and ``results_section`` render a given
  turn object the same way under that key. Its ``bound`` runs on every compile, and rendered
  parts are reused only for leading turns the bound returns as the very same objects.

What no profile may change: selection and its errors (D2 §1), the kind rules and the
defects (``core.kinds``, ``core.errors``), the ordering checks (D2 §3), the ReAct step (D2 §2), the
guard against an empty current turn, the durable record (D1), and that no stored record,
content, progression or branch metadata is written and no I/O is done.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, Protocol
from uuid import UUID

from lionagi.protocols.messages import ActionResponse, Instruction
from lionagi.protocols.messages.instruction import InstructionContent

from lionagi_turns.core.contracts import CompiledMessage, ContextBlock, TurnRequest
from lionagi_turns.core.envelope import encode_context_section
from lionagi_turns.core.fold import FoldPlan
from lionagi_turns.core.history import InstructionTurn, Projection, Turn
from lionagi_turns.core.memo import PlainText, TextMemo, install_chooser
from lionagi_turns.core.render import (
    CallOptions,
    Content,
    Result,
    ShownSections,
    render_instruction,
)
from lionagi_turns.core.rendered import RenderedPart

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = (
    "NO_MEMO",
    "SEED_PROFILE",
    "Bounded",
    "CompileProfile",
    "Kept",
    "Memo",
    "NoMemo",
    "Walk",
    "chosen_memo",
    "install_memo_chooser",
)


def _request_options(branch: Branch, request: TurnRequest) -> CallOptions:
    """The seed: the current instruction renders the request's Tools, ResponseSchema and
    ResponseFormat (D1)."""
    return CallOptions(request.tool_schemas, request.response_format, request.structure)


def _no_blocks(branch: Branch, request: TurnRequest) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True, slots=True)
class Bounded:
    """What a profile's ``bound`` decided: ``projection`` is what the compile goes on with
    (whole turns of the projection it was given, in order; the ReAct step may then replace
    some of its instructions by this request's copies); ``decision`` is the profile's own record
    of the choice, carried to ``Trace.bounded`` unread by the pipeline."""

    projection: Projection
    decision: object = None


@dataclass(frozen=True, slots=True)
class CompileProfile:
    """Options of the compiler's passes (module docstring); defaults are the seed ADR's."""

    name: str
    bound: Callable[[Projection, TurnRequest], Bounded] | None = None
    fold_system: bool = True
    fold_context: bool = True
    fold_target: Literal["first", "current"] = "first"
    envelope: Callable[[Sequence[ContextBlock]], str] = encode_context_section
    stable_blocks: Callable[[Branch, TurnRequest], tuple[str, ...]] = _no_blocks
    current_options: Callable[[Branch, TurnRequest], CallOptions | ShownSections] = (
        _request_options
    )
    history_options: Callable[[Branch, InstructionTurn], CallOptions | None] | None = None
    results_section: Callable[[Sequence[Result], Sequence[object]], str] | None = None
    history_text: Callable[[Branch, InstructionTurn, Content], Content] | None = None
    reuse: Hashable | None = None


SEED_PROFILE = CompileProfile(name="adr-0007", reuse="adr-0007")


class Walk(Protocol):
    """What the pipeline reads of a previous compile's walk (``Memo.resume``)."""

    @property
    def plan(self) -> FoldPlan | None: ...

    @property
    def projection(self) -> Projection: ...

    @property
    def history(self) -> Sequence[RenderedPart]: ...


@dataclass(frozen=True, slots=True)
class Kept:
    """A successful compile's walk as ``Memo.keep`` receives it: ``snap`` the memo's own
    ``snapshot`` (or the one ``resume`` returned), ``previous`` the walk it resumed (None: a
    full walk), ``projected`` / ``projection`` the full and the bounded projection, ``history``
    the rendered parts before the current turn, ``messages`` the messages they produced,
    ``reused`` how many leading ``history`` parts are ``previous``'s and ``plan`` the
    compile's fold plan."""

    branch: Branch
    key: Hashable
    snap: object
    previous: Walk | None
    projected: Projection
    projection: Projection
    history: Sequence[RenderedPart]
    messages: Sequence[CompiledMessage]
    reused: int
    plan: FoldPlan | None


class Memo(TextMemo, Protocol):
    """What a compile may reuse. Every answer equals the one computed afresh (``NO_MEMO``'s);
    ``keeps`` False says nothing is ever kept or reused (the fast path off)."""

    @property
    def keeps(self) -> bool: ...

    def compiling(self) -> AbstractContextManager[object]:
        """Entered once around each compile that uses this memo."""
        ...

    def cached_rendering(
        self, message: Instruction, results: Sequence[Result], sources: Sequence[ActionResponse]
    ) -> Content | None:
        """A kept ``durable_rendering`` of exactly these arguments, or None; never renders."""
        ...

    def durable_rendering(
        self,
        message: Instruction,
        results: Sequence[Result] = (),
        sources: Sequence[ActionResponse] = (),
        *,
        probed: bool = False,
    ) -> Content:
        """Exactly ``render_instruction(message.content, results=results)``; ``probed``:
        ``cached_rendering`` has just answered None for these arguments."""
        ...

    def plain_rendering(self, content: InstructionContent, results: Sequence[Result]) -> Content:
        """Exactly ``render_instruction(content, results=results)``."""
        ...

    def resume(
        self, branch: Branch, key: Hashable, view: tuple[UUID, ...]
    ) -> tuple[Walk, Projection, object] | None:
        """The previous walk under ``key``, this view's projection continued from it and this
        compile's snapshot; None: walk in full."""
        ...

    def snapshot(self, branch: Branch, view: tuple[UUID, ...]) -> object | None:
        """What a compile that walks in full reads first (None: the compile is not kept)."""
        ...

    def keep(self, kept: Kept) -> None:
        """Keep a successful compile's walk for the next compile of ``branch`` under ``key``."""
        ...

    def reuse_prefix(self, walk: Walk, turns: Sequence[Turn]) -> int:
        """How many leading ``turns`` are the very objects of the walk's turns."""
        ...

    def reused(
        self, walk: Walk, count: int
    ) -> tuple[list[RenderedPart], list[CompiledMessage]]:
        """The walk's first ``count`` rendered parts and the messages they produced."""
        ...


class NoMemo(PlainText):
    """lionagi's renderer every time; nothing is kept (the fast path off)."""

    __slots__ = ()

    @property
    def keeps(self) -> bool:
        return False

    def compiling(self) -> AbstractContextManager[object]:
        return nullcontext()

    def cached_rendering(
        self, message: Instruction, results: Sequence[Result], sources: Sequence[ActionResponse]
    ) -> Content | None:
        return None

    def durable_rendering(
        self,
        message: Instruction,
        results: Sequence[Result] = (),
        sources: Sequence[ActionResponse] = (),
        *,
        probed: bool = False,
    ) -> Content:
        return render_instruction(message.content, results=results)

    def plain_rendering(self, content: InstructionContent, results: Sequence[Result]) -> Content:
        return render_instruction(content, results=results)

    def resume(
        self, branch: Branch, key: Hashable, view: tuple[UUID, ...]
    ) -> tuple[Walk, Projection, object] | None:
        return None

    def snapshot(self, branch: Branch, view: tuple[UUID, ...]) -> object | None:
        return None

    def keep(self, kept: Kept) -> None:
        return None

    def reuse_prefix(self, walk: Walk, turns: Sequence[Turn]) -> int:
        return 0

    def reused(
        self, walk: Walk, count: int
    ) -> tuple[list[RenderedPart], list[CompiledMessage]]:
        return [], []


NO_MEMO = NoMemo()

_memo_choosers: list[Callable[[], Memo]] = []


def install_memo_chooser(chooser: Callable[[], Memo]) -> None:
    """Make ``chooser`` pick each compile's memo (and, through ``core.memo``, the renderers'
    outside a compile); the fast path installs ``memo.switch.choose`` when it is imported."""
    _memo_choosers.append(chooser)
    install_chooser(chooser)


def chosen_memo() -> Memo:
    """The memo for a compile given none: the installed chooser's pick, else ``NO_MEMO``."""
    return _memo_choosers[-1]() if _memo_choosers else NO_MEMO
