"""Shared scenario catalogue: real lionagi Branches with recorded history plus one turn's call.

Used by the characterization matrix (tests/characterization) and the chat/run e2e matrix.

- ``Scenario.build()`` returns a fresh ``lionagi.Branch`` whose history is recorded through
  lionagi's own APIs (``Branch(system=...)``, ``branch.msgs.add_message(...)``).
- ``Scenario.call`` holds lionagi chat keyword arguments for the turn: ``instruction``,
  ``guidance``, ``context``, ``plain_content``, ``images``, ``image_detail``, ``tool_schemas``,
  ``response_format``, ``imodel_kw`` and ``progression``. A ``progression`` is a selector
  ``progression(branch) -> list[UUID]`` (resolved after ``build()``), or the tuple ``()`` — the
  internal ``TurnRequest`` empty-history form, which lionagi's chat cannot express (an empty
  list there means "the branch's progression").
- ``Scenario.blocks`` are the turn's context blocks as ``(provider_name, content)``.
- ``Scenario.intended`` are the ids of the ``characterize.REGISTRY`` entries that
  explain how the compiled request differs from lionagi 0.36's for this scenario.

Images are data: URIs only (no http hosts, no DNS).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar
from uuid import UUID, uuid4

from lionagi import Branch
from lionagi.protocols.generic.progression import Progression
from lionagi.protocols.messages import Message, MessageRole
from pydantic import BaseModel

from lionagi_turns import ContextBlock, TurnRequest

__all__ = (
    "SCENARIOS",
    "Scenario",
    "by_id",
    "durable_call",
    "progression_for",
    "request_for",
)

Selector = Callable[[Branch], Sequence[UUID]]

PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+A8A"
    "AQUBAScY42YAAAAASUVORK5CYII="
)
GIF = "data:image/gif;base64,R0lGODlhAQABAAAAACw="

TOOL = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Look a term up in the catalog.",
        "parameters": {
            "type": "object",
            "properties": {"term": {"type": "string"}},
            "required": ["term"],
        },
    },
}


class Verdict(BaseModel):
    """A response format used as a model class and as an instance."""

    answer: str
    confidence: float = 0.5


VERDICT_DICT = {"answer": "str", "score": "int"}


class RoutedNote(Message):
    """A fixed-role (assistant) message kind lionagi_turns has no rule for."""

    _role: ClassVar[MessageRole] = MessageRole.ASSISTANT


@dataclass(frozen=True)
class Scenario:
    """One branch history plus one turn; see the module docstring for the fields."""

    id: str
    build: Callable[[], Branch]
    call: Mapping[str, Any]
    blocks: tuple[tuple[str, str], ...] = ()
    intended: tuple[str, ...] = ()
    description: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "call", MappingProxyType(dict(self.call)))


# --------------------------------------------------------------------------- recording helpers


def _user(b: Branch, text: str | None = None, **kw: Any) -> Message:
    return b.msgs.add_message(instruction=text, sender="user", recipient=b.id, **kw)


def _assistant(b: Branch, text: str) -> Message:
    return b.msgs.add_message(assistant_response=text, sender=b.id, recipient="user")


def _action(b: Branch, function: str, arguments: dict[str, Any], output: Any) -> Message:
    request = b.msgs.add_message(
        action_function=function, action_arguments=arguments, sender=b.id, recipient="tools"
    )
    return b.msgs.add_message(
        action_request=request, action_output=output, sender="tools", recipient=b.id
    )


def _ids(b: Branch) -> list[UUID]:
    return list(b.msgs.progression)


def _convo(b: Branch, *, guidance: Any = None) -> Branch:
    _user(b, "What is the capital of France?", guidance=guidance)
    _assistant(b, "Paris.")
    _user(b, "And of Italy?", context=[{"hint": "southern Europe"}])
    _assistant(b, "Rome.")
    return b


SYSTEM = "You are a careful research assistant."
MULTILINE_SYSTEM = "You are a careful assistant.\nRules:\n- cite sources\n- be brief"
TRAILING_SYSTEM = "Policy: answer briefly.  \n\tIndented rule with tabs\t\nLast line   "
# A policy file saved with Windows line ends: YAML can carry CR neither plain nor in a block.
CRLF_SYSTEM = "Policy line one.\r\nPolicy line two."


# --------------------------------------------------------------------------- builders


def _empty() -> Branch:
    return Branch()


def _empty_sys() -> Branch:
    return Branch(system=SYSTEM)


def _convo_nosys() -> Branch:
    return _convo(Branch())


def _convo_sys() -> Branch:
    return _convo(Branch(system=SYSTEM), guidance="Answer in one word.")


def _convo_sys_plain_first() -> Branch:
    return _convo(Branch(system=SYSTEM))


def _pending_after_last() -> Branch:
    b = Branch(system=SYSTEM)
    _user(b, "Look up 'lion'.")
    _assistant(b, "Calling lookup.")
    _action(b, "lookup", {"term": "lion"}, {"hits": 3})
    return b


def _results_between() -> Branch:
    b = Branch(system=SYSTEM)
    _user(b, "Look up two terms.", guidance="Use the tool.")
    _assistant(b, "Calling lookup twice.")
    _action(b, "lookup", {"term": "lion"}, {"hits": 3})
    _action(b, "lookup", {"term": "agi"}, {"hits": 0})
    _user(b, "Summarise the results.", context=["keep it short"])
    _assistant(b, "lion: 3 hits, agi: none.")
    return b


def _duplicate_results() -> Branch:
    b = Branch()
    _user(b, "Look up 'lion' twice.")
    _assistant(b, "Calling lookup twice.")
    _action(b, "lookup", {"term": "lion"}, {"hits": 3})
    _action(b, "lookup", {"term": "lion"}, {"hits": 3})
    _user(b, "Now summarise.", context=[{"function": "lookup", "arguments": {"term": "lion"},
                                          "output": {"hits": 3}}])
    _assistant(b, "3 hits.")
    return b


def _results_before_first(system: str | None) -> Callable[[], Branch]:
    def build() -> Branch:
        b = Branch(system=system) if system else Branch()
        _action(b, "lookup", {"term": "warmup"}, "ok")
        _user(b, "Continue from the warm-up.")
        _assistant(b, "Continuing.")
        return b

    return build


def _results_only(system: str | None) -> Callable[[], Branch]:
    def build() -> Branch:
        b = Branch(system=system) if system else Branch()
        _action(b, "lookup", {"term": "lion"}, {"hits": 3})
        return b

    return build


def _assistant_runs() -> Branch:
    b = Branch(system=SYSTEM)
    _user(b, "Think step by step.")
    _assistant(b, "Step one.")
    _assistant(b, "Step two.")
    _assistant(b, "Done.")
    return b


def _assistant_first_nosys() -> Branch:
    b = Branch()
    _assistant(b, "Hello, how can I help?")
    _assistant(b, "I can look things up.")
    _user(b, "Look up lions.")
    _assistant(b, "Lions are big cats.")
    return b


def _assistant_first_sys() -> Branch:
    b = Branch(system=SYSTEM)
    _assistant(b, "Hello, how can I help?")
    _user(b, "Look up lions.")
    _assistant(b, "Lions are big cats.")
    return b


def _images_history() -> Branch:
    b = Branch(system=SYSTEM)
    _user(b, "Describe this picture.", images=[PNG], image_detail="low", guidance="Be literal.")
    _assistant(b, "A single pixel.")
    return b


def _tools_history() -> Branch:
    b = Branch()
    _user(b, "Use a tool if needed.", tool_schemas=[TOOL], response_format=VERDICT_DICT)
    _assistant(b, "No tool needed.")
    return b


def _response_model_history() -> Branch:
    b = Branch(system=SYSTEM)
    _user(b, "Give a verdict.", response_format=Verdict)
    _assistant(b, '{"answer": "yes", "confidence": 0.9}')
    return b


def _response_instance_history() -> Branch:
    b = Branch()
    _user(b, "Give a verdict like this one.", response_format=Verdict(answer="maybe"),
          tool_schemas=[TOOL])
    _assistant(b, '{"answer": "no", "confidence": 0.2}')
    return b


def _long_sys() -> Branch:
    b = Branch(system=SYSTEM)
    _user(b, "First question.", guidance="Old guidance.")
    _assistant(b, "First answer.")
    _user(b, "Second question.", guidance="Newer guidance.")
    _assistant(b, "Second answer.")
    _user(b, "Third question.")
    _assistant(b, "Third answer.")
    return b


def _current_progression() -> Branch:
    b = _long_sys()
    ids = _ids(b)
    b.metadata["current_progression"] = Progression(order=ids[3:])
    return b


def _multiline_sys() -> Branch:
    return _convo(Branch(system=MULTILINE_SYSTEM), guidance="Prefer primary sources.")


def _trailing_sys() -> Branch:
    return Branch(system=TRAILING_SYSTEM)


def _crlf_sys() -> Branch:
    return _convo(Branch(system=CRLF_SYSTEM))


def _consecutive_instructions() -> Branch:
    b = Branch(system=SYSTEM)
    _user(b, "First request.")
    _user(b, "Second request, sent before any answer.")
    _assistant(b, "Answering both.")
    return b


def _plain_history_sys() -> Branch:
    b = Branch(system=SYSTEM)
    _user(b, plain_content="Raw user text, no YAML.")
    _assistant(b, "Understood.")
    return b


def _plain_results() -> Branch:
    b = Branch()
    _user(b, "Look up 'lion'.")
    _assistant(b, "Calling lookup.")
    _action(b, "lookup", {"term": "lion"}, {"hits": 3})
    return b


def _unknown_subtype() -> Branch:
    b = Branch()
    _user(b, "Hello.")
    _assistant(b, "Hi.")
    b.msgs.messages.include(RoutedNote(content={"note": "routed traffic"}))
    _user(b, "Still there?")
    _assistant(b, "Yes.")
    return b


# --------------------------------------------------------------------------- selectors


def _last(n: int) -> Selector:
    def select(b: Branch) -> list[UUID]:
        return _ids(b)[-n:]

    return select


def _reordered(b: Branch) -> list[UUID]:
    ids = _ids(b)  # I1 A1 I2 A2 (no system)
    return [ids[2], ids[3], ids[0], ids[1]]


def _with_missing(b: Branch) -> list[UUID]:
    ids = _ids(b)
    return [ids[0], uuid4(), ids[1], uuid4()]


def _with_duplicate(b: Branch) -> list[UUID]:
    ids = _ids(b)  # S I1 A1 I2 A2
    return [*ids, ids[-1]]


# --------------------------------------------------------------------------- catalogue

_Q = {"instruction": "What should I do next?"}
_BLOCKS = (
    ("catalog", "Item 42 ships in 3 days."),
    ("memory", 'User prefers "short" answers.\nNo emojis.'),
)

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("empty-no-system", _empty, {"instruction": "Hello there."}),
    Scenario(
        "empty-system-guidance", _empty_sys, {**_Q, "guidance": "Answer in one sentence."},
        intended=("fold-separators",),
    ),
    Scenario("empty-system-no-guidance", _empty_sys, {**_Q, "context": ["ctx item"]}),
    Scenario("systemless-history", _convo_nosys, {**_Q, "guidance": "Be brief."}),
    Scenario(
        "system-history-guidance", _convo_sys, _Q, intended=("fold-separators",),
        description="the fold lands on the first historical instruction",
    ),
    Scenario("system-history-no-guidance", _convo_sys_plain_first, _Q),
    Scenario("actions-pending-after-last-instruction", _pending_after_last, _Q),
    Scenario(
        "actions-between-instructions", _results_between, _Q, intended=("fold-separators",),
    ),
    Scenario("actions-duplicate-results", _duplicate_results, _Q),
    Scenario("actions-before-first-instruction-nosys", _results_before_first(None), _Q),
    Scenario("actions-before-first-instruction-sys", _results_before_first(SYSTEM), _Q),
    Scenario(
        "actions-under-system-no-history", _results_only(SYSTEM), _Q,
        intended=("pending-results-current",),
    ),
    Scenario(
        "actions-under-system-no-history-guidance", _results_only(SYSTEM),
        {**_Q, "guidance": "Use the results.", "context": ["earlier note"]},
        intended=("pending-results-current", "fold-separators"),
    ),
    Scenario("actions-no-system-no-history", _results_only(None), _Q),
    Scenario("consecutive-assistants", _assistant_runs, _Q),
    Scenario("assistant-first-systemless", _assistant_first_nosys, _Q),
    Scenario(
        "assistant-first-under-system", _assistant_first_sys, _Q,
        description="both raise 'First message in progression must be an Instruction or System'",
    ),
    Scenario(
        "images-current", _empty, {"instruction": "What is in these?", "images": [PNG, GIF],
                                   "image_detail": "high"},
    ),
    Scenario(
        "images-history-fold", _images_history, {"instruction": "And now?", "images": [GIF],
                                                 "image_detail": "auto"},
        intended=("fold-separators",),
    ),
    Scenario("tools-current", _convo_nosys, {**_Q, "tool_schemas": [TOOL]}),
    Scenario("tools-history-stripped", _tools_history, {**_Q, "tool_schemas": [TOOL]}),
    Scenario("response-format-dict-current", _empty, {**_Q, "response_format": VERDICT_DICT}),
    Scenario(
        "response-format-model-class-current", _convo_nosys, {**_Q, "response_format": Verdict},
    ),
    Scenario(
        "response-format-model-instance-current", _empty_sys,
        {**_Q, "response_format": Verdict(answer="example", confidence=0.1)},
    ),
    Scenario("response-format-history-stripped", _response_model_history, _Q),
    Scenario(
        "response-format-instance-history-stripped", _response_instance_history,
        {**_Q, "response_format": VERDICT_DICT},
    ),
    Scenario(
        "selected-progression-tail", _long_sys, {**_Q, "progression": _last(4)},
        intended=("fold-separators",),
        description="the fold moves to the first selected instruction (guidance 'Newer guidance.')",
    ),
    Scenario(
        "selected-progression-reordered", _convo_nosys, {**_Q, "progression": _reordered},
    ),
    Scenario(
        "current-progression-metadata", _current_progression, _Q,
        intended=("fold-separators",),
    ),
    Scenario(
        "context-blocks-system", _empty_sys, {**_Q, "guidance": "Use the context."},
        blocks=_BLOCKS, intended=("context-envelope", "fold-separators"),
    ),
    Scenario(
        "context-blocks-system-history", _convo_sys_plain_first, _Q, blocks=_BLOCKS[:1],
        intended=("context-envelope", "fold-separators"),
    ),
    Scenario(
        "context-blocks-systemless", _empty, {**_Q, "guidance": "Use the context."},
        blocks=_BLOCKS, intended=("systemless-context",),
    ),
    Scenario(
        "context-blocks-systemless-history", _convo_nosys, _Q, blocks=_BLOCKS,
        intended=("systemless-context",),
    ),
    Scenario(
        "dict-guidance-folded", _empty_sys,
        {**_Q, "guidance": {"tone": "formal", "limits": ["no speculation", "cite"]}},
        intended=("fold-separators",),
    ),
    Scenario(
        "dict-guidance-unfolded", _empty, {**_Q, "guidance": {"tone": "formal"}},
    ),
    Scenario(
        "dict-guidance-systemless-blocks", _empty, {**_Q, "guidance": {"tone": "formal"}},
        blocks=_BLOCKS[:1], intended=("systemless-context",),
    ),
    Scenario(
        "plain-content-fold-target", _empty_sys,
        {"plain_content": "Just answer: 2 + 2?", "guidance": "Show work."},
        intended=("plain-content-sections",),
    ),
    Scenario(
        "plain-content-fold-target-blocks", _empty_sys, {"plain_content": "Just answer."},
        blocks=_BLOCKS[:1], intended=("plain-content-sections",),
    ),
    Scenario(
        "plain-content-history-fold-target", _plain_history_sys, _Q,
        intended=("plain-content-sections",),
    ),
    Scenario(
        "plain-content-receives-results", _plain_results, {"plain_content": "Summarise that."},
        intended=("plain-content-sections",),
    ),
    Scenario("plain-content-no-policy", _empty, {"plain_content": "Plain text only."}),
    Scenario(
        "multiline-system", _multiline_sys, _Q, intended=("fold-separators",),
    ),
    Scenario(
        "system-trailing-whitespace-blocks", _trailing_sys, {**_Q, "guidance": "Cite."},
        blocks=_BLOCKS, intended=("context-envelope", "fold-separators"),
    ),
    Scenario(
        "system-crlf-blocks", _crlf_sys, {**_Q, "guidance": "Cite."},
        blocks=_BLOCKS, intended=("fold-first", "context-envelope", "fold-separators"),
    ),
    Scenario(
        "consecutive-instructions-history", _consecutive_instructions, _Q,
        intended=("consecutive-instructions",),
    ),
    Scenario(
        "missing-ids", _convo_nosys, {**_Q, "progression": _with_missing},
        intended=("missing-ids",),
    ),
    Scenario(
        "duplicate-ids", _convo_sys_plain_first, {**_Q, "progression": _with_duplicate},
        intended=("duplicate-ids",),
    ),
    Scenario(
        "empty-tuple-progression-systemless", _convo_nosys, {**_Q, "progression": ()},
        intended=("empty-progression",),
    ),
    Scenario(
        "empty-tuple-progression-system", _convo_sys, {**_Q, "guidance": "Fresh start.",
                                                      "progression": ()},
        intended=("empty-progression", "fold-separators"),
    ),
    Scenario(
        "reserved-kwarg", _convo_nosys, {**_Q, "imodel_kw": {"messages": [], "temperature": 0}},
        intended=("reserved-messages-key",),
    ),
    Scenario("provider-kwargs", _convo_nosys, {**_Q, "imodel_kw": {"temperature": 0.2}}),
    Scenario(
        "unknown-subtype", _unknown_subtype, _Q, intended=("unknown-subtype",),
    ),
)


def by_id(scenario_id: str) -> Scenario:
    """The scenario named ``scenario_id``; KeyError lists the known ids otherwise."""
    for scenario in SCENARIOS:
        if scenario.id == scenario_id:
            return scenario
    raise KeyError(f"no scenario {scenario_id!r}; known: {[s.id for s in SCENARIOS]}")


_DURABLE = ("instruction", "guidance", "context", "plain_content", "images", "image_detail")


def durable_call(scenario: Scenario) -> dict[str, Any]:
    """The call's durable instruction arguments (what ``create_instruction`` receives)."""
    return {k: scenario.call[k] for k in _DURABLE if k in scenario.call}


def progression_for(branch: Branch, scenario: Scenario) -> tuple[UUID, ...] | None:
    """The scenario's progression for ``branch``: None (the branch's), ``()`` or the ids its
    selector picks."""
    selector = scenario.call.get("progression")
    if selector is None:
        return None
    if isinstance(selector, tuple) and not selector:
        return ()
    if not callable(selector):
        raise TypeError(
            f"scenario {scenario.id!r}: progression must be a selector callable or (), "
            f"got {type(selector).__name__}"
        )
    return tuple(selector(branch))


def request_for(
    branch: Branch, scenario: Scenario, *, provider_kwargs: bool = True
) -> TurnRequest:
    """The scenario's turn as a ``TurnRequest`` on ``branch``.

    The instruction is built by lionagi's factory with the durable arguments only; tool schemas,
    response format, context blocks and (when ``provider_kwargs``) ``imodel_kw`` go on the
    request. With a reserved ``imodel_kw`` key this raises the ADR's ValueError — pass
    ``provider_kwargs=False`` and hand the kwargs to ``differences.compare`` instead.
    """
    call = scenario.call
    instruction = branch.msgs.create_instruction(
        **durable_call(scenario), sender=branch.user or "user", recipient=branch.id
    )
    return TurnRequest(
        instruction=instruction,
        progression=progression_for(branch, scenario),
        tool_schemas=tuple(call.get("tool_schemas") or ()),
        response_format=call.get("response_format"),
        structure=call.get("structure"),
        context_blocks=tuple(ContextBlock(name, content) for name, content in scenario.blocks),
        provider_kwargs=dict(call.get("imodel_kw") or {}) if provider_kwargs else {},
    )
