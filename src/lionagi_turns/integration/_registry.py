"""The compile profiles ``install()`` can route through, by name, and the one installed.

Registered profiles (``PROFILES``, in this order):

- ``"default"`` (also ``"adr-0007"``): the seed compiler, ADR-0007 as written
  (``core.pipeline.compile_chat_request``). Takes no settings.
- ``"amendment1"``: ADR-0007 Amendment 1 (``profiles.amendment1``): section budgets
  (``budgets``), an input ceiling (``ceiling``) and lionagi's context-tool evictions recorded
  at their source (``ContextTool.bind``, a target of ``_patches.TARGETS`` rebound only while
  this profile is installed).
- ``"prompt-cache"``: the ADR-0127 layout (``profiles.prompt_cache``). It is not installed by
  name: it is selected for each call whose endpoint places the prompt cache
  (``places_prompt_cache``), on top of the installed profile.

What composes, and what is refused:

- The installed profile composes with the prompt-cache layout: on an endpoint that places the
  prompt cache, ``"default"`` compiles through the layout alone
  (``compile_for_prompt_cache_traced``)
  and ``"amendment1"`` through its bounds laid out by the layout
  (``profiles/composed.py``, the stages ``(Amendment1, PromptCache)``).
- ``install(profile="prompt-cache")`` is refused (``ValueError``, naming the installable
  profiles): the layout belongs to the endpoint, not to the process.
- An unknown name is refused (``ValueError`` naming the valid ones); so are settings a profile
  does not take (``budgets``/``ceiling`` with ``"default"``).
- A profile made of stages (``register_stages(name, provides, factory)``: ``factory()`` returns
  the tuple of ``core.stage.Stage`` values) is installable by name, composes with the layout
  as the tuple followed by the ``PromptCache`` stage, and is listed by ``compositions()`` (so
  the CLI's ``--profile`` takes it). ``stages_of(name)`` is a profile's tuple (empty for the
  default profile; None for Amendment 1, whose stages take the installed settings).
- Two installed profiles do not compose: installing another one while one is installed raises
  ``IntegrationError`` (uninstall first).

The installed profile and its settings are an ``Installed`` value in one cell guarded by the
integration's one lock (``_originals.lock``): ``current()`` reads it, ``put``/``clear``
replace it (``_install`` does, holding that lock). A profile is recognised by its value (its
registered name), never by object identity.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from lionagi_turns.core.pipeline import compile_traced
from lionagi_turns.core.stage import Stage, check_stages
from lionagi_turns.integration._cache import compile_for_prompt_cache_traced
from lionagi_turns.integration._originals import lock
from lionagi_turns.integration._react import react_context_now
from lionagi_turns.integration._state import STATE

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

    from lionagi_turns.core.contracts import CompiledChatRequest, TurnRequest
    from lionagi_turns.core.trace import Trace
    from lionagi_turns.integration._anthropic import SegmentedBlocks
    from lionagi_turns.profiles.amendment1 import _contracts as amended
    from lionagi_turns.profiles.amendment1._ceiling import InputCeiling

    Compiled = CompiledChatRequest | amended.CompiledChatRequest

__all__ = (
    "PROFILES",
    "InstallProfile",
    "Installed",
    "clear",
    "compile_installed",
    "compile_installed_cached",
    "compile_installed_traced",
    "compositions",
    "current",
    "get",
    "installable",
    "put",
    "register",
    "register_stages",
    "stages_of",
    "unregister",
)


@dataclass(frozen=True, slots=True)
class InstallProfile:
    """One registered profile: its name, what it provides, and how the adapter compiles with it
    (``compile``: no layout; ``compile_cached``: composed with the prompt-cache layout;
    ``traced``, for a profile the pipeline alone compiles: ``compile`` with its trace).
    ``installable`` False: selected per call, never by ``install(profile=...)``;
    ``settings`` names the keyword settings ``install`` accepts for it; ``check_settings``
    refuses bad values of them (``TypeError``/``ValueError``) before anything is installed."""

    name: str
    provides: str
    compile: Callable[[Branch, TurnRequest], Compiled]
    compile_cached: Callable[[Branch, TurnRequest], tuple[Compiled, SegmentedBlocks, Trace]]
    installable: bool = True
    settings: frozenset[str] = frozenset()
    check_settings: Callable[[object, object], None] | None = None
    aliases: tuple[str, ...] = ()
    stages: Callable[[], tuple[Stage, ...]] | None = None
    traced: Callable[[Branch, TurnRequest], Trace] | None = None


@dataclass(frozen=True, slots=True)
class Installed:
    """The installed profile and the settings it was installed with."""

    profile: InstallProfile
    budgets: object = None
    ceiling: object = None




def register(profile: InstallProfile) -> None:
    """Add ``profile`` under its name and aliases; refuses (``ValueError``) a name in use."""
    with lock:
        taken = [n for n in (profile.name, *profile.aliases) if n in STATE.names]
        if taken:
            raise ValueError(f"profile name {taken[0]!r} is already registered")
        STATE.profiles[profile.name] = profile
        for name in (profile.name, *profile.aliases):
            STATE.names[name] = profile.name


def installable() -> tuple[str, ...]:
    """The names ``install(profile=...)`` accepts, in registration order (aliases excluded)."""
    return tuple(name for name, p in STATE.profiles.items() if p.installable)


def compositions() -> tuple[str, ...]:
    """Every composition ``install()`` can send, by the name the CLI's ``--profile`` takes:
    each installable profile alone, the prompt-cache layout alone (the default profile on an
    endpoint that places the cache), then each other installable profile composed with the
    layout (``"amendment1+prompt-cache"``: ``compile_cached``)."""
    alone = installable()
    layouts = tuple(p.name for p in STATE.profiles.values() if not p.installable)
    composed = tuple(f"{name}+{layout}" for layout in layouts for name in alone
                     if name != DEFAULT.name)
    return (*alone, *layouts, *composed)


def get(name: str) -> InstallProfile:
    """The installable profile ``name`` (or alias); ``ValueError`` naming the valid ones."""
    found = STATE.profiles.get(STATE.names.get(name, ""))
    valid = ", ".join(installable())
    if found is None:
        raise ValueError(f"install(profile={name!r}): choose one of {valid}")
    if not found.installable:
        raise ValueError(
            f"install(profile={name!r}): {found.provides}; it is not installed by name. "
            f"Install one of {valid}"
        )
    return found


def _seed(branch: Branch, request: TurnRequest) -> CompiledChatRequest:
    return _seed_traced(branch, request).compiled


def _seed_traced(branch: Branch, request: TurnRequest) -> Trace:
    return compile_traced(branch, request, react_context=react_context_now())


def _seed_cached(
    branch: Branch, request: TurnRequest
) -> tuple[CompiledChatRequest, SegmentedBlocks, Trace]:
    return compile_for_prompt_cache_traced(branch, request, react_context_now())


def _amended(branch: Branch, request: TurnRequest) -> Compiled:
    from lionagi_turns.profiles.amendment1 import _integration

    settings = current()
    return _integration.compile_installed(
        branch, request, _settings(settings.budgets), _ceiling(settings.ceiling)
    )


def _amended_cached(
    branch: Branch, request: TurnRequest
) -> tuple[Compiled, SegmentedBlocks, Trace]:
    from lionagi_turns.profiles.amendment1 import _integration

    settings = current()
    return _integration.compile_installed_cached(
        branch, request, _settings(settings.budgets), _ceiling(settings.ceiling)
    )


def _settings(budgets: object) -> amended.SectionBudgets | None:
    # checked by check_settings when installed
    return cast("amended.SectionBudgets | None", budgets)


def _ceiling(ceiling: object) -> InputCeiling | None:
    return cast("InputCeiling | None", ceiling)


def _amended_check(budgets: object, ceiling: object) -> None:
    from lionagi_turns.profiles.amendment1 import _integration

    _integration.check_settings(budgets, ceiling)


DEFAULT = InstallProfile(
    name="default",
    provides="the seed compiler (ADR-0007)",
    compile=_seed,
    compile_cached=_seed_cached,
    aliases=("adr-0007",),
    traced=_seed_traced,
)
register(DEFAULT)
register(
    InstallProfile(
        name="amendment1",
        provides="ADR-0007 Amendment 1: section budgets, an input ceiling, recorded evictions",
        compile=_amended,
        compile_cached=_amended_cached,
        settings=frozenset({"budgets", "ceiling"}),
        check_settings=_amended_check,
    )
)
register(
    InstallProfile(
        name="prompt-cache",
        provides="the prompt-cache layout (ADR-0127) is selected for each call whose endpoint "
        "places the prompt cache",
        compile=_seed,
        compile_cached=_seed_cached,
        installable=False,
    )
)

PROFILES: tuple[str, ...] = installable()


def register_stages(
    name: str, provides: str, factory: Callable[[], Sequence[Stage]]
) -> None:
    """Register the profile ``name`` made of the stages ``factory()`` returns (module contract);
    ``ValueError`` for a name in use, ``TypeError`` for a factory that is not callable or
    returns anything but stages (checked once, now)."""
    if not callable(factory):
        raise TypeError(f"register_stages({name!r}): factory must be callable, got "
                        f"{type(factory).__name__}")

    def stages() -> tuple[Stage, ...]:
        return check_stages(factory())

    stages()

    def traced(branch: Branch, request: TurnRequest) -> Trace:
        return compile_traced(branch, request, stages=stages(), react_context=react_context_now())

    def compile(branch: Branch, request: TurnRequest) -> CompiledChatRequest:
        return traced(branch, request).compiled

    def compile_cached(
        branch: Branch, request: TurnRequest
    ) -> tuple[CompiledChatRequest, SegmentedBlocks, Trace]:
        return compile_for_prompt_cache_traced(branch, request, react_context_now(),
                                               before=stages())

    register(InstallProfile(name=name, provides=provides, compile=compile,
                            compile_cached=compile_cached, stages=stages, traced=traced))


def unregister(name: str) -> None:
    """Remove the stage profile ``name`` (``register_stages``); ``ValueError`` for a profile
    that is not one, or that is installed."""
    with lock:
        found = STATE.profiles.get(STATE.names.get(name, ""))
        if found is None or found.stages is None:
            raise ValueError(f"no stage profile is registered as {name!r}")
        if current().profile is found:
            raise ValueError(f"profile {name!r} is installed; uninstall() first")
        del STATE.profiles[found.name]
        for alias in (found.name, *found.aliases):
            STATE.names.pop(alias, None)


def stages_of(name: str) -> tuple[Stage, ...] | None:
    """The stages of the registered profile ``name`` (module contract); ``ValueError`` for
    an unknown name."""
    found = STATE.profiles.get(STATE.names.get(name, ""))
    if found is None:
        raise ValueError(f"no profile is registered as {name!r}")
    if found.name == DEFAULT.name:
        return ()
    return None if found.stages is None else found.stages()



def current() -> Installed:
    """The installed profile (``"default"`` when none was installed)."""
    with lock:
        return STATE.installed or Installed(DEFAULT)


def put(installed: Installed) -> None:
    """Make ``installed`` the installed profile."""
    with lock:
        STATE.installed = installed


def clear() -> None:
    """Back to the default profile (after ``uninstall()``)."""
    put(Installed(DEFAULT))


def compile_installed(branch: Branch, request: TurnRequest) -> Compiled:
    """``request`` compiled as the installed adapter compiles it (no prompt-cache layout)."""
    return current().profile.compile(branch, request)


def compile_installed_traced(branch: Branch, request: TurnRequest) -> tuple[Compiled, Trace | None]:
    """``compile_installed``, and the trace of that one compile when the installed profile is
    the pipeline's alone (the default profile, a stage profile: ``InstallProfile.traced``);
    None for a profile that compiles otherwise."""
    profile = current().profile
    if profile.traced is None:
        return profile.compile(branch, request), None
    trace = profile.traced(branch, request)
    return trace.compiled, trace


def compile_installed_cached(
    branch: Branch, request: TurnRequest
) -> tuple[Compiled, SegmentedBlocks, Trace]:
    """``request`` compiled by the installed profile composed with the prompt-cache layout,
    and the compile's trace."""
    return current().profile.compile_cached(branch, request)
