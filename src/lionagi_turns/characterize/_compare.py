"""``compare(branch, request)``: lionagi 0.36's provider messages against the compiled ones.

It computes lionagi 0.36's provider messages live (``legacy.legacy_messages``) and the compiled
ones (``compile_chat_request`` + ``to_provider_messages``), then lets each ``REGISTRY`` entry,
in registry order, *explain* one kind of difference:

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
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from lionagi._errors import NotFoundError

from lionagi_turns.characterize._facts import Facts, Payload, State
from lionagi_turns.characterize.legacy import legacy_messages
from lionagi_turns.characterize.registry import REGISTRY, IntendedDifference
from lionagi_turns.core.contracts import TurnRequest
from lionagi_turns.core.pipeline import compile_chat_request
from lionagi_turns.core.providers import to_provider_messages

if TYPE_CHECKING:
    from lionagi.session.branch import Branch

__all__ = ("Comparison", "compare")

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
    provider_kwargs: Mapping[str, object] | None = None,
) -> Comparison:
    """Compare lionagi 0.36's provider messages with the compiled ones for ``request``.

    ``registry`` (default ``REGISTRY``) is the set of entries allowed to explain differences,
    applied in its order. ``provider_kwargs``, when given, replaces ``request.provider_kwargs``
    on both sides — lionagi receives it as ``imodel_kw``, the compiler through a
    ``TurnRequest`` built with it (so a reserved key fails as the ADR says). Neither the branch
    nor ``request`` is modified.
    """
    kwargs: Mapping[str, object] = (
        request.provider_kwargs if provider_kwargs is None else provider_kwargs
    )
    compiled, compiled_exc = _compiled_side(branch, request, provider_kwargs)
    legacy, legacy_exc = _legacy_side(branch, request, provider_kwargs)
    facts = Facts(branch, request, kwargs)
    state = State(
        json.loads(json.dumps(legacy)) if legacy is not None else None,
        json.loads(json.dumps(compiled)) if compiled is not None else None,
        legacy_exc,
        compiled_exc,
    )
    state, used, labels = _explained(registry, facts, state)
    return Comparison(
        legacy=legacy,
        compiled=compiled,
        legacy_error=_describe(legacy_exc),
        compiled_error=_describe(compiled_exc),
        labels={i: tuple(ids) for i, ids in sorted(labels.items())},
        unexplained=tuple(_unexplained(state)),
        entries=tuple(used),
    )


def _compiled_side(
    branch: Branch, request: TurnRequest, provider_kwargs: Mapping[str, object] | None
) -> tuple[Payload | None, BaseException | None]:
    """(the compiled provider messages, None) or (None, the exception the compile raised)."""
    try:
        compiled_request = (
            request
            if provider_kwargs is None
            else dataclasses.replace(request, provider_kwargs=provider_kwargs)
        )
        return to_provider_messages(compile_chat_request(branch, compiled_request)), None
    except Exception as exc:
        return None, exc


def _legacy_side(
    branch: Branch, request: TurnRequest, provider_kwargs: Mapping[str, object] | None
) -> tuple[Payload | None, BaseException | None]:
    """(lionagi 0.36's provider messages, None) or (None, the exception lionagi raised)."""
    legacy_request = (
        request
        if provider_kwargs is None
        else _with_unchecked_kwargs(request, provider_kwargs)
    )
    try:
        return legacy_messages(branch, legacy_request), None
    except Exception as exc:
        return None, exc


def _explained(
    registry: Sequence[IntendedDifference], facts: Facts, state: State
) -> tuple[State, list[str], dict[int, list[str]]]:
    """The state after applying ``registry``'s entries in order until it is resolved, the
    ids of the entries that changed it, and the entry ids explaining each message index."""
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
    return state, used, labels


def _with_unchecked_kwargs(request: TurnRequest, kwargs: Mapping[str, object]) -> TurnRequest:
    """``request`` carrying ``kwargs`` for lionagi, which accepts any keys (a reserved one
    included, which the TurnRequest constructor would refuse)."""
    copy = dataclasses.replace(request)
    object.__setattr__(copy, "provider_kwargs", dict(kwargs))
    return copy


def _equivalent_errors(legacy: BaseException, compiled: BaseException) -> bool:
    """Same error kind: the compiled one is an instance of lionagi's class, and for the
    generic built-in classes (and lionagi's NotFoundError, whose text names the record) its
    text also starts with lionagi's text."""
    if not isinstance(compiled, type(legacy)):
        return False
    if type(legacy) in (Exception, ValueError, TypeError, RuntimeError, KeyError, NotFoundError):
        return str(compiled).startswith(str(legacy))
    return True


def _unexplained(state: State) -> list[str]:
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


def _first_difference(a: Mapping[str, object], b: Mapping[str, object]) -> str:
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
