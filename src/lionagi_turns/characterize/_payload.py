"""Payload entries of the registry: each neutralises one intended difference in the messages.

Each function is an ``IntendedDifference.explain``: it returns a ``Step`` with one side
rewritten, or None when the difference is not present in exactly the form it predicts.
"""

from __future__ import annotations

import dataclasses
import json

import yaml
from lionagi.libs.schema.minimal_yaml import minimal_yaml

from lionagi_turns.characterize._facts import (
    Facts,
    JsonObject,
    Payload,
    Source,
    State,
    Step,
    added_results,
    guidance_text,
    plain_value,
)
from lionagi_turns.characterize._rewrite import rewrite_user_sections, rewrite_user_texts
from lionagi_turns.characterize._sections import render_sections, section_text, split_sections
from lionagi_turns.characterize.legacy import (
    legacy_messages_for_view,
    legacy_messages_with_system,
)
from lionagi_turns.core.history import branch_system
from lionagi_turns.core.parts import http_url


def empty_progression(facts: Facts, state: State) -> Step | None:
    """Legacy side: lionagi re-run on the empty view the compiler used for ``()``."""
    if facts.request.progression != ():
        return None
    try:
        legacy: Payload | None = legacy_messages_for_view(facts.branch, facts.request, [])
        legacy_exc: BaseException | None = None
    except Exception as exc:
        legacy, legacy_exc = None, exc
    before = state.legacy or []
    compiled = state.compiled or []
    changed = frozenset(
        i
        for i in range(len(compiled))
        if legacy is None or i >= len(before) or i >= len(legacy) or before[i] != legacy[i]
    )
    if legacy is not None:
        legacy = json.loads(json.dumps(legacy))
    new = dataclasses.replace(state, legacy=legacy, legacy_exc=legacy_exc)
    return Step(new, changed)


def reloaded_system(facts: Facts, state: State) -> Step | None:
    """Legacy side: on a branch whose ``msgs.system`` is None while its pile starts with a
    System record (lionagi 0.36's ``Branch.from_dict``), lionagi re-run with that record as
    ``msgs.system``, the system the compiler folds."""
    system = branch_system(facts.branch)
    if facts.branch.msgs.system is not None or system is None:
        return None
    try:
        legacy: Payload | None = legacy_messages_with_system(facts.branch, facts.request, system)
        legacy_exc: BaseException | None = None
    except Exception as exc:
        legacy, legacy_exc = None, exc
    before = state.legacy or []
    changed = frozenset(
        i
        for i in range(len(state.compiled or []))
        if legacy is None or i >= len(before) or i >= len(legacy) or before[i] != legacy[i]
    )
    if legacy is not None:
        legacy = json.loads(json.dumps(legacy))
    return Step(dataclasses.replace(state, legacy=legacy, legacy_exc=legacy_exc), changed)


def plain_content_sections(facts: Facts, state: State) -> Step | None:
    """Compiled side: a plain_content message shown as ``fold\\n\\nplain\\n\\nContext`` (the
    parts it has) becomes the bare plain text lionagi sends."""

    def rewrite(text: str, source: Source) -> str | None:
        plain = source.content.plain_content
        if not plain:
            return None
        fold = facts.compiled_fold(source.content.guidance) if (
            source.fold_target and facts.folds
        ) else ""
        added = added_results(source.content, source.results)
        context = str(minimal_yaml({"Context": plain_value(added)})).strip() if added else ""
        if not fold and not context:
            return None
        expected = "\n\n".join(p for p in (fold, plain, context) if p)
        return plain if text == expected else None

    return rewrite_user_texts(facts, state, rewrite)


def fold_first(facts: Facts, state: State) -> Step | None:
    """Compiled side: a fold target shown as ``fold\\n\\n<YAML sections>`` (YAML could not carry
    the fold with its context section intact) goes back to the Guidance-section form lionagi
    renders; the fold's own text is left to ``context-envelope`` and ``fold-separators``."""
    if not facts.blocks:
        return None

    def rewrite(text: str, source: Source) -> str | None:
        if not source.fold_target or source.content.plain_content:
            return None
        fold = facts.compiled_fold(source.content.guidance)
        if not (text == fold or text.startswith(f"{fold}\n\n")):
            return None
        rest = text[len(fold) + 2:]
        sections = split_sections(rest) if rest else []
        if sections is None:
            return None
        return render_sections([("Guidance", section_text("Guidance", fold)), *sections])

    return rewrite_user_texts(facts, state, rewrite)


def pending_results_current(facts: Facts, state: State) -> Step | None:
    """Compiled side: under a system with no retained turn, lionagi sends the current
    instruction without the pending action results; drop exactly those from its Context."""
    if not facts.has_system or facts.projection.turns or not facts.projection.pending:
        return None

    def rewrite(doc: JsonObject, source: Source) -> JsonObject | None:
        added = added_results(source.content, source.results)
        if not added:
            return None
        held = plain_value(list(source.content.prompt_context))
        shown = yaml.safe_load(minimal_yaml({"Context": [*held, *plain_value(added)]}))
        if doc.get("Context") != shown.get("Context"):
            return None
        return {"Context": held}

    return rewrite_user_sections(facts, state, lambda s: bool(s.results), rewrite)


def systemless_context(facts: Facts, state: State) -> Step | None:
    """Compiled side: on a branch without a system lionagi drops the blocks; the fold target's
    Guidance ``envelope\\n\\nguidance`` goes back to the instruction's own guidance."""
    if facts.has_system or not facts.blocks:
        return None

    def rewrite(doc: JsonObject, source: Source) -> JsonObject | None:
        if doc.get("Guidance") != facts.compiled_fold(source.content.guidance):
            return None
        return {"Guidance": plain_value(source.content.guidance)}

    return rewrite_user_sections(facts, state, lambda s: s.fold_target, rewrite)


def context_envelope(facts: Facts, state: State) -> Step | None:
    """Compiled side: the D3 section in the fold target's Guidance becomes lionagi's
    newline-joined block contents (separators are left to ``fold-separators``)."""
    if not facts.has_system or not facts.blocks:
        return None

    def rewrite(doc: JsonObject, source: Source) -> JsonObject | None:
        guidance = guidance_text(source.content.guidance)
        if doc.get("Guidance") != facts.compiled_fold(source.content.guidance):
            return None
        parts = (facts.system, facts.joined_blocks, guidance)
        return {"Guidance": "\n\n".join(p for p in parts if p)}

    return rewrite_user_sections(facts, state, lambda s: s.fold_target, rewrite)


def fold_separators(facts: Facts, state: State) -> Step | None:
    """Compiled side: ``system\\n\\n<blocks>\\n\\nguidance`` in the fold target's Guidance
    becomes lionagi's direct concatenation ``system<blocks>guidance``."""
    if not facts.has_system:
        return None

    def rewrite(doc: JsonObject, source: Source) -> JsonObject | None:
        parts = (facts.system, facts.joined_blocks, guidance_text(source.content.guidance))
        if doc.get("Guidance") != "\n\n".join(p for p in parts if p):
            return None
        return {"Guidance": "".join(parts)}

    return rewrite_user_sections(facts, state, lambda s: s.fold_target, rewrite)


def image_url_normalised(facts: Facts, state: State) -> Step | None:
    """Legacy side: an http(s) image URL lionagi sends as written (a scheme not in lower case,
    leading spaces or controls) becomes the form its validator checked, which the compiler
    sends; only where the compiled message at the same index holds exactly that form."""
    if state.legacy is None or state.compiled is None:
        return None
    legacy = json.loads(json.dumps(state.legacy))
    changed: set[int] = set()
    for index, message in enumerate(legacy):
        content = message.get("content")
        if not isinstance(content, list) or index >= len(state.compiled):
            continue
        compiled_urls = set(_image_urls(state.compiled[index].get("content")))
        for part in content:
            url = _image_url(part)
            if url is None:
                continue
            try:
                normal = http_url(url)
            except ValueError:
                continue
            if normal is not None and normal != url and normal in compiled_urls:
                part["image_url"]["url"] = normal
                changed.add(index)
    if not changed:
        return None
    return Step(dataclasses.replace(state, legacy=legacy), frozenset(changed))


def _image_url(part: object) -> str | None:
    if not isinstance(part, dict) or part.get("type") != "image_url":
        return None
    url = (part.get("image_url") or {}).get("url")
    return url if isinstance(url, str) else None


def _image_urls(content: object) -> list[str]:
    if not isinstance(content, list):
        return []
    return [u for u in map(_image_url, content) if u is not None]
