"""``compare_cache_bodies``: lionagi 0.36's prompt-cache request bodies against the compiled ones.

The prompt-cache profile is compared request body by request body over one conversation, since
its differences (ADR-0127 D1, D4, D5) are about what stays the same *between* requests. Inputs:
the bodies lionagi 0.36 sent with ``install()`` off and the bodies sent with it on, for the same
scripted conversation, and ``gathered[k]``: the ``(provider name, text)`` blocks the context
providers returned for request ``k`` (the same on both sides).

Each ``CACHE_REGISTRY`` entry, in order, neutralises exactly its difference in one pair of
bodies, only when the bodies have the form it predicts:

- ``cache-segment-marks`` (ADR-0127 D5): lionagi marks one hour on its last system block and
  five minutes on the last message; the compiled body marks one hour on the last stable block,
  five minutes on the conversation block and on the last message, and five minutes on an
  earlier message only as the lookback mark (that message is followed by 20 blocks or more).
  Both sides' marks are then removed (a marked string content is the same prompt as one text
  block).
- ``cache-conversation-segment`` (ADR-0127 D4, ADR-0007 D3): the compiled system ends with one
  more block, the D3 envelope of the conversation's first-call blocks, on every request; lionagi
  instead prefixes the first user message's Guidance with this request's block texts joined by
  ``"\\n"``. A block first returned on a later call sits in that call's instruction as the D3
  envelope before its guidance, separated by ``"\\n\\n"``. The envelope block, each envelope
  prefix and lionagi's prefix are removed.

After every entry the two bodies must be equal; whatever is left is ``unexplained``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from lionagi_turns.characterize._facts import JsonObject
from lionagi_turns.characterize._sections import (
    render_sections,
    section_text,
    section_value,
    split_sections,
)
from lionagi_turns.core.contracts import ContextBlock
from lionagi_turns.core.envelope import encode_context_section

__all__ = ("CACHE_REGISTRY", "CacheComparison", "compare_cache_bodies")

Body = JsonObject
Blocks = Sequence[tuple[str, str]]
_LOOKBACK = 20


@dataclass(frozen=True, slots=True)
class CacheDifference:
    id: str
    adr_clause: str
    summary: str
    explain: Callable[[Body, Body, int, Sequence[Blocks]], tuple[Body, Body] | None]


@dataclass(frozen=True, slots=True)
class CacheComparison:
    """Per request: the entries used and what no entry explains."""

    entries: tuple[tuple[str, ...], ...]
    unexplained: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.unexplained


def _blocks(content: str | Sequence[Mapping[str, object]]) -> list[JsonObject]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [dict(b) for b in content]


def _marks(body: Body) -> list[tuple[str, int, int, object]]:
    out = [("system", i, 0, b["cache_control"])
           for i, b in enumerate(body.get("system") or ()) if "cache_control" in b]
    for i, m in enumerate(body.get("messages") or ()):
        if isinstance(m.get("content"), list):
            out += [("message", i, j, b["cache_control"])
                    for j, b in enumerate(m["content"]) if "cache_control" in b]
    return out


def _unmarked(body: Body) -> Body:
    out = copy.deepcopy(body)
    out["system"] = [{k: v for k, v in b.items() if k != "cache_control"}
                     for b in out.get("system") or ()]
    for m in out.get("messages") or ():
        m["content"] = [{k: v for k, v in b.items() if k != "cache_control"}
                        for b in _blocks(m["content"])]
    return out


_H = {"type": "ephemeral", "ttl": "1h"}
_M = {"type": "ephemeral"}


def segment_marks(
    legacy: Body, compiled: Body, k: int, gathered: Sequence[Blocks]
) -> tuple[Body, Body] | None:
    stable = len(legacy.get("system") or ())
    last = len(legacy.get("messages") or ()) - 1
    tail = len(_blocks(legacy["messages"][last]["content"])) - 1 if last >= 0 else 0
    expected_legacy = [("system", stable - 1, 0, _H), ("message", last, tail, _M)]
    if _marks(legacy) != expected_legacy:
        return None
    compiled_marks = _marks(compiled)
    predicted: list[tuple[str, int, int, object]] = [("system", stable - 1, 0, _H)]
    if len(compiled.get("system") or ()) > stable:
        predicted.append(("system", len(compiled["system"]) - 1, 0, _M))
    messages = compiled.get("messages") or ()
    lookback = [m for m in compiled_marks if m[0] == "message" and m[1] != last]
    for _, i, j, control in lookback:
        added = sum(len(_blocks(m["content"])) for m in messages[i + 1 :])
        if control != _M or added < _LOOKBACK or j != len(_blocks(messages[i]["content"])) - 1:
            return None
    predicted += sorted(lookback)
    predicted.append(("message", last, tail, _M))
    if compiled_marks != predicted:
        return None
    return _unmarked(legacy), _unmarked(compiled)


def _guidance_rewrite(text: str, change: Callable[[str], str | None]) -> str | None:
    """``text`` with its Guidance section's value replaced by ``change(value)`` (None: not in
    the predicted form); the other sections keep their exact bytes."""
    sections = split_sections(text)
    if not sections or sections[0][0] != "Guidance":
        return None
    loaded, value = section_value(sections[0][1], "Guidance", last=len(sections) == 1)
    if not loaded or not isinstance(value, str):
        return None
    new = change(value)
    if new is None:
        return None
    return render_sections([("Guidance", section_text("Guidance", new)), *sections[1:]])


def _user_texts(body: Body) -> list[tuple[int, str]]:
    out = []
    for i, m in enumerate(body.get("messages") or ()):
        blocks = _blocks(m["content"])
        if m.get("role") == "user" and blocks and blocks[0].get("type") == "text":
            out.append((i, str(blocks[0]["text"])))
    return out


def _set_text(body: Body, index: int, text: str) -> None:
    blocks = _blocks(body["messages"][index]["content"])
    blocks[0] = {**blocks[0], "text": text}
    body["messages"][index]["content"] = blocks


def conversation_segment(
    legacy: Body, compiled: Body, k: int, gathered: Sequence[Blocks]
) -> tuple[Body, Body] | None:
    conversation = [ContextBlock(n, t) for n, t in gathered[0]] if gathered else []
    legacy, compiled = copy.deepcopy(legacy), copy.deepcopy(compiled)
    changed = False
    envelope = encode_context_section(conversation)
    system = compiled.get("system") or []
    if envelope:
        if not system or system[-1].get("text") != envelope:
            return None
        compiled["system"] = system[:-1]
        changed = True
    injected = "\n".join(t for _, t in gathered[k]) if k < len(gathered) else ""
    users = _user_texts(legacy)
    if injected:
        if not users:
            return None
        index, text = users[0]
        new = _guidance_rewrite(text, lambda g: g[len(injected):] if g.startswith(injected)
                                else None)
        if new is None:
            return None
        _set_text(legacy, index, new)
        changed = True
    for ordinal, (index, text) in enumerate(_user_texts(compiled)):
        if ordinal == 0 or ordinal >= len(gathered):
            continue
        later = [ContextBlock(n, t) for n, t in gathered[ordinal]
                 if ContextBlock(n, t) not in conversation]
        section = encode_context_section(later)
        if not section:
            continue

        def strip(g: str, section: str = section) -> str | None:
            if g == section:
                return ""
            return g[len(section) + 2:] if g.startswith(section + "\n\n") else None

        new = _guidance_rewrite(text, strip)
        if new is None:
            return None
        _set_text(compiled, index, new)
        changed = True
    return (legacy, compiled) if changed else None


CACHE_REGISTRY: tuple[CacheDifference, ...] = (
    CacheDifference(
        "cache-segment-marks", "ADR-0127 D5",
        "marks -> legacy: one-hour on the last system block, five-minute on the last message; "
        "compiled: also five-minute at the end of the conversation segment and the lookback "
        "mark when a turn adds 20 blocks or more",
        segment_marks,
    ),
    CacheDifference(
        "cache-conversation-segment", "ADR-0127 D4 (envelope: ADR-0007 D3)",
        "context blocks -> legacy: this call's texts joined by '\\n' before the first "
        "instruction's guidance (gone when a provider returns nothing); compiled: the first "
        "call's blocks as one D3 envelope system block on every request, later new blocks as "
        "the envelope in that call's instruction",
        conversation_segment,
    ),
)


def compare_cache_bodies(
    legacy: Sequence[Body], compiled: Sequence[Body], gathered: Sequence[Blocks]
) -> CacheComparison:
    """Compare the two runs' bodies request by request (module rules)."""
    used: list[tuple[str, ...]] = []
    unexplained: list[str] = []
    if len(legacy) != len(compiled):
        unexplained.append(f"legacy sent {len(legacy)} request(s), compiled {len(compiled)}")
    for k, (a, b) in enumerate(zip(legacy, compiled, strict=False)):
        ids = []
        for entry in CACHE_REGISTRY:
            if a == b:
                break
            step = entry.explain(a, b, k, gathered)
            if step is not None and step != (a, b):
                a, b = step
                ids.append(entry.id)
        used.append(tuple(ids))
        if a != b:
            for key in sorted(set(a) | set(b)):
                if a.get(key) != b.get(key):
                    unexplained.append(f"request {k}: {key!r} differs")
    return CacheComparison(tuple(used), tuple(unexplained))
