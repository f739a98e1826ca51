"""ADR-0007 D5/D6: route lionagi 0.36's own call surfaces through ``compile_chat_request``.

``install()`` rebinds these names (and nothing else) to this package's replacements:

==================================================  =====================================
lionagi name                                        replacement
==================================================  =====================================
``operations.chat.chat._prepare_run_kwargs``        ``prepare_run_kwargs`` (the adapter)
``operations.run.run._prepare_run_kwargs``          ``prepare_run_turn_kwargs`` (the adapter;
                                                    the compiled turn is in flight until run ends)
``operations.chat.chat._build_instruction``         ``build_instruction`` (copies a caller's
``operations.run.run._build_instruction``           ``Instruction`` before lionagi updates it)
``operations.chat.chat._apply_context_providers``   ``apply_context_providers`` (marks the
``operations.run.run._apply_context_providers``     branch's unanswered instructions first)
``protocols.messages.prepare_messages_for_chat``    ``prepare_compat.prepare_messages_for_chat``
``protocols.messages.prepare.prepare_messages_...`` ``prepare_compat.prepare_messages_for_chat``
``operations.parse.parse._try_propagate_structure`` ``propagate_structure``
``operations.chat.chat.emit_api_pre_call``          ``_in_call.emit_api_pre_call`` (marks
``operations.run.run.emit_api_pre_call``            the call in progress during the emit)
``service.token_budget.get_token_budget``           ``_budget.get_token_budget`` (``used``:
``agent.nudge.get_token_budget``                    the tokens of what is sent)
==================================================  =====================================

``Branch.chat``, ``communicate``, ``operate``, ``ReAct`` and ``run`` reach the compiler through
the first two; they then execute unchanged, so chat and run differ only after compilation.

Also replaced: ``lionagi.agent.context_fold.estimate_next_request_tokens`` (and ``ContextFold``'s
default ``estimate``) by ``_estimate.estimate_next_request_tokens``, which counts the request of
the call in progress at API_PRE_CALL and otherwise compiles through the compiler with the
newest turn's call options, and ``operations.run.run.run`` by
``run_recording_outcome`` (lionagi's run plus an explicit record of an unanswered turn).

Left untouched on purpose: ``lionagi.operations.chat._prepare._prepare_run_kwargs`` itself (the
legacy reference ``lionagi_turns.characterize.legacy`` calls).

Guarantees:

- ``install()`` checks that lionagi is 0.36.x and that every name it replaces is lionagi's own
  original (identity with the defining module's function, which must itself be lionagi's
  definition); otherwise it raises ``IntegrationError`` and changes nothing. It is idempotent.
- ``uninstall()`` restores exactly the objects ``install()`` replaced; it refuses (changing
  nothing) when another patch was put on top of one of ours.
- All three hold one process-wide lock. ``installed()`` scopes are reference-counted: nested or
  overlapping scopes (any threads or tasks) keep the compiler installed until the last one
  exits, which uninstalls only if the scopes installed it (see ``installed``).
- A resumed CLI turn that carries context blocks compiles against the records the session does
  not hold (``_resume.resumed_view``), so the blocks reach the one message the CLI is sent;
  except within one of ReAct's later calls, which keeps lionagi's view (a known gap). A turn is
  resumed only when lionagi sends it as the last message alone (``_resume.is_resumed_cli``,
  read from the endpoint's request model): codex and pi turns never are.
- A ``run()`` turn that ends unanswered gets one explicit marker record
  (``run_recording_outcome``, ``_unanswered``), so the branch stays usable. Unanswered
  instructions a branch already holds (turns that failed without ``install()``) get the same
  marker before the next call compiles (``apply_context_providers``, ``_repair``), announced
  with ``TurnsCompatibilityWarning`` once per branch.
- ReAct's caller-context de-dup: the adapter reads lionagi's ``_react_context`` and passes it
  to ``compile_chat_request(..., react_context=...)`` and to the prompt-cache profile (and the
  estimate does the same).
- Known gaps warn once per process with ``TurnsCompatibilityWarning``: a prompt-cache endpoint
  with the seed profile forced, or under the Amendment 1 profile; context blocks of a later
  ReAct round on a resumed CLI session; a CLI request model that refuses the resume probe
  (``_resume.sends_last_message_only``, once per endpoint class).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from lionagi_turns.core.pipeline import compile_chat_request
from lionagi_turns.core.providers import check_image_hosts, to_provider_messages
from lionagi_turns.core.support import REQUIREMENT, SUPPORTED_LIONAGI, IntegrationError, supports
from lionagi_turns.integration._adapters import (
    context_blocks_from_report,
    isolate_instruction,
    turn_request_from_param,
)
from lionagi_turns.integration._anthropic import create_payload as anthropic_create_payload
from lionagi_turns.integration._budget import get_token_budget
from lionagi_turns.integration._cache import compile_for_prompt_cache
from lionagi_turns.integration._estimate import estimate_next_request_tokens, remember_turn_options
from lionagi_turns.integration._handover import Handover
from lionagi_turns.integration._in_call import emit_api_pre_call, note_built, note_compiled
from lionagi_turns.integration._prepare_compat import prepare_messages_for_chat
from lionagi_turns.integration._react import react_context_now
from lionagi_turns.integration._repair import (
    REPAIR_WARNING,
    note_run_instruction,
    repair_before_call,
    run_turn_ended,
    run_turn_starting,
)
from lionagi_turns.integration._resume import resumed_view
from lionagi_turns.integration._unanswered import record_unanswered, unanswered_reason

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator
    from uuid import UUID

    from lionagi.operations.types import ChatParam, RunParam
    from lionagi.protocols.context_providers import ProviderReport
    from lionagi.protocols.messages import Instruction, RoledMessage
    from lionagi.session.branch import Branch

__all__ = (
    "IntegrationError",
    "TurnsCompatibilityWarning",
    "apply_context_providers",
    "build_instruction",
    "install",
    "installed",
    "is_installed",
    "prepare_run_kwargs",
    "prepare_run_turn_kwargs",
    "propagate_structure",
    "run_recording_outcome",
    "uninstall",
)

_PREPARE = "lionagi.operations.chat._prepare"
_CHAT = "lionagi.operations.chat.chat"
_RUN = "lionagi.operations.run.run"
_MESSAGES = "lionagi.protocols.messages"
_MSG_PREPARE = "lionagi.protocols.messages.prepare"
_PARSE = "lionagi.operations.parse.parse"
# A class attribute: ``module:Class`` (the Anthropic projection, ADR-0127 D5).
_ANTHROPIC = "lionagi.providers.anthropic.messages:AnthropicMessagesEndpoint"
_FOLD = "lionagi.agent.context_fold"
_HOOKS = "lionagi.operations._api_hooks"
_BUDGET = "lionagi.service.token_budget"
_NUDGE = "lionagi.agent.nudge"


class TurnsCompatibilityWarning(UserWarning):
    """A lionagi behaviour the compiler does not reproduce bit this call (warned once)."""


# ---------------------------------------------------------------------------------- warnings

_warned: set[str] = set()
_warn_lock = threading.Lock()

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


def _warn_once(key: str, message: str) -> None:
    with _warn_lock:
        if key in _warned:
            return
        _warned.add(key)
    warnings.warn(message, TurnsCompatibilityWarning, stacklevel=3)


def _reset_warnings() -> None:
    """Forget which one-time warnings were issued (for tests)."""
    with _warn_lock:
        _warned.clear()


# ------------------------------------------------------------------- structure propagation

# Compiled instructions carry no response_format (D1), so lionagi's _try_propagate_structure
# finds no Structure on them. The adapter hands the Structure the request rendered to parsing
# through a mapping from the recorded content's id to a weak reference to the recorded
# Instruction that owns it. Nothing is evicted while that Instruction lives (a finalizer drops
# the entry when it is collected), and a lookup matches only while that very Instruction still
# holds that very content object, so a reused id can never hand over another call's Structure.
_structures: Handover[Any] = Handover(lambda owner: owner.content)


def _remember_structure(owner: Any, response_format: Any, structure: Any) -> None:
    if response_format is None:
        return
    from lionagi.protocols.messages.instruction import _build_structure, _resolve_structure_cls

    instance = _build_structure(response_format, _resolve_structure_cls(structure))
    if instance is None:
        return
    _structures.put(owner, instance)


def propagate_structure(content: Any, parse_param: Any) -> Any:
    """lionagi's ``_try_propagate_structure``, then, when it found no Structure, the one this
    package's adapter rendered for the recorded instruction ``content``."""
    result = _original(_PARSE, "_try_propagate_structure")(content, parse_param)
    from lionagi.operations.schema.structure import Structure

    if isinstance(result.structure, Structure) or content is None:
        return result
    instance = _structures.get(content)
    if instance is None:
        return result
    return result.with_updates(structure=instance)


# ---------------------------------------------------------------------------- the adapter


async def apply_context_providers(
    branch: Branch, instruction: Any, param: ChatParam, *, ins: Instruction | None = None
) -> tuple[Instruction | None, ProviderReport | None]:
    """lionagi's ``_apply_context_providers``, after marking the unanswered instructions the
    branch already holds (``_repair.repair_before_call``; a repair is announced with
    ``TurnsCompatibilityWarning`` once per branch). lionagi's chat and run operations await it
    before the pre-call hook and before compiling, so the fold's estimate, the context
    providers and the compiler all see the repaired branch."""
    markers = await repair_before_call(branch)
    if markers:
        _warn_once(
            f"unanswered:{branch.id}", REPAIR_WARNING.format(branch=branch.id, count=len(markers))
        )
    original = _original(_PREPARE, "_apply_context_providers")
    found: tuple[Instruction | None, ProviderReport | None] = await original(
        branch, instruction, param, ins=ins
    )
    return found


def build_instruction(branch: Branch, instruction: Any, param: ChatParam) -> Instruction:
    """lionagi's ``_build_instruction`` on a copy of a caller-supplied ``Instruction``, so the
    caller's object is never updated in place."""
    original = _original(_PREPARE, "_build_instruction")
    built: Instruction = original(branch, isolate_instruction(instruction), param)
    note_built(branch, built, param)
    return built


def prepare_run_kwargs(
    branch: Branch,
    instruction: Any,
    param: ChatParam,
    *,
    ins: Instruction | None = None,
    context_blocks: Sequence[str] | None = None,
    imodel: Any = None,
    _use_render_cache: bool = True,
) -> tuple[Instruction, dict[str, Any]]:
    """Drop-in for lionagi's ``_prepare_run_kwargs``: compile once, check image hosts, return
    ``(compiled.instruction, {**compiled.provider_kwargs, "messages": [...]})``.

    ``ins`` is the instruction lionagi built (built here from a copy of ``instruction`` when
    absent). ``context_blocks`` must be ``branch.last_context_report.blocks``; provider names
    come from that report's ``fired`` list. ``_use_render_cache`` is accepted and ignored.
    Raises before returning (so before any model call or recording) on any compile error.
    """
    del _use_render_cache
    if ins is None:
        ins = build_instruction(branch, instruction, param)
    _note_gaps(imodel, places_prompt_cache(imodel))
    call = compile_call(branch, ins, param, context_blocks=context_blocks, imodel=imodel)
    if call.held_back:
        _warn_once("react_resume_blocks", REACT_RESUME_BLOCKS_GAP)
    check_image_hosts(call.kwargs["messages"])
    compiled = call.compiled
    _remember_structure(compiled.instruction, call.request.response_format, call.request.structure)
    remember_turn_options(compiled.instruction, call.request)
    note_compiled(branch, ins, call.kwargs)
    return compiled.instruction, dict(call.kwargs)


@dataclass(frozen=True, slots=True)
class CompiledCall:
    """One call compiled as the adapter compiles it: the request it described, the compiled
    request, the kwargs lionagi sends (``messages`` included), and whether a resumed ReAct
    round held its context blocks back."""

    request: Any
    compiled: Any
    kwargs: dict[str, Any]
    held_back: bool


def compile_call(
    branch: Branch,
    ins: Instruction,
    param: ChatParam,
    *,
    context_blocks: Sequence[str] | None,
    imodel: Any,
) -> CompiledCall:
    """The adapter's compile of one call, with no side effect (no warning, no hand-over, no
    image-host check): what ``prepare_run_kwargs`` returns for the same arguments."""
    cache = places_prompt_cache(imodel)
    blocks = context_blocks_from_report(context_blocks, branch.last_context_report)
    request = turn_request_from_param(branch, ins, param, context_blocks=blocks)
    model = imodel if imodel is not None else getattr(branch, "chat_model", None)
    request, held_back = resumed_view(branch, model, request, react_context=react_context_now())
    extra: dict[str, Any] = {}
    compiled: Any
    if cache and _profile == "default":
        compiled, extra["system_blocks"] = compile_for_prompt_cache(
            branch, request, react_context_now()
        )
    elif cache:  # Amendment 1 composed with the prompt-cache layout
        from lionagi_turns.profiles.amendment1._integration import compile_installed_cached

        compiled, extra["system_blocks"] = compile_installed_cached(branch, request)
    else:
        compiled = compile_installed_profile(branch, request)
    messages = to_provider_messages(compiled)
    kwargs = {**compiled.provider_kwargs, **extra, "messages": messages}
    return CompiledCall(request=request, compiled=compiled, kwargs=kwargs, held_back=held_back)


def prepare_run_turn_kwargs(
    branch: Branch,
    instruction: Any,
    param: ChatParam,
    *,
    ins: Instruction | None = None,
    context_blocks: Sequence[str] | None = None,
    imodel: Any = None,
    _use_render_cache: bool = True,
) -> tuple[Instruction, dict[str, Any]]:
    """``prepare_run_kwargs`` for lionagi's run operation: the compiled instruction, which
    lionagi records before the model call, is also a turn in flight until the run ends
    (``_repair.note_run_instruction``), so no other call on the branch marks it unanswered."""
    compiled, kwargs = prepare_run_kwargs(
        branch,
        instruction,
        param,
        ins=ins,
        context_blocks=context_blocks,
        imodel=imodel,
        _use_render_cache=_use_render_cache,
    )
    note_run_instruction(compiled.id)
    return compiled, kwargs


async def run_recording_outcome(
    branch: Branch, instruction: Any, param: RunParam
) -> AsyncGenerator[RoledMessage]:
    """lionagi's ``run()``, unchanged, plus one record when the turn ends unanswered.

    Every message lionagi's run yields is passed through as is. When the run raises (or the
    caller closes the stream) after lionagi recorded the turn's instruction and before any
    assistant response to it was recorded, an explicit marker response is recorded right after
    the turn's records (``_unanswered.record_unanswered``), then the exception propagates
    unchanged. So the branch stays well-formed for the next call, nothing recorded is removed,
    and the next request is exactly what the compiler (and ``lionagi-turns compile``) shows for
    the saved branch. A failure to record the marker is noted on the original exception.
    """
    from lionagi.protocols.messages import Instruction

    original = _original(_RUN, "run")
    stream = original(branch, instruction, param)
    recorded: Instruction | None = None
    turn: list[UUID] = []
    try:
        with run_turn_starting(turn):  # lionagi compiles and records the instruction here
            msg = await anext(stream, None)
        while msg is not None:
            if recorded is None and isinstance(msg, Instruction):
                recorded = msg
            yield msg
            msg = await anext(stream, None)
    except BaseException as exc:
        # Shielded: under a cancelled anyio scope every await would be cancelled again.
        with anyio.CancelScope(shield=True):
            await stream.aclose()
            if recorded is not None:
                await _record_or_note(branch, recorded, exc)
        raise
    finally:
        run_turn_ended(turn)


async def _record_or_note(branch: Branch, recorded: Any, exc: BaseException) -> None:
    try:
        await record_unanswered(branch, recorded, unanswered_reason(exc))
    except Exception as record_exc:
        exc.add_note(
            "lionagi-turns could not record that this turn ended unanswered "
            f"({type(record_exc).__name__}: {record_exc}); the next call on this "
            "branch will refuse the unanswered instruction"
        )


def places_prompt_cache(imodel: Any) -> bool:
    """Whether the call's endpoint places the prompt cache (lionagi's ``places_prompt_cache``)
    and the seed profile is not forced. Such a call uses the prompt-cache profile (ADR-0127),
    composed with Amendment 1's bounds under ``install(profile="amendment1")``."""
    if _seed_forced.get():
        return False
    return bool(getattr(getattr(imodel, "endpoint", None), "places_prompt_cache", False))


_seed_forced: ContextVar[bool] = ContextVar("lionagi_turns_seed_forced", default=False)


@contextmanager
def seed_profile_forced() -> Iterator[None]:
    """Compile with the seed profile even on a prompt-cache endpoint, in this context (for the
    benchmark's before/after figures and tests; the system is then folded, as ADR-0007 says)."""
    token = _seed_forced.set(True)
    try:
        yield
    finally:
        _seed_forced.reset(token)


def _note_gaps(imodel: Any, cache: bool) -> None:
    endpoint = getattr(imodel, "endpoint", None)
    if cache or not bool(getattr(endpoint, "places_prompt_cache", False)):
        return
    _warn_once("prompt_cache", PROMPT_CACHE_GAP)  # only the forced seed profile loses it


# ------------------------------------------------------------------------ install/uninstall


@dataclass(frozen=True, slots=True)
class _Target:
    site: str  # module whose attribute is rebound
    name: str
    origin: str  # module defining lionagi's original
    replacement: Callable[..., Any]


_TARGETS: tuple[_Target, ...] = (
    _Target(_CHAT, "_prepare_run_kwargs", _PREPARE, prepare_run_kwargs),
    _Target(_RUN, "_prepare_run_kwargs", _PREPARE, prepare_run_turn_kwargs),
    _Target(_CHAT, "_build_instruction", _PREPARE, build_instruction),
    _Target(_CHAT, "_apply_context_providers", _PREPARE, apply_context_providers),
    _Target(_RUN, "_apply_context_providers", _PREPARE, apply_context_providers),
    _Target(_RUN, "_build_instruction", _PREPARE, build_instruction),
    _Target(_MESSAGES, "prepare_messages_for_chat", _MSG_PREPARE, prepare_messages_for_chat),
    _Target(_MSG_PREPARE, "prepare_messages_for_chat", _MSG_PREPARE, prepare_messages_for_chat),
    _Target(_PARSE, "_try_propagate_structure", _PARSE, propagate_structure),
    _Target(_RUN, "run", _RUN, run_recording_outcome),
    _Target(_ANTHROPIC, "create_payload", _ANTHROPIC, anthropic_create_payload),
    _Target(_FOLD, "estimate_next_request_tokens", _FOLD, estimate_next_request_tokens),
    _Target(_CHAT, "emit_api_pre_call", _HOOKS, emit_api_pre_call),
    _Target(_RUN, "emit_api_pre_call", _HOOKS, emit_api_pre_call),
    _Target(_BUDGET, "get_token_budget", _BUDGET, get_token_budget),
    _Target(_NUDGE, "get_token_budget", _BUDGET, get_token_budget),
)

# ContextFold binds lionagi's estimate as the default of its keyword-only ``estimate`` parameter
# at definition time, so the module attribute alone does not reach it: install() swaps that
# default too (and uninstall() restores it), checked like every other target.
_FOLD_DEFAULT = (_FOLD, "ContextFold.__init__(estimate=)")


def _fold_kwdefaults() -> dict[str, Any]:
    init = importlib.import_module(_FOLD).ContextFold.__init__
    defaults: dict[str, Any] = init.__kwdefaults__
    return defaults

_lock = threading.RLock()
# (site, name) -> the lionagi original install() replaced; empty when not installed.
_saved: dict[tuple[str, str], Any] = {}


def _original(origin: str, name: str) -> Callable[..., Any]:
    """lionagi's original ``origin.name``, also while installed (then read from ``_saved``)."""
    saved = _saved.get((origin, name))
    if saved is not None:
        return saved
    fn: Callable[..., Any] = getattr(_site(origin), name)
    return fn


def original_token_budget() -> Callable[..., Any]:
    """lionagi's own ``get_token_budget`` (also while installed)."""
    return _original(_BUDGET, "get_token_budget")


def _site(path: str) -> Any:
    """The module ``path`` names, or the class of a ``module:Class`` path."""
    module, _, cls = path.partition(":")
    found = importlib.import_module(module)
    return getattr(found, cls) if cls else found


def _qualname(path: str, name: str) -> tuple[str, str]:
    """The ``__module__`` and ``__qualname__`` lionagi's own definition has."""
    module, _, cls = path.partition(":")
    return module, f"{cls}.{name}" if cls else name


def _lionagi_version() -> str:
    import lionagi

    module_version = str(getattr(lionagi, "__version__", ""))
    try:
        dist_version = importlib.metadata.version("lionagi")
    except importlib.metadata.PackageNotFoundError:
        dist_version = module_version
    for version in (module_version, dist_version):
        if not supports(version):
            raise IntegrationError(
                f"lionagi-turns {SUPPORTED_LIONAGI}.x integration cannot patch lionagi "
                f"{version or '<unknown version>'} (lionagi.__version__={module_version!r}, "
                f"installed distribution {dist_version!r}); install {REQUIREMENT} or call "
                "compile_chat_request directly without install()"
            )
    return module_version


def _check_target(target: _Target, version: str) -> Any:
    """The current value of the target name, verified to be lionagi's original."""
    origin_fn = getattr(_site(target.origin), target.name, None)
    current = getattr(_site(target.site), target.name, None)
    module, qualname = _qualname(target.origin, target.name)
    genuine = (
        callable(origin_fn)
        and getattr(origin_fn, "__module__", None) == module
        and getattr(origin_fn, "__qualname__", None) == qualname
    )
    if not genuine:
        raise IntegrationError(
            f"cannot install lionagi-turns: {target.origin}.{target.name} is "
            f"{_describe(origin_fn)}, not lionagi {version}'s own definition. Another patch is "
            "active (undo it, or install lionagi-turns first), or this lionagi build differs "
            "from 0.36.x."
        )
    if current is not origin_fn:
        raise IntegrationError(
            f"cannot install lionagi-turns: {target.site}.{target.name} is "
            f"{_describe(current)}, not lionagi {version}'s original "
            f"{target.origin}.{target.name}. Another patch is active (undo it, or install "
            "lionagi-turns first), or this lionagi build differs from 0.36.x."
        )
    return current


def _describe(obj: Any) -> str:
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if module and qualname:
        return f"{module}.{qualname}"
    return repr(obj)


# The compile profile install() routes through: "default" (the seed ADR) or "amendment1".
PROFILES = ("default", "amendment1")
_profile = "default"


def compile_installed_profile(branch: Branch, request: Any) -> Any:
    """``request`` compiled as the installed adapter compiles it (no prompt-cache layout)."""
    if _profile == "amendment1":
        from lionagi_turns.profiles.amendment1._integration import compile_installed

        return compile_installed(branch, request)
    return compile_chat_request(branch, request, react_context=react_context_now())



def install(*, profile: str = "default", budgets: Any = None, ceiling: Any = None) -> None:
    """Route lionagi's chat/communicate/operate/ReAct/run and ``prepare_messages_for_chat``
    through the compiler. Idempotent; raises ``IntegrationError`` (changing nothing) when
    lionagi is not 0.36.x or a name to replace is not lionagi's original.

    ``profile="amendment1"`` compiles through ``lionagi_turns.amendment1`` (ADR-0007
    Amendment 1) with ``budgets`` (an ``amendment1.SectionBudgets``; None: unbounded) and
    records lionagi's context-tool evictions and compactions at their source; ``ceiling`` (an
    ``amendment1.InputCeiling``; None: none) bounds each whole request, cutting the history in
    steps (``amendment1._ceiling``). On an endpoint that places the prompt cache the profile
    composes with the ADR-0127 layout. Installing another profile while one is installed
    raises ``IntegrationError``: uninstall first."""
    global _profile
    if profile not in PROFILES:
        raise ValueError(f"install(profile={profile!r}): choose one of {', '.join(PROFILES)}")
    if profile == "default" and budgets is not None:
        raise ValueError("install(budgets=...) applies to profile='amendment1' only")
    if profile == "default" and ceiling is not None:
        raise ValueError("install(ceiling=...) applies to profile='amendment1' only")
    with _lock:
        if _saved and profile != _profile:
            raise IntegrationError(
                f"lionagi-turns is installed with profile {_profile!r}; call uninstall() "
                f"before install(profile={profile!r})"
            )
        if profile == "amendment1":
            from lionagi_turns.profiles.amendment1._integration import activate

            activate(budgets, ceiling)
        try:
            _install_locked()
        except BaseException:
            if profile == "amendment1" and not _saved:
                from lionagi_turns.profiles.amendment1._integration import deactivate

                deactivate()
            raise
        _profile = profile


def _install_locked() -> None:
    with _lock:
        if _saved:
            return
        version = _lionagi_version()
        originals = {(t.site, t.name): _check_target(t, version) for t in _TARGETS}
        fold_defaults = _fold_kwdefaults()
        lionagi_estimate = originals[(_FOLD, "estimate_next_request_tokens")]
        if fold_defaults.get("estimate") is not lionagi_estimate:
            raise IntegrationError(
                f"cannot install lionagi-turns: {_FOLD}.ContextFold's default estimate is "
                f"{_describe(fold_defaults.get('estimate'))}, not lionagi {version}'s "
                f"{_FOLD}.estimate_next_request_tokens. Another patch is active (undo it, or "
                "install lionagi-turns first)."
            )
        for target in _TARGETS:
            setattr(_site(target.site), target.name, target.replacement)
        fold_defaults["estimate"] = estimate_next_request_tokens
        originals[_FOLD_DEFAULT] = lionagi_estimate
        _saved.update(originals)


def uninstall() -> None:
    """Restore exactly the originals ``install()`` replaced. No-op when not installed; raises
    ``IntegrationError`` (changing nothing) when one of our replacements was itself replaced."""
    with _lock:
        if not _saved:
            return
        foreign = [
            f"{t.site}.{t.name} is {_describe(getattr(_site(t.site), t.name))}"
            for t in _TARGETS
            if getattr(_site(t.site), t.name) is not t.replacement
        ]
        fold_defaults = _fold_kwdefaults()
        if fold_defaults.get("estimate") is not estimate_next_request_tokens:
            foreign.append(
                f"{_FOLD}.ContextFold's default estimate is "
                f"{_describe(fold_defaults.get('estimate'))}"
            )
        if foreign:
            raise IntegrationError(
                "cannot uninstall lionagi-turns: a later patch replaced its functions ("
                + "; ".join(foreign)
                + "). Undo that patch first, then call uninstall()."
            )
        for target in _TARGETS:
            setattr(
                _site(target.site),
                target.name,
                _saved[(target.site, target.name)],
            )
        fold_defaults["estimate"] = _saved[_FOLD_DEFAULT]
        _saved.clear()
        _deactivate_profile()


def _deactivate_profile() -> None:
    global _profile
    if _profile == "amendment1":
        from lionagi_turns.profiles.amendment1._integration import deactivate

        deactivate()
    _profile = "default"


def is_installed() -> bool:
    """Whether ``install()`` is in effect."""
    with _lock:
        return bool(_saved)


# installed() scopes: how many are open, and whether the first of them installed (then the
# last to exit uninstalls). Both change only under ``_lock``.
_scopes = 0
_scope_owned = False


@contextmanager
def installed() -> Iterator[None]:
    """``install()`` for the ``with`` block, reference-counted across threads and tasks.

    Scopes may nest or overlap in any order (A enters, B enters, A exits): the compiler stays
    installed until the last open scope exits. That last exit uninstalls only if the first
    scope was the one that installed, i.e. lionagi-turns was not installed when no scope was
    open (an installation that existed before stays). Explicit ``install()``/``uninstall()``
    calls inside scopes take effect at once and do not change that: an ``uninstall()`` leaves
    open blocks on lionagi's originals until a scope enters again (which reinstalls), and the
    last exit of scopes that installed uninstalls even after an explicit ``install()`` inside
    them (the scopes restore the state they found).
    """
    global _scopes, _scope_owned
    with _lock:
        if _scopes == 0:
            _scope_owned = not _saved
        _install_locked()
        _scopes += 1
    try:
        yield
    finally:
        with _lock:
            _scopes -= 1
            if _scopes == 0 and _scope_owned:
                uninstall()
                _scope_owned = False
