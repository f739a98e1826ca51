"""The one registry of intended differences from lionagi 0.36, and ``compare()`` (ADR-0007 D6).

``compare(branch, request)`` computes lionagi 0.36's provider messages live
(``legacy.legacy_messages``) and the compiled ones (``compile_chat_request`` +
``to_provider_messages``), then lets each ``REGISTRY`` entry, in registry order, *explain* one
kind of difference:

- a payload entry is a normalizer: it rewrites one side to neutralise exactly its difference,
  using facts from the branch and the request (system text, context blocks, guidance, the
  instruction each user message was rendered from). It rewrites only when the message has
  exactly the form the entry predicts, so it never absorbs an unrelated change. In an
  instruction only the sections an entry changes (Guidance, Context) are re-rendered, with
  lionagi's own ``minimal_yaml``; every other section keeps its exact bytes.
- an error entry resolves a pair of outcomes in which the compiler raises its named error and
  lionagi behaves as the entry states (drops silently, sends twice, raises ``NotFoundError``).

After every entry has run, the two sides must be byte-equal (or raise equivalent errors);
anything else is reported in ``Comparison.unexplained``. An entry whose rewrite changes nothing
is not reported.

Design §4 item 9 (the recorded instruction holds no call options; the caller's instruction is
never mutated) changes neither the provider messages nor an error, so it has no entry here; it
is tested on ``CompiledChatRequest.instruction``.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, cast
from uuid import UUID

import yaml
from lionagi._errors import NotFoundError
from lionagi.libs.schema.minimal_yaml import minimal_yaml
from lionagi.ln import json_dumps
from lionagi.protocols.messages import ActionResponse, Instruction
from lionagi.protocols.messages.instruction import InstructionContent
from lionagi.protocols.messages.validators import validate_image_url

from .._compiler import compile_chat_request
from .._contracts import TurnRequest
from .._history import (
    CONSECUTIVE_INSTRUCTIONS,
    HistoryError,
    InstructionTurn,
    Projection,
    UnknownMessageTypeError,
    project_history,
    select_ids,
)
from .._providers import check_image_hosts, to_provider_messages
from .legacy import legacy_messages, legacy_messages_for_view

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("REGISTRY", "Comparison", "IntendedDifference", "compare", "registry_entry")

Payload = list[dict[str, Any]]


# --------------------------------------------------------------------------- outcomes


@dataclass(frozen=True, slots=True)
class _State:
    """Both sides of one turn as far as explained so far; ``resolved`` once an error entry
    has accounted for the whole outcome."""

    legacy: Payload | None
    compiled: Payload | None
    legacy_exc: BaseException | None
    compiled_exc: BaseException | None
    resolved: bool = False

    def same_as(self, other: _State) -> bool:
        return (
            self.legacy == other.legacy
            and self.compiled == other.compiled
            and self.legacy_exc is other.legacy_exc
            and self.compiled_exc is other.compiled_exc
            and self.resolved == other.resolved
        )


@dataclass(frozen=True, slots=True)
class _Step:
    state: _State
    indices: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class _Source:
    """The instruction one compiled user message was rendered from."""

    content: InstructionContent
    results: tuple[dict[str, Any], ...]
    fold_target: bool


class _Facts:
    """What the branch and request say about this turn, computed on demand."""

    def __init__(
        self, branch: Branch, request: TurnRequest, provider_kwargs: Mapping[str, Any]
    ) -> None:
        self.branch = branch
        self.request = request
        self.provider_kwargs = provider_kwargs
        system = branch.msgs.system
        self.system: str = system.rendered if system is not None else ""
        self.has_system = system is not None
        self.blocks = request.context_blocks
        self.pile: Mapping[UUID, Any] = _pile_of(branch)

    @cached_property
    def view(self) -> tuple[UUID, ...]:
        return select_ids(self.branch, self.request.progression)

    @cached_property
    def projection(self) -> Projection:
        return project_history(self.branch, self.view)

    @cached_property
    def envelope(self) -> str:
        """ADR D3's section, built from the ADR's formula (not from the compiler's code)."""
        if not self.blocks:
            return ""
        payload = [{"provider_name": b.provider_name, "content": b.content} for b in self.blocks]
        return (
            "LIONAGI_CONTEXT_BLOCKS_JSON\n"
            + json_dumps(payload, sort_keys=True)
            + "\nEND_LIONAGI_CONTEXT_BLOCKS_JSON"
        )

    @cached_property
    def joined_blocks(self) -> str:
        """lionagi 0.36's rendering of the blocks: their contents joined by one newline."""
        return "\n".join(b.content for b in self.blocks)

    @property
    def folds(self) -> bool:
        return self.has_system or bool(self.blocks)

    def sources(self, compiled: Payload) -> list[tuple[int, _Source]] | None:
        """Compiled user-message indices paired with their source instruction, or None when
        the user messages do not correspond one-to-one with the retained instructions plus
        the current one."""
        projection = self.projection
        sources = [
            (turn.message.content, tuple(turn.results))
            for turn in projection.turns
            if isinstance(turn, InstructionTurn)
        ]
        sources.append((self.request.instruction.content, tuple(projection.pending)))
        users = [i for i, m in enumerate(compiled) if m.get("role") == "user"]
        if len(users) != len(sources):
            return None
        return [
            (index, _Source(content, results, fold_target=(k == 0)))
            for k, (index, (content, results)) in enumerate(zip(users, sources, strict=True))
        ]

    def compiled_fold(self, guidance: Any) -> str:
        """ADR D2.4: system, context section, guidance; non-empty ones joined by two newlines."""
        return "\n\n".join(p for p in (self.system, self.envelope, _guidance_text(guidance)) if p)


def _pile_of(branch: Branch) -> Mapping[UUID, Any]:
    """``branch``'s stored messages by id (read only)."""
    manager: Any = cast(Any, branch).msgs
    pile: Mapping[UUID, Any] = manager.messages.collections
    return pile


def _guidance_text(guidance: Any) -> str:
    """Guidance as the fold shows it (design §5): falsy is absent, text as is, anything else
    minimal YAML."""
    if not guidance:
        return ""
    if isinstance(guidance, str):
        return guidance
    return minimal_yaml(_plain(guidance)).strip()


def _plain(value: Any) -> Any:
    """``value`` with lionagi's tracked containers turned into plain dicts and lists."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _added_results(content: InstructionContent, results: Sequence[dict[str, Any]]) -> list[Any]:
    """The results folded into ``content``'s context: each one not equal to an item already
    there (ADR D2.2)."""
    merged = list(content.prompt_context)
    start = len(merged)
    for result in results:
        if result not in merged:
            merged.append(result)
    return merged[start:]


# --------------------------------------------------------------------------- message text


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content and isinstance(content[0], dict):
        part = content[0]
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            text: str = part["text"]
            return text
    return None


def _with_text(content: Any, text: str) -> Any:
    if isinstance(content, str):
        return text
    return [{**content[0], "text": text}, *content[1:]]


_SECTION_KEYS = ("Guidance", "Instruction", "Context", "Tools", "ResponseSchema", "ResponseFormat")
_SECTION_START = re.compile("^(" + "|".join(_SECTION_KEYS) + r"):(?: |$)")


def _sections(text: str) -> list[tuple[str, str]] | None:
    """The top-level sections of a rendered instruction as ``(key, raw text)`` in order, or
    None when ``text`` is not a structured instruction. Block values are indented and list
    items start with ``-``, so a section starts exactly at a column-0 ``<Key>:`` line."""
    lines = text.split("\n")
    out: list[tuple[str, list[str]]] = []
    for line in lines:
        match = _SECTION_START.match(line)
        if match:
            out.append((match.group(1), [line]))
        elif out:
            out[-1][1].append(line)
        else:
            return None
    keys = [k for k, _ in out]
    if len(set(keys)) != len(keys):
        return None
    # Each section keeps the line break that ends it; only the last has none.
    return [
        (k, "\n".join(chunk) + ("\n" if i < len(out) - 1 else ""))
        for i, (k, chunk) in enumerate(out)
    ]


def _section_value(raw: str, key: str, last: bool) -> tuple[bool, Any]:
    """``(True, value)`` for one raw section, or ``(False, None)`` if it does not load. The
    last section lost its line break to lionagi's final ``strip()``; it is loaded with one."""
    try:
        loaded = yaml.safe_load(raw + "\n" if last else raw)
    except yaml.YAMLError:
        return False, None
    if not isinstance(loaded, dict) or set(loaded) != {key}:
        return False, None
    return True, loaded[key]


def _render_sections(sections: Sequence[tuple[str, str | None]]) -> str:
    """Raw sections back to instruction text; a None section is left out. With none left the
    text is lionagi's rendering of an empty document."""
    kept = [raw for _, raw in sections if raw is not None]
    if not kept:
        return str(minimal_yaml({})).strip()
    return "".join(kept).strip()


def _section_text(key: str, value: Any) -> str | None:
    """``key: value`` as lionagi renders that section, or None when lionagi leaves it out."""
    if value in (None, "", [], {}):
        return None
    rendered = str(minimal_yaml({key: value}))
    return None if rendered.strip() == "{}" else rendered


# A section rewrite gets the message's loaded sections and its source and returns the new
# values of the sections it changes, or None when the message is not in the predicted form.
_SectionRewrite = Callable[[dict[str, Any], _Source], dict[str, Any] | None]


def _rewrite_user_sections(
    facts: _Facts, state: _State, pick: Callable[[_Source], bool], rewrite: _SectionRewrite
) -> _Step | None:
    """Apply ``rewrite`` to each structured (not plain_content) compiled user message whose
    source ``pick`` selects. Only the sections it changes are re-rendered (with lionagi's
    ``minimal_yaml``); every other section keeps its exact bytes."""

    def rewrite_text(text: str, source: _Source) -> str | None:
        if source.content.plain_content or not pick(source):
            return None
        sections = _sections(text)
        if sections is None:
            return None
        values: dict[str, Any] = {}
        for position, (key, raw) in enumerate(sections):
            loaded, value = _section_value(raw, key, last=position == len(sections) - 1)
            if not loaded:
                return None
            values[key] = value
        changes = rewrite(values, source)
        if not changes or all(values.get(k) == v for k, v in changes.items()):
            return None
        new = [(k, _section_text(k, changes[k]) if k in changes else raw) for k, raw in sections]
        missing = [k for k in changes if k not in values]
        if missing:  # only Guidance can be added, and it comes first
            new = [(k, _section_text(k, changes[k])) for k in missing] + new
        return _render_sections(new)

    return _rewrite_user_texts(facts, state, rewrite_text)


# --------------------------------------------------------------------------- payload entries


def _empty_progression(facts: _Facts, state: _State) -> _Step | None:
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
    return _Step(new, changed)


def _rewrite_user_texts(
    facts: _Facts, state: _State, rewrite: Callable[[str, _Source], str | None]
) -> _Step | None:
    """Replace the text of each compiled user message for which ``rewrite(text, source)``
    returns a new text (None: not in the predicted form, left as it is)."""
    if state.compiled is None or state.legacy is None:
        return None
    pairs = facts.sources(state.compiled)
    if pairs is None:
        return None
    compiled = list(state.compiled)
    touched: set[int] = set()
    for index, source in pairs:
        message = compiled[index]
        text = _text(message["content"])
        new = rewrite(text, source) if text is not None else None
        if new is None:
            continue
        compiled[index] = {**message, "content": _with_text(message["content"], new)}
        touched.add(index)
    if not touched:
        return None
    return _Step(dataclasses.replace(state, compiled=compiled), frozenset(touched))


def _plain_content_sections(facts: _Facts, state: _State) -> _Step | None:
    """Compiled side: a plain_content message shown as ``fold\\n\\nplain\\n\\nContext`` (the
    parts it has) becomes the bare plain text lionagi sends."""

    def rewrite(text: str, source: _Source) -> str | None:
        plain = source.content.plain_content
        if not plain:
            return None
        fold = facts.compiled_fold(source.content.guidance) if (
            source.fold_target and facts.folds
        ) else ""
        added = _added_results(source.content, source.results)
        context = str(minimal_yaml({"Context": _plain(added)})).strip() if added else ""
        if not fold and not context:
            return None
        expected = "\n\n".join(p for p in (fold, plain, context) if p)
        return plain if text == expected else None

    return _rewrite_user_texts(facts, state, rewrite)


def _fold_first(facts: _Facts, state: _State) -> _Step | None:
    """Compiled side: a fold target shown as ``fold\\n\\n<YAML sections>`` (YAML could not carry
    the fold with its context section intact) goes back to the Guidance-section form lionagi
    renders; the fold's own text is left to ``context-envelope`` and ``fold-separators``."""
    if not facts.blocks:
        return None

    def rewrite(text: str, source: _Source) -> str | None:
        if not source.fold_target or source.content.plain_content:
            return None
        fold = facts.compiled_fold(source.content.guidance)
        if not (text == fold or text.startswith(f"{fold}\n\n")):
            return None
        rest = text[len(fold) + 2:]
        sections = _sections(rest) if rest else []
        if sections is None:
            return None
        return _render_sections([("Guidance", _section_text("Guidance", fold)), *sections])

    return _rewrite_user_texts(facts, state, rewrite)


def _pending_results_current(facts: _Facts, state: _State) -> _Step | None:
    """Compiled side: under a system with no retained turn, lionagi sends the current
    instruction without the pending action results; drop exactly those from its Context."""
    if not facts.has_system or facts.projection.turns or not facts.projection.pending:
        return None

    def rewrite(doc: dict[str, Any], source: _Source) -> dict[str, Any] | None:
        added = _added_results(source.content, source.results)
        if not added:
            return None
        held = _plain(list(source.content.prompt_context))
        shown = yaml.safe_load(minimal_yaml({"Context": [*held, *_plain(added)]}))
        if doc.get("Context") != shown.get("Context"):
            return None
        return {"Context": held}

    return _rewrite_user_sections(facts, state, lambda s: bool(s.results), rewrite)


def _systemless_context(facts: _Facts, state: _State) -> _Step | None:
    """Compiled side: on a branch without a system lionagi drops the blocks; the fold target's
    Guidance ``envelope\\n\\nguidance`` goes back to the instruction's own guidance."""
    if facts.has_system or not facts.blocks:
        return None

    def rewrite(doc: dict[str, Any], source: _Source) -> dict[str, Any] | None:
        if doc.get("Guidance") != facts.compiled_fold(source.content.guidance):
            return None
        return {"Guidance": _plain(source.content.guidance)}

    return _rewrite_user_sections(facts, state, lambda s: s.fold_target, rewrite)


def _context_envelope(facts: _Facts, state: _State) -> _Step | None:
    """Compiled side: the D3 section in the fold target's Guidance becomes lionagi's
    newline-joined block contents (separators are left to ``fold-separators``)."""
    if not facts.has_system or not facts.blocks:
        return None

    def rewrite(doc: dict[str, Any], source: _Source) -> dict[str, Any] | None:
        guidance = _guidance_text(source.content.guidance)
        if doc.get("Guidance") != facts.compiled_fold(source.content.guidance):
            return None
        parts = (facts.system, facts.joined_blocks, guidance)
        return {"Guidance": "\n\n".join(p for p in parts if p)}

    return _rewrite_user_sections(facts, state, lambda s: s.fold_target, rewrite)


def _fold_separators(facts: _Facts, state: _State) -> _Step | None:
    """Compiled side: ``system\\n\\n<blocks>\\n\\nguidance`` in the fold target's Guidance
    becomes lionagi's direct concatenation ``system<blocks>guidance``."""
    if not facts.has_system:
        return None

    def rewrite(doc: dict[str, Any], source: _Source) -> dict[str, Any] | None:
        parts = (facts.system, facts.joined_blocks, _guidance_text(source.content.guidance))
        if doc.get("Guidance") != "\n\n".join(p for p in parts if p):
            return None
        return {"Guidance": "".join(parts)}

    return _rewrite_user_sections(facts, state, lambda s: s.fold_target, rewrite)


# --------------------------------------------------------------------------- error entries


def _resolved(state: _State) -> _Step:
    return _Step(dataclasses.replace(state, resolved=True))


def _history_defect_ids(exc: BaseException | None, kind: str) -> set[str] | None:
    """The ids named by a compiler history error whose defects are all of ``kind``."""
    if not isinstance(exc, HistoryError | UnknownMessageTypeError) or not exc.defects:
        return None
    if any(d.kind != kind for d in exc.defects):
        return None
    return {i for d in exc.defects for i in d.ids}


def _missing_ids(facts: _Facts, state: _State) -> _Step | None:
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


def _duplicate_ids(facts: _Facts, state: _State) -> _Step | None:
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


def _consecutive_instructions(facts: _Facts, state: _State) -> _Step | None:
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


def _unknown_subtype(facts: _Facts, state: _State) -> _Step | None:
    """Compiler: TypeError for a fixed-role kind it has no rule for; lionagi: behaves exactly
    as for the view without those records."""
    named = _history_defect_ids(state.compiled_exc, "unknown_subtype")
    if named is None:
        return None
    kept = [uid for uid in facts.view if str(uid) not in named]
    return _resolved(state) if _legacy_acts_as_view(facts, state, kept) else None


def _legacy_acts_as_view(facts: _Facts, state: _State, view: list[UUID]) -> bool:
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


def _reserved_key(facts: _Facts, state: _State) -> _Step | None:
    """Compiler: the ADR's ValueError; lionagi: silently overwrites the caller's value."""
    exc = state.compiled_exc
    if "messages" not in facts.provider_kwargs or state.legacy is None:
        return None
    if type(exc) is not ValueError or str(exc) != _RESERVED_ERROR:
        return None
    return _resolved(state)


def _image_host_deferred(facts: _Facts, state: _State) -> _Step | None:
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
        if any(u[:80] in str(exc) for u in refused):
            return _resolved(state)
    return None


def _image_urls(facts: _Facts) -> Iterable[str]:
    pile = facts.pile
    for uid in facts.view:
        msg = pile.get(uid)
        if isinstance(msg, Instruction):
            yield from msg.content.images
    yield from facts.request.instruction.content.images


def _refusal(url: str) -> str | None:
    if not url.startswith(("http://", "https://")):
        return None
    try:
        validate_image_url(url)
    except ValueError as exc:
        return str(exc)
    return None


# --------------------------------------------------------------------------- registry

_Explain = Callable[[_Facts, _State], _Step | None]


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
        "empty-progression", "D2.1", "design §4.6",
        "progression=() -> legacy: treated as unset, whole history sent; compiled: no history",
        _empty_progression,
    ),
    IntendedDifference(
        "plain-content-sections", "D2.4", "design §4.11",
        "plain_content instruction that is the fold target or receives results -> legacy: "
        "plain text only (policy/results dropped); compiled: fold, plain text, Context sections",
        _plain_content_sections,
    ),
    IntendedDifference(
        "fold-first", "D3", "design §5",
        "fold holding a context section that YAML cannot carry intact (CR, NEL, LS/PS, DEL, "
        "C1 controls) -> legacy: a quoted Guidance scalar; compiled: the fold verbatim as its "
        "own section before the YAML sections",
        _fold_first,
    ),
    IntendedDifference(
        "pending-results-current", "D2.2", "design §4.10",
        "action results with no conversational record before them under a system -> legacy: "
        "lost; compiled: appended to the current instruction's Context",
        _pending_results_current,
    ),
    IntendedDifference(
        "systemless-context", "D2.4", "design §4.3",
        "context blocks on a branch without a system -> legacy: dropped; compiled: folded "
        "into the first instruction's Guidance",
        _systemless_context,
    ),
    IntendedDifference(
        "context-envelope", "D3", "design §4.2",
        "context blocks -> legacy: contents joined by '\\n'; compiled: the source-attributed "
        "LIONAGI_CONTEXT_BLOCKS_JSON section",
        _context_envelope,
    ),
    IntendedDifference(
        "fold-separators", "D2.4", "design §4.1",
        "system, context and guidance in the fold -> legacy: concatenated with no separator; "
        "compiled: joined by '\\n\\n'",
        _fold_separators,
    ),
    IntendedDifference(
        "missing-ids", "D2.1", "design §4.5",
        "progression ids absent from the branch -> legacy: NotFoundError on the first; "
        "compiled: one ValueError naming all",
        _missing_ids,
    ),
    IntendedDifference(
        "duplicate-ids", "D2.1", "design §4.5",
        "an id repeated in the progression -> legacy: record sent again; compiled: ValueError",
        _duplicate_ids,
    ),
    IntendedDifference(
        "consecutive-instructions", "D2.3", "design §4.4",
        "adjacent retained instructions -> legacy: later one dropped silently; compiled: "
        "ValueError('Consecutive instructions require an intervening assistant response')",
        _consecutive_instructions,
    ),
    IntendedDifference(
        "unknown-subtype", "D2.2", "design §4.7",
        "a fixed-role message kind with no compiler rule -> legacy: dropped silently; "
        "compiled: TypeError",
        _unknown_subtype,
    ),
    IntendedDifference(
        "reserved-messages-key", "D1", "design §4.8",
        "provider kwargs holding 'messages' -> legacy: overwritten silently; compiled: "
        "ValueError(\"provider_kwargs must not contain reserved key 'messages'\")",
        _reserved_key,
    ),
    IntendedDifference(
        "image-host-check-deferred", "D4", "design §4.12",
        "refused http(s) image host -> legacy: ValueError while rendering (DNS in the "
        "renderer); compiled: renders offline, check_image_hosts refuses it before invocation",
        _image_host_deferred,
    ),
)


def registry_entry(entry_id: str) -> IntendedDifference:
    """The registry entry with ``entry_id``; KeyError lists the known ids otherwise."""
    for entry in REGISTRY:
        if entry.id == entry_id:
            return entry
    raise KeyError(f"no intended difference {entry_id!r}; known: {[e.id for e in REGISTRY]}")


# --------------------------------------------------------------------------- compare


@dataclass(frozen=True, slots=True)
class Comparison:
    """The outcome of one legacy-vs-compiled comparison.

    ``legacy``/``compiled`` are the provider messages as each side produced them (None when
    that side raised; the error is then in ``legacy_error``/``compiled_error`` as
    ``"<ExceptionType>: <text>"``). ``labels`` maps a compiled-message index to the ids of the
    entries that explain its difference; ``entries`` lists every entry used, in registry
    order; ``unexplained`` describes what no entry explains.
    """

    legacy: Payload | None
    compiled: Payload | None
    legacy_error: str | None
    compiled_error: str | None
    labels: dict[int, tuple[str, ...]]
    unexplained: tuple[str, ...]
    entries: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when every difference is explained by a registry entry."""
        return not self.unexplained


def _describe(exc: BaseException | None) -> str | None:
    return None if exc is None else f"{type(exc).__name__}: {exc}"


def compare(
    branch: Branch,
    request: TurnRequest,
    *,
    registry: Sequence[IntendedDifference] = REGISTRY,
    provider_kwargs: Mapping[str, Any] | None = None,
) -> Comparison:
    """Compare lionagi 0.36's provider messages with the compiled ones for ``request``.

    ``registry`` (default ``REGISTRY``) is the set of entries allowed to explain differences,
    applied in its order. ``provider_kwargs``, when given, replaces ``request.provider_kwargs``
    on both sides — lionagi receives it as ``imodel_kw``, the compiler through a
    ``TurnRequest`` built with it (so a reserved key fails as the ADR says). Neither the branch
    nor ``request`` is modified.
    """
    kwargs: Mapping[str, Any] = (
        request.provider_kwargs if provider_kwargs is None else provider_kwargs
    )
    compiled: Payload | None = None
    compiled_exc: BaseException | None = None
    try:
        compiled_request = (
            request
            if provider_kwargs is None
            else dataclasses.replace(request, provider_kwargs=provider_kwargs)
        )
        compiled = to_provider_messages(compile_chat_request(branch, compiled_request))
    except Exception as exc:
        compiled_exc = exc

    legacy_request = (
        request
        if provider_kwargs is None
        else _with_unchecked_kwargs(request, provider_kwargs)
    )
    legacy: Payload | None = None
    legacy_exc: BaseException | None = None
    try:
        legacy = legacy_messages(branch, legacy_request)
    except Exception as exc:
        legacy_exc = exc

    facts = _Facts(branch, request, kwargs)
    state = _State(
        json.loads(json.dumps(legacy)) if legacy is not None else None,
        json.loads(json.dumps(compiled)) if compiled is not None else None,
        legacy_exc,
        compiled_exc,
    )
    used: list[str] = []
    labels: dict[int, list[str]] = {}
    for entry in registry:
        if state.resolved:
            break
        step = entry.explain(facts, state)
        if step is None or step.state.same_as(state):
            continue
        used.append(entry.id)
        for index in sorted(step.indices):
            labels.setdefault(index, []).append(entry.id)
        state = step.state

    return Comparison(
        legacy=legacy,
        compiled=compiled,
        legacy_error=_describe(legacy_exc),
        compiled_error=_describe(compiled_exc),
        labels={i: tuple(ids) for i, ids in sorted(labels.items())},
        unexplained=tuple(_unexplained(state)),
        entries=tuple(used),
    )


def _with_unchecked_kwargs(request: TurnRequest, kwargs: Mapping[str, Any]) -> TurnRequest:
    """``request`` carrying ``kwargs`` for lionagi, which accepts any keys (a reserved one
    included, which the TurnRequest constructor would refuse)."""
    copy = dataclasses.replace(request)
    object.__setattr__(copy, "provider_kwargs", dict(kwargs))
    return copy


def _equivalent_errors(legacy: BaseException, compiled: BaseException) -> bool:
    """Same error kind: the compiled one is an instance of lionagi's class, and for the
    generic built-in classes its text also starts with lionagi's text."""
    if not isinstance(compiled, type(legacy)):
        return False
    if type(legacy) in (Exception, ValueError, TypeError, RuntimeError, KeyError):
        return str(compiled).startswith(str(legacy))
    return True


def _unexplained(state: _State) -> list[str]:
    if state.resolved:
        return []
    if state.legacy_exc is not None or state.compiled_exc is not None:
        legacy_exc, compiled_exc = state.legacy_exc, state.compiled_exc
        if (
            legacy_exc is not None
            and compiled_exc is not None
            and _equivalent_errors(legacy_exc, compiled_exc)
        ):
            return []
        return [
            f"outcomes differ: legacy {_describe(state.legacy_exc) or 'returned messages'}; "
            f"compiled {_describe(state.compiled_exc) or 'returned messages'}"
        ]
    legacy, compiled = state.legacy or [], state.compiled or []
    out: list[str] = []
    if len(legacy) != len(compiled):
        out.append(f"legacy has {len(legacy)} message(s), compiled has {len(compiled)}")
    for i, (a, b) in enumerate(zip(legacy, compiled, strict=False)):
        if a.get("role") != b.get("role"):
            out.append(f"message[{i}] role: legacy {a.get('role')!r}, compiled {b.get('role')!r}")
        elif a != b:
            out.append(f"message[{i}] ({b.get('role')}) content: {_first_difference(a, b)}")
    return out


def _first_difference(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    left = json.dumps(a.get("content"), ensure_ascii=False)
    right = json.dumps(b.get("content"), ensure_ascii=False)
    at = next(
        (i for i, (x, y) in enumerate(zip(left, right, strict=False)) if x != y),
        min(len(left), len(right)),
    )
    start = max(0, at - 30)
    return (
        f"first difference at JSON offset {at}: legacy …{left[start:at + 50]!r}… "
        f"compiled …{right[start:at + 50]!r}…"
    )
