"""The one registry of intended differences from lionagi 0.36 (ADR-0007 D6).

``REGISTRY`` lists, in the order ``compare`` applies them, every documented way the compiled
request differs from lionagi 0.36's: view entries first, then per-message payload rewrites
(``_payload``), then error entries (``_outcomes``). ``compare`` (``characterize._compare``) runs
them; see its docstring for how an entry explains a difference.

intended-differences §4.9 (the recorded instruction holds no call options; the caller's
instruction is never mutated) changes neither the provider messages nor an error, so it has no
entry here; it is tested on ``CompiledChatRequest.instruction``.

``CACHE_REGISTRY`` (defined in ``_cache_compare``) holds the prompt-cache profile's intended
differences from lionagi 0.36's own ADR-0127 path (marks, the conversation segment); the
ADR-0007 entries above that still apply in that mode (the context envelope, separators, the
named errors) are unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from lionagi_turns.characterize import _outcomes as outcomes
from lionagi_turns.characterize import _payload as payload
from lionagi_turns.characterize._cache_compare import CACHE_REGISTRY
from lionagi_turns.characterize._facts import Facts, State, Step

__all__ = ("CACHE_REGISTRY", "REGISTRY", "IntendedDifference", "registry_entry")

_Explain = Callable[[Facts, State], Step | None]


@dataclass(frozen=True, slots=True)
class IntendedDifference:
    """One documented way the compiled request differs from lionagi 0.36's.

    ``explain`` neutralises exactly this difference in a pair of outcomes (see the module
    docstring); it returns None when the difference is not present in the form it predicts.
    """

    id: str
    adr_clause: str
    design_ref: str
    summary: str
    explain: _Explain = field(repr=False, compare=False)


#: Every intended difference that can show in provider messages or as an error, in the order
#: ``compare`` applies them (view first, then per-message rewrites, then errors).
REGISTRY: tuple[IntendedDifference, ...] = (
    IntendedDifference(
        "empty-progression", "D2.1", "intended-differences §4.6",
        "progression=() -> legacy: treated as unset, whole history sent; compiled: no history",
        payload.empty_progression,
    ),
    IntendedDifference(
        "reloaded-system", "D2.4", "intended-differences §4.13",
        "branch reloaded with lionagi's Branch.from_dict (msgs.system None, a System record "
        "at the pile's head) -> legacy: no system text; compiled: that System folded",
        payload.reloaded_system,
    ),
    IntendedDifference(
        "plain-content-sections", "D2.4", "intended-differences §4.11",
        "plain_content instruction that is the fold target or receives results -> legacy: "
        "plain text only (policy/results dropped); compiled: fold, plain text, Context sections",
        payload.plain_content_sections,
    ),
    IntendedDifference(
        "fold-first", "D3", "intended-differences §5",
        "fold holding a context section that YAML cannot carry intact (CR, NEL, LS/PS, DEL, "
        "C1 controls) -> legacy: a quoted Guidance scalar; compiled: the fold verbatim as its "
        "own section before the YAML sections",
        payload.fold_first,
    ),
    IntendedDifference(
        "pending-results-current", "D2.2", "intended-differences §4.10",
        "action results with no conversational record before them under a system -> legacy: "
        "lost; compiled: appended to the current instruction's Context",
        payload.pending_results_current,
    ),
    IntendedDifference(
        "systemless-context", "D2.4", "intended-differences §4.3",
        "context blocks on a branch without a system -> legacy: dropped; compiled: folded "
        "into the first instruction's Guidance",
        payload.systemless_context,
    ),
    IntendedDifference(
        "context-envelope", "D3", "intended-differences §4.2",
        "context blocks -> legacy: contents joined by '\\n'; compiled: the source-attributed "
        "LIONAGI_CONTEXT_BLOCKS_JSON section",
        payload.context_envelope,
    ),
    IntendedDifference(
        "fold-separators", "D2.4", "intended-differences §4.1",
        "system, context and guidance in the fold -> legacy: concatenated with no separator; "
        "compiled: joined by '\\n\\n'",
        payload.fold_separators,
    ),
    IntendedDifference(
        "image-url-normalised", "D4", "architecture.md, Hostile input",
        "http(s) image URL with a scheme not in lower case or leading spaces/controls -> "
        "legacy: sent as written (its host resolved while rendering); compiled: sent as the "
        "form lionagi's validator checks (lower-case scheme, leading spaces removed)",
        payload.image_url_normalised,
    ),
    IntendedDifference(
        "missing-ids", "D2.1", "intended-differences §4.5",
        "progression ids absent from the branch -> legacy: NotFoundError on the first; "
        "compiled: one ValueError (also a NotFoundError) naming all",
        outcomes.missing_ids,
    ),
    IntendedDifference(
        "duplicate-ids", "D2.1", "intended-differences §4.5",
        "an id repeated in the progression -> legacy: record sent again; compiled: ValueError",
        outcomes.duplicate_ids,
    ),
    IntendedDifference(
        "consecutive-instructions", "D2.3", "intended-differences §4.4",
        "adjacent retained instructions -> legacy: later one dropped silently; compiled: "
        "ValueError('Consecutive instructions require an intervening assistant response')",
        outcomes.consecutive_instructions,
    ),
    IntendedDifference(
        "unknown-subtype", "D2.2", "intended-differences §4.7",
        "a fixed-role message kind with no compiler rule -> legacy: dropped silently; "
        "compiled: TypeError",
        outcomes.unknown_subtype,
    ),
    IntendedDifference(
        "reserved-messages-key", "D1", "intended-differences §4.8",
        "provider kwargs holding 'messages' -> legacy: overwritten silently; compiled: "
        "ValueError(\"provider_kwargs must not contain reserved key 'messages'\")",
        outcomes.reserved_key,
    ),
    IntendedDifference(
        "image-host-check-deferred", "D4", "intended-differences §4.12",
        "refused http(s) image host -> legacy: ValueError while rendering (DNS in the "
        "renderer); compiled: renders offline, check_image_hosts refuses it before invocation",
        outcomes.image_host_deferred,
    ),
    IntendedDifference(
        "refused-values", "D2.5", "architecture.md, Hostile input",
        "a cyclic, too deep, unrepresentable or set value, a path-like image string, or an "
        "image_detail outside the contract -> legacy: sent (set in hash order, path as a "
        "data URI) or an error naming no record; compiled: ValueError/TypeError naming the "
        "place in the value and the record",
        outcomes.refused_value,
    ),
)


def registry_entry(entry_id: str) -> IntendedDifference:
    """The registry entry with ``entry_id``; KeyError lists the known ids otherwise."""
    for entry in REGISTRY:
        if entry.id == entry_id:
            return entry
    raise KeyError(f"no intended difference {entry_id!r}; known: {[e.id for e in REGISTRY]}")
