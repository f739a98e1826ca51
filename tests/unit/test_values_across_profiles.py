"""The same history gives the same outcome on the seed, prompt-cache and Amendment 1 profiles:
sent, or the same named refusal at compile time with the branch unchanged.

- A lone surrogate anywhere text enters the request (system, instruction fields, assistant
  text, action values, tool schemas, the current instruction) is refused with a ValueError
  naming the record and the place, instead of compiling into messages that fail when sent.
- Folded action results lionagi sends are sent on every profile: an integer beyond 64 bits, a
  NaN or infinite float, a dict key that is not text (colliding keys included) and bytes. The
  seed and prompt-cache profiles send lionagi's own rendering of the result, the fast path
  the renderer's bytes; Amendment 1's tool_results JSON encodes each value as
  ``canonical_json`` documents.
- The prompt-cache profile's tool section refuses a schema holding a value YAML cannot
  represent, itself or a set, naming the tool and the path.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from lionagi import Branch
from lionagi.protocols.messages import Instruction

from lionagi_turns import TurnRequest, amendment1, compile_chat_request
from lionagi_turns.core.providers import to_provider_messages
from lionagi_turns.memo.switch import no_fast_path
from lionagi_turns.profiles.prompt_cache._compile import compile_cached

from ._hostile import fingerprint
from ._support import add_action_pair, add_assistant, add_instruction

BAD = "bro\udfffken"
SCHEMA = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Look something up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
    },
}

Compile = Callable[[Branch, Instruction, tuple[dict[str, Any], ...]], Any]


def _seed(b: Branch, ins: Instruction, tools: tuple[dict[str, Any], ...]) -> Any:
    return compile_chat_request(b, TurnRequest(instruction=ins, tool_schemas=tools))


def _cached(b: Branch, ins: Instruction, tools: tuple[dict[str, Any], ...]) -> Any:
    request = TurnRequest(instruction=ins, tool_schemas=tools)
    return compile_cached(b, request, list(tools)).compiled


def _amendment1(b: Branch, ins: Instruction, tools: tuple[dict[str, Any], ...]) -> Any:
    request = amendment1.TurnRequest(instruction=ins, tool_schemas=tools)
    return amendment1.compile_chat_request(b, request)


PROFILES: dict[str, Compile] = {"seed": _seed, "cache": _cached, "amendment1": _amendment1}


def _outcome(compile_: Compile, b: Branch, ins: Instruction,
             tools: tuple[dict[str, Any], ...] = ()) -> tuple[str, ...]:
    """("sent",) when the compiled messages encode as the provider sends them (UTF-8 JSON),
    else the refusal's type and text; the branch must be unchanged either way."""
    before = fingerprint(b)
    try:
        compiled = compile_(b, ins, tools)
    except (ValueError, TypeError) as exc:
        assert fingerprint(b) == before
        return type(exc).__name__, str(exc)
    assert fingerprint(b) == before
    json.dumps(to_provider_messages(compiled), ensure_ascii=False).encode("utf-8")
    return ("sent",)


def _same_everywhere(b: Branch, ins: Instruction) -> tuple[str, ...]:
    """The one outcome of compiling this history on every profile."""
    outcomes = {name: _outcome(compile_, b, ins) for name, compile_ in PROFILES.items()}
    assert len(set(outcomes.values())) == 1, outcomes
    return outcomes["seed"]


# ------------------------------------------------------------------ item 5: lone surrogates


def _history_with(**where: Any) -> tuple[Branch, Instruction]:
    b = Branch(system=where.get("system", "policy"))
    add_instruction(b, "earlier", **where.get("instruction", {}))
    add_assistant(b, where.get("reply", "seen"))
    return b, b.msgs.create_instruction(instruction="now")


def test_a_lone_surrogate_in_an_assistant_reply_is_refused_at_compile_time() -> None:
    b, ins = _history_with(reply=f"answer {BAD}")
    kind, text = _same_everywhere(b, ins)
    assert kind == "ValueError"
    assert text.startswith(
        "assistant_response is text holding a lone surrogate (U+DFFF at character 10)"
    )
    assert text.endswith(f"(history position 2, assistant response id {b.progression[-1]})")


def test_a_lone_surrogate_in_the_system_is_refused_naming_the_system() -> None:
    b, ins = _history_with(system=BAD)
    kind, text = _same_everywhere(b, ins)
    assert kind == "ValueError"
    assert text.startswith("system is text holding a lone surrogate (U+DFFF at character 3)")
    assert b.msgs.system is not None
    assert text.endswith(f"(system message, id {b.msgs.system.id})")


@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"guidance": BAD}, "guidance is text"),
        ({"context": [{"note": BAD}]}, "prompt_context[0]['note'] is text"),
        ({"context": [{BAD: 1}]}, "prompt_context[0] (a key of type str) is a key that holds"),
        ({"plain_content": BAD}, "plain_content is text"),
    ],
    ids=["guidance", "context value", "context key", "plain_content"],
)
def test_a_lone_surrogate_in_a_history_instruction_names_it(
    fields: dict[str, Any], path: str
) -> None:
    b, ins = _history_with(instruction=fields)
    kind, text = _same_everywhere(b, ins)
    assert kind == "ValueError"
    assert text.startswith(path)
    assert "lone surrogate (U+DFFF" in text
    assert text.endswith(f"(history position 1, instruction id {b.progression[1]})")


def test_a_lone_surrogate_in_the_current_instruction_is_refused() -> None:
    b = Branch(system="policy")
    ins = b.msgs.create_instruction(instruction=f"now {BAD}")
    kind, text = _same_everywhere(b, ins)
    assert kind == "ValueError"
    assert text.startswith("instruction is text holding a lone surrogate (U+DFFF at character 7)")
    assert text.endswith(f"(current instruction, id {ins.id})")


@pytest.mark.parametrize("where", ["arguments", "output"])
def test_a_lone_surrogate_in_an_action_value_is_refused(where: str) -> None:
    b = Branch(system="policy")
    add_instruction(b, "earlier")
    if where == "arguments":
        add_action_pair(b, arguments={"q": BAD})
    else:
        add_action_pair(b, output=BAD)
    add_assistant(b, "seen")
    ins = b.msgs.create_instruction(instruction="now")
    kind, text = _same_everywhere(b, ins)
    path = "['arguments']['q']" if where == "arguments" else "['output']"
    assert (kind, text.split(" is text")[0]) == ("ValueError", f"folded action result 0{path}")
    assert text.endswith(f"(current instruction, id {ins.id})")


def test_a_lone_surrogate_in_a_tool_schema_is_refused_on_every_profile() -> None:
    schema = json.loads(json.dumps(SCHEMA))
    schema["function"]["description"] = BAD

    b = Branch(system="policy")
    ins = b.msgs.create_instruction(instruction="now")
    outcomes = {n: _outcome(c, b, ins, (schema,)) for n, c in PROFILES.items()}
    assert outcomes["seed"] == outcomes["amendment1"]
    assert outcomes["seed"][0] == outcomes["cache"][0] == "ValueError"
    assert outcomes["seed"][1].startswith(
        "TurnRequest.tool_schemas[0]['function']['description'] is text holding a lone surrogate"
    )
    assert outcomes["cache"][1].startswith(  # the cache sends the Branch's tool set instead
        "tool 'lookup' schema['function']['description'] is text holding a lone surrogate"
    )


# --------------------------------------------------------- item 8: action values, all profiles


def _with_output(output: Any, *, answered: bool) -> tuple[Branch, Instruction]:
    b = Branch(system="policy")
    add_instruction(b, "earlier")
    add_action_pair(b, output=output)
    add_assistant(b, "seen")
    if answered:  # the result belongs to a historical instruction now
        add_instruction(b, "later")
        add_assistant(b, "seen again")
    return b, b.msgs.create_instruction(instruction="now")


@pytest.mark.parametrize("answered", [False, True], ids=["pending", "history"])
def test_an_integer_beyond_64_bits_is_sent_on_every_profile(answered: bool) -> None:
    b, ins = _with_output(2**64, answered=answered)
    assert _same_everywhere(b, ins) == ("sent",)
    compiled = _amendment1(b, ins, ())
    block = next(m.content for m in compiled.messages if "LIONAGI_TOOL_RESULTS_JSON" in m.content)
    assert '"output":18446744073709551616' in block


def _folded_text(compiled: Any) -> str:
    """The content of the one compiled message the action result was folded into."""
    (text,) = [m.content for m in compiled.messages if "lookup" in m.content]
    return str(text)


def _lionagi_rendering(output: Any, instruction: str) -> str:
    """lionagi's own rendering of ``instruction`` with the action result as its context."""
    b = Branch()
    result = {"function": "lookup", "arguments": {}, "output": output}
    return b.msgs.create_instruction(instruction=instruction, context=[result]).rendered


SENT = [
    pytest.param(2**64, "18446744073709551616", id="2**64"),
    pytest.param({1: "a", "b": 2}, '{"1":"a","b":2}', id="int key"),
    pytest.param({None: 1, True: 2, 1.5: 3, "a": 4}, '{"1.5":3,"a":4,"null":1,"true":2}',
                 id="mixed keys"),
    pytest.param({1: "a", "1": "b"}, '[["1","b"],[1,"a"]]', id="colliding keys"),
    pytest.param(b"raw", '"cmF3"', id="bytes"),
    pytest.param(float("nan"), "NaN", id="nan"),
    pytest.param(float("-inf"), "-Infinity", id="-inf"),
    pytest.param({"rows": [1.5, float("inf")]}, '{"rows":[1.5,Infinity]}', id="inf"),
]


@pytest.mark.parametrize(("output", "json_text"), SENT)
@pytest.mark.parametrize("answered", [False, True], ids=["pending", "history"])
def test_an_action_value_lionagi_sends_is_sent_on_every_profile(
    output: Any, json_text: str, answered: bool
) -> None:
    b, ins = _with_output(output, answered=answered)
    assert _same_everywhere(b, ins) == ("sent",)
    lionagi = _lionagi_rendering(output, "later" if answered else "now")
    assert _folded_text(_seed(b, ins, ())) == lionagi
    assert _folded_text(_cached(b, ins, ())) == lionagi
    block = _folded_text(_amendment1(b, ins, ())).split("\n\n")[-1]
    assert block == (
        "LIONAGI_TOOL_RESULTS_JSON\n"
        f'[{{"arguments":{{}},"function":"lookup","output":{json_text}}}]\n'
        "END_LIONAGI_TOOL_RESULTS_JSON"
    )


# ------------------------------------------------------ item 8: the prompt-cache tool section


def _cyclic() -> dict[str, Any]:
    schema = json.loads(json.dumps(SCHEMA))
    schema["function"]["parameters"]["properties"]["q"]["self"] = schema
    return schema


@pytest.mark.parametrize(
    ("extra", "kind", "problem"),
    [
        (object(), TypeError, "is of type object, which lionagi's YAML renderer cannot represent"),
        ({"b", "a"}, TypeError, "is a set; lionagi renders a set's items in hash order"),
        (None, ValueError, "contains itself"),
    ],
    ids=["object", "set", "itself"],
)
def test_the_cache_tool_section_refuses_an_unrenderable_schema_by_tool_and_path(
    extra: Any, kind: type[Exception], problem: str
) -> None:
    if extra is None:
        schema = _cyclic()
    else:
        schema = json.loads(json.dumps(SCHEMA))
        schema["function"]["parameters"]["properties"]["q"]["x"] = extra
    b = Branch(system="policy")
    ins = b.msgs.create_instruction(instruction="now")
    before = fingerprint(b)
    with pytest.raises(kind) as info:
        compile_cached(b, TurnRequest(instruction=ins), [schema])
    text = str(info.value)
    assert text.startswith("tool 'lookup' schema")
    assert problem in text
    assert "['function']" in text
    assert text.endswith(
        "(tool 'lookup' of the Branch's tool set (branch.acts); register the tool with a "
        "schema of plain JSON data, or remove it)"
    )
    assert fingerprint(b) == before


@pytest.mark.parametrize("output", [pytest.param(p.values[0], id=p.id) for p in SENT])
def test_the_fast_path_sends_an_action_value_exactly_as_the_renderer(output: Any) -> None:
    b, ins = _with_output(output, answered=True)
    fast = {name: compile_(b, ins, ()) for name, compile_ in PROFILES.items()}
    with no_fast_path():
        slow = {name: compile_(b, ins, ()) for name, compile_ in PROFILES.items()}
    for name in PROFILES:
        assert [m.content for m in fast[name].messages] == [
            m.content for m in slow[name].messages
        ], name
