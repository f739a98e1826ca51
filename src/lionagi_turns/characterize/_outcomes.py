"""Error entries of the registry: each resolves a pair of outcomes in which the compiler raises
its named error and lionagi behaves as the entry states.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable
from uuid import UUID

from lionagi._errors import NotFoundError
from lionagi.protocols.messages import ActionResponse, Instruction
from lionagi.protocols.messages.validators import validate_image_url

from lionagi_turns.characterize._facts import Facts, State, Step
from lionagi_turns.characterize.legacy import legacy_messages_for_view
from lionagi_turns.core.history import (
    CONSECUTIVE_INSTRUCTIONS,
    HistoryError,
    InstructionTurn,
    UnknownMessageTypeError,
)
from lionagi_turns.core.merge import merge_results
from lionagi_turns.core.parts import check_image_detail, http_url, image_part
from lionagi_turns.core.providers import check_image_hosts
from lionagi_turns.core.values import check_text, check_value


def _resolved(state: State) -> Step:
    return Step(dataclasses.replace(state, resolved=True))


def _history_defect_ids(exc: BaseException | None, kind: str) -> set[str] | None:
    """The ids named by a compiler history error whose defects are all of ``kind``."""
    if not isinstance(exc, HistoryError | UnknownMessageTypeError) or not exc.defects:
        return None
    if any(d.kind != kind for d in exc.defects):
        return None
    return {i for d in exc.defects for i in d.ids}


def missing_ids(facts: Facts, state: State) -> Step | None:
    """Compiler: one ValueError naming every missing id; lionagi: NotFoundError on the first."""
    named = _history_defect_ids(state.compiled_exc, "missing_id")
    if named is None or not isinstance(state.legacy_exc, NotFoundError):
        return None
    pile = facts.pile
    missing = [uid for uid in facts.view if uid not in pile]
    if not missing or named != {str(u) for u in missing} or str(missing[0]) not in str(
        state.legacy_exc
    ):
        return None
    return _resolved(state)


def duplicate_ids(facts: Facts, state: State) -> Step | None:
    """Compiler: ValueError naming each repeated id; lionagi: sends the record again (or, if
    it raises, raises what it raises for the view without the repeats)."""
    named = _history_defect_ids(state.compiled_exc, "duplicate_id")
    if named is None:
        return None
    repeated = {str(u) for u in facts.view if facts.view.count(u) > 1}
    if not repeated or named != repeated:
        return None
    if state.legacy_exc is not None:
        once = list(dict.fromkeys(facts.view))
        if not _legacy_acts_as_view(facts, state, once):
            return None
    return _resolved(state)


def consecutive_instructions(facts: Facts, state: State) -> Step | None:
    """Compiler: ValueError for an instruction right after an instruction; lionagi: behaves
    exactly as for the view without the later instruction (and the action results that would
    have folded into it) — same messages, or the same error that view raises."""
    exc = state.compiled_exc
    if not isinstance(exc, HistoryError):
        return None
    if not str(exc).startswith(CONSECUTIVE_INSTRUCTIONS):
        return None
    if any(d.kind != "consecutive_instructions" for d in exc.defects):
        return None
    pile = facts.pile
    dropped: set[int] = set()
    for defect in exc.defects:
        first, later = defect.positions
        dropped.add(later)
        dropped.update(
            p
            for p in range(first + 1, later)
            if isinstance(pile.get(facts.view[p]), ActionResponse)
        )
    kept = [uid for p, uid in enumerate(facts.view) if p not in dropped]
    return _resolved(state) if _legacy_acts_as_view(facts, state, kept) else None


def unknown_subtype(facts: Facts, state: State) -> Step | None:
    """Compiler: TypeError for a fixed-role kind it has no rule for; lionagi: behaves exactly
    as for the view without those records."""
    named = _history_defect_ids(state.compiled_exc, "unknown_subtype")
    if named is None:
        return None
    kept = [uid for uid in facts.view if str(uid) not in named]
    return _resolved(state) if _legacy_acts_as_view(facts, state, kept) else None


def _legacy_acts_as_view(facts: Facts, state: State, view: list[UUID]) -> bool:
    """Whether lionagi's outcome equals its outcome for ``view``: the same messages, or an
    error of the same type and text."""
    try:
        messages = legacy_messages_for_view(facts.branch, facts.request, view)
    except Exception as exc:
        return (
            state.legacy_exc is not None
            and type(exc) is type(state.legacy_exc)
            and str(exc) == str(state.legacy_exc)
        )
    return state.legacy_exc is None and json.loads(json.dumps(messages)) == state.legacy


_RESERVED_ERROR = "provider_kwargs must not contain reserved key 'messages'"


def reserved_key(facts: Facts, state: State) -> Step | None:
    """Compiler: the ADR's ValueError; lionagi: silently overwrites the caller's value."""
    exc = state.compiled_exc
    if "messages" not in facts.provider_kwargs or state.legacy is None:
        return None
    if type(exc) is not ValueError or str(exc) != _RESERVED_ERROR:
        return None
    return _resolved(state)


def image_host_deferred(facts: Facts, state: State) -> Step | None:
    """lionagi: refuses an http(s) image host while rendering; compiler: renders without I/O
    and ``check_image_hosts`` (run before invocation) refuses the same URL."""
    if state.compiled is None or not isinstance(state.legacy_exc, ValueError):
        return None
    refused = [u for u in _image_urls(facts) if _refusal(u) == str(state.legacy_exc)]
    if not refused:
        return None
    try:
        check_image_hosts(state.compiled)
    except ValueError as exc:
        if any(_sent_form(u)[:80] in str(exc) for u in refused):
            return _resolved(state)
    return None


def _sent_form(url: str) -> str:
    """The URL as the compiler sends it (``core.parts.http_url``)."""
    return http_url(url) or url


def _image_urls(facts: Facts) -> Iterable[str]:
    pile = facts.pile
    for uid in facts.view:
        msg = pile.get(uid)
        if isinstance(msg, Instruction):
            yield from msg.content.images
    yield from facts.request.instruction.content.images


def _refusal(url: str) -> str | None:
    try:
        if http_url(url) is None:
            return None
    except ValueError:
        return None
    try:
        validate_image_url(url)
    except ValueError as exc:
        return str(exc)
    return None


def refused_value(facts: Facts, state: State) -> Step | None:
    """Compiler: a ValueError/TypeError from the value and image rules (``core.values``,
    ``core.parts``: a cycle, nesting past the depth limit, a type YAML cannot represent, a set, a
    path-like image payload, an ``image_detail`` outside the contract), the rule's text followed
    by the record; lionagi: sends the value (a set in hash order, the path as a data URI, any
    detail) or fails with an error naming no record (RecursionError, yaml's RepresenterError).
    Not used when lionagi raised the equivalent error itself."""
    exc = state.compiled_exc
    if type(exc) not in (ValueError, TypeError):
        return None
    legacy = state.legacy_exc
    if legacy is not None and isinstance(exc, type(legacy)) and str(exc).startswith(str(legacy)):
        return None
    text = str(exc)
    if not any(text.startswith(f"{rule} (") for rule in _rule_refusals(facts)):
        return None
    return _resolved(state)


def _rule_refusals(facts: Facts) -> list[str]:
    """The text of every refusal the value and image rules give for the view's instructions,
    the current one, the action results folded into them and the request's call options."""
    folded = [
        (turn.message.content, turn.results)
        for turn in facts.projection.turns
        if isinstance(turn, InstructionTurn)
    ]
    folded.append((facts.request.instruction.content, facts.projection.pending))
    checks: list[Callable[..., object]] = []  # each called with no argument
    for content, results in folded:
        for index, result in enumerate(results):
            checks.append(lambda r=result, i=index: check_value(r, f"folded action result {i}"))
        if results:
            checks.append(lambda c=content, r=results: merge_results(c.prompt_context, r))
        checks.append(lambda c=content: check_image_detail(c.image_detail))
        checks.append(lambda c=content: check_value(c.prompt_context, "prompt_context"))
        for name in ("instruction", "guidance"):
            value = getattr(content, name)
            if isinstance(value, str):
                checks.append(lambda v=value, n=name: check_text(v, n))
            else:
                checks.append(lambda v=value, n=name: check_value(v, n))
        for url in content.images:
            checks.append(lambda u=url, c=content: image_part(u, c.image_detail))
    request = facts.request
    if request.tool_schemas:
        checks.append(lambda: check_value(list(request.tool_schemas), "TurnRequest.tool_schemas"))
    if isinstance(request.response_format, dict):
        checks.append(lambda: check_value(request.response_format, "TurnRequest.response_format"))
    refusals = []
    for check in checks:
        try:
            check()
        except (ValueError, TypeError) as refused:
            refusals.append(str(refused))
    return refusals
