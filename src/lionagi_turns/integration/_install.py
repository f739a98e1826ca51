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
``tools.context.context.ContextTool.bind``          ``_patches.recording_bind`` (records each
                                                    eviction at its source; amendment1 only)
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

import os
from collections.abc import Iterator
from contextlib import contextmanager

from lionagi_turns.core.support import IntegrationError
from lionagi_turns.integration import _registry
from lionagi_turns.integration._capture_file import configure as configure_capture
from lionagi_turns.integration._compile import seed_profile_forced as seed_profile_forced
from lionagi_turns.integration._estimate import estimate_next_request_tokens
from lionagi_turns.integration._originals import FOLD, lock, saved, site
from lionagi_turns.integration._otel import configure as configure_otel
from lionagi_turns.integration._patches import (
    FOLD_DEFAULT,
    TARGETS,
    check_target,
    describe,
    fold_kwdefaults,
    lionagi_version,
    targets_for,
)
from lionagi_turns.integration._registry import PROFILES
from lionagi_turns.integration._run import (
    apply_context_providers,
    prepare_run_kwargs,
    prepare_run_turn_kwargs,
    run_recording_outcome,
)
from lionagi_turns.integration._state import STATE
from lionagi_turns.integration._structure import build_instruction, propagate_structure, structures
from lionagi_turns.integration._warnings import PROMPT_CACHE_GAP as PROMPT_CACHE_GAP
from lionagi_turns.integration._warnings import TurnsCompatibilityWarning, reset_warnings

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

# Read from this module by the tests and the benchmarks (with seed_profile_forced and
# PROMPT_CACHE_GAP, imported above as themselves).
_lock = lock
_structures = structures
_reset_warnings = reset_warnings


def install(
    *,
    profile: str = "default",
    budgets: object = None,
    ceiling: object = None,
    capture_dir: str | os.PathLike[str] | None = None,
    otel: bool | None = None,
) -> None:
    """Route lionagi's chat/communicate/operate/ReAct/run and ``prepare_messages_for_chat``
    through the compiler. Idempotent; raises ``IntegrationError`` (changing nothing) when
    lionagi is not 0.36.x or a name to replace is not lionagi's original.

    ``profile`` names a registered profile (``_registry``: ``"default"`` or ``"amendment1"``;
    any other name raises ``ValueError`` naming the valid ones). ``profile="amendment1"``
    compiles through ``lionagi_turns.amendment1`` (ADR-0007 Amendment 1) with ``budgets`` (an
    ``amendment1.SectionBudgets``; None: unbounded) and records lionagi's context-tool
    evictions and compactions at their source; ``ceiling`` (an ``amendment1.InputCeiling``;
    None: none) bounds each whole request, cutting the history in steps
    (``amendment1._ceiling``). On an endpoint that places the prompt cache the profile
    composes with the ADR-0127 layout. Installing another profile while one is installed
    raises ``IntegrationError``: uninstall first. ``capture_dir`` appends one capture line
    per call under that directory (None: the ``LIONAGI_TURNS_CAPTURE`` directory, if set;
    ``_capture_file``). ``otel`` emits one OpenTelemetry span per call (None: as
    ``LIONAGI_TURNS_OTEL`` says; ``_otel``).

    Only the module attributes of ``_patches.TARGETS`` are rebound: a name imported from
    one of those modules before ``install()`` (``from lionagi.agent.context_fold import
    estimate_next_request_tokens``) keeps lionagi's original; call it through its module, or
    import it after ``install()`` (docs/usage.md, "Names imported before install()")."""
    chosen = _registry.get(profile)
    for setting, value in (("budgets", budgets), ("ceiling", ceiling)):
        if value is not None and setting not in chosen.settings:
            takers = [p for p in PROFILES if setting in _registry.get(p).settings]
            names = " or ".join(f"profile={p!r}" for p in takers)
            raise ValueError(f"install({setting}=...) applies to {names} only")
    if chosen.check_settings is not None:
        chosen.check_settings(budgets, ceiling)
    with lock:
        current = _registry.current().profile
        if saved and chosen.name != current.name:
            raise IntegrationError(
                f"lionagi-turns is installed with profile {current.name!r}; call uninstall() "
                f"before install(profile={profile!r})"
            )
        _install_locked(chosen.name)
        _registry.put(_registry.Installed(chosen, budgets, ceiling))
        configure_capture(capture_dir)
        configure_otel(otel)


def _install_locked(profile: str) -> None:
    """Rebind ``targets_for(profile)`` (and ContextFold's default estimate); no-op when
    installed. Checks every target first, so a refusal changes nothing."""
    with lock:
        if saved:
            return
        version = lionagi_version()
        targets = targets_for(profile)
        originals = {(t.site, t.name): check_target(t, version) for t in targets}
        fold_defaults = fold_kwdefaults()
        lionagi_estimate = originals[(FOLD, "estimate_next_request_tokens")]
        if fold_defaults.get("estimate") is not lionagi_estimate:
            raise IntegrationError(
                f"cannot install lionagi-turns: {FOLD}.ContextFold's default estimate is "
                f"{describe(fold_defaults.get('estimate'))}, not lionagi {version}'s "
                f"{FOLD}.estimate_next_request_tokens. Another patch is active (undo it, or "
                "install lionagi-turns first)."
            )
        for target in targets:
            setattr(site(target.site), target.name, target.replacement)
        fold_defaults["estimate"] = estimate_next_request_tokens
        originals[FOLD_DEFAULT] = lionagi_estimate
        saved.update(originals)


def uninstall() -> None:
    """Restore exactly the originals ``install()`` replaced. No-op when not installed; raises
    ``IntegrationError`` (changing nothing) when one of our replacements was itself replaced."""
    with lock:
        if not saved:
            return
        targets = [t for t in TARGETS if (t.site, t.name) in saved]
        foreign = [
            f"{t.site}.{t.name} is {describe(getattr(site(t.site), t.name))}"
            for t in targets
            if getattr(site(t.site), t.name) is not t.replacement
        ]
        fold_defaults = fold_kwdefaults()
        if fold_defaults.get("estimate") is not estimate_next_request_tokens:
            foreign.append(
                f"{FOLD}.ContextFold's default estimate is "
                f"{describe(fold_defaults.get('estimate'))}"
            )
        if foreign:
            raise IntegrationError(
                "cannot uninstall lionagi-turns: a later patch replaced its functions ("
                + "; ".join(foreign)
                + "). Undo that patch first, then call uninstall()."
            )
        for target in targets:
            setattr(site(target.site), target.name, saved[(target.site, target.name)])
        fold_defaults["estimate"] = saved[FOLD_DEFAULT]
        saved.clear()
        _registry.clear()


def is_installed() -> bool:
    """Whether ``install()`` is in effect."""
    with lock:
        return bool(saved)


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
    state = STATE  # the open scopes' count and owner change only under ``lock``
    with lock:
        if state.scopes == 0:
            state.scope_owned = not saved
        _install_locked(_registry.current().profile.name)
        state.scopes += 1
    try:
        yield
    finally:
        with lock:
            state.scopes -= 1
            if state.scopes == 0 and state.scope_owned:
                uninstall()
                state.scope_owned = False
