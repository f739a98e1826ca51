"""Multi-turn sessions with the compiler installed (issue #3 item 8; ADR D5/D6).

Each session asserts (a) the exact messages that reached the model boundary on every call, against
an independent compile of the branch as it was at that moment, (b) the history lionagi recorded,
and (c) that no recorded instruction carries a call option (D1).
"""


from typing import Any

import pytest
import yaml
from lionagi import Branch
from lionagi.protocols.messages import (
    ActionRequest,
    ActionResponse,
    AssistantResponse,
    Instruction,
)
from pydantic import BaseModel

from lionagi_turns import (
    ContextBlock,
    TurnRequest,
    compile_chat_request,
    encode_context_section,
    to_provider_messages,
)
from lionagi_turns.integration import _registry

from .harness import BoundarySpy, CompileTap, collect, recompiled

pytestmark = [pytest.mark.e2e, pytest.mark.anyio, pytest.mark.usefixtures("turns_installed")]

SYSTEM = "You are a careful assistant."


def expected(branch: Branch, instruction: Instruction, progression: Any, **options: Any) -> list:
    return to_provider_messages(
        compile_chat_request(
            branch, TurnRequest(instruction=instruction, progression=progression, **options)
        )
    )


def sections(content: str) -> dict[str, Any]:
    """A rendered instruction's YAML sections (lionagi renders instructions as minimal YAML)."""
    loaded = yaml.safe_load(content)
    assert isinstance(loaded, dict), content
    return loaded


def assert_durable_records(branch: Branch) -> None:
    for msg in branch.messages:
        if isinstance(msg, Instruction):
            content = msg.to_dict()["content"]
            assert "tool_schemas" not in content, content
            assert "response_format" not in content, content
            assert "structure" not in content, content
            assert "Tools" not in str(msg.rendered) and "ResponseFormat" not in str(msg.rendered)


def new_instructions(branch: Branch, before: tuple) -> list[Instruction]:
    return [m for m in branch.messages if isinstance(m, Instruction) and m.id not in before]


# ------------------------------------------------------------------------------ communicate


async def test_three_turn_communicate_conversation(chat_server, openai_model) -> None:
    chat_server.script("Paris.", "About 2.1 million.", "The Seine.")
    model = openai_model()
    branch = Branch(system=SYSTEM, chat_model=model)
    spy = BoundarySpy(model, watch=branch)

    answers = [
        await branch.communicate("Capital of France?", guidance="Answer in one word."),
        await branch.communicate("Its population?"),
        await branch.communicate("Which river?", context={"topic": "geography"}),
    ]

    assert answers == ["Paris.", "About 2.1 million.", "The Seine."]
    posted = chat_server.payloads()
    assert [[m["role"] for m in p] for p in posted] == [
        ["user"], ["user", "assistant", "user"],
        ["user", "assistant", "user", "assistant", "user"],
    ]
    # D2.4 fold: system text then guidance, two newlines apart, on the first instruction only.
    assert sections(posted[0][0]["content"])["Guidance"] == f"{SYSTEM}\n\nAnswer in one word."
    assert posted[2][0]["content"] == posted[1][0]["content"] == posted[0][0]["content"]
    assert posted[2][1]["content"] == "Paris." and posted[2][3]["content"] == "About 2.1 million."
    assert SYSTEM not in posted[2][4]["content"] and "geography" in posted[2][4]["content"]

    # Every POST equals the independent compile of the branch as it was at that call.
    recorded = [m for m in branch.messages if isinstance(m, Instruction)]
    assert len(recorded) == 3 and len(spy.calls) == 3
    for call, ins, body in zip(spy.calls, recorded, posted, strict=True):
        assert body == call.messages == expected(branch, ins, call.progression)

    assert [type(m).__name__ for m in branch.messages] == [
        "System", *["Instruction", "AssistantResponse"] * 3]
    assert_durable_records(branch)


async def test_communicate_and_run_send_identical_messages_over_a_session(
    chat_server, openai_model, fake_claude, claude_model
) -> None:
    replies = ["Paris.", "About 2.1 million.", "The Seine."]
    chat_server.script(*replies)
    fake_claude.script(*({"text": r, "session_id": "S-conv"} for r in replies))
    turns = [
        {"instruction": "Capital of France?", "guidance": "One word."},
        {"instruction": "Its population?"},
        {"instruction": "Which river?", "context": {"topic": "geography"}},
    ]

    http_branch = Branch(system=SYSTEM, chat_model=openai_model())
    cli_model = claude_model()
    cli_branch = Branch(system=SYSTEM, chat_model=cli_model)
    spy = BoundarySpy(cli_model, watch=cli_branch)
    for turn in turns:
        await http_branch.communicate(**turn)
        out = await collect(cli_branch.run(**turn))
        assert isinstance(out[-1], AssistantResponse)

    assert spy.payloads == chat_server.payloads()
    calls = fake_claude.calls()
    assert [c["resume"] for c in calls] == [None, "S-conv", "S-conv"]
    assert calls[0]["prompt"] == spy.payloads[0][0]["content"]
    assert [c["prompt"] for c in calls[1:]] == [p[-1]["content"] for p in spy.payloads[1:]]
    strip = [(type(m).__name__, m.rendered) for m in http_branch.messages]
    assert strip == [(type(m).__name__, m.rendered) for m in cli_branch.messages]
    assert_durable_records(cli_branch)


# ----------------------------------------------------------------------------------- operate


class Product(BaseModel):
    product: int
    note: str


def multiply(a: int, b: int) -> int:
    """Multiply two integers.

    Args:
        a: first factor
        b: second factor
    """
    return a * b


async def test_operate_with_response_model_and_tool_calls(
    chat_server, openai_model, monkeypatch
) -> None:
    tap = CompileTap()
    monkeypatch.setattr(_registry, "compile_traced", tap)
    chat_server.script(
        {"product": 0, "note": "need the tool", "action_required": True,
         "action_requests": [{"function": "multiply", "arguments": {"a": 6, "b": 7}}],
         "reason": {"title": "plan", "content": "call multiply", "confidence_score": 0.9}},
        {"product": 42, "note": "done", "action_required": False, "action_requests": [],
         "reason": {"title": "answer", "content": "6*7", "confidence_score": 0.99}},
    )
    model = openai_model()
    branch = Branch(system=SYSTEM, chat_model=model, tools=[multiply])

    first = await branch.operate(instruction="What is 6 times 7?", response_format=Product,
                                 actions=True, reason=True)
    second = await branch.operate(instruction="Report the product.", response_format=Product,
                                  actions=True, reason=True)

    assert first.product == 0 and first.action_responses[0].output == 42
    assert second.product == 42 and second.note == "done"
    kinds = [type(m).__name__ for m in branch.messages]
    assert kinds == ["System", "Instruction", "AssistantResponse", "ActionRequest",
                     "ActionResponse", "Instruction", "AssistantResponse"]

    posted = chat_server.payloads()
    assert len(posted) == len(tap.compiled) == 2
    schema_names = [s["function"]["name"] if "function" in s else s.get("name")
                    for s in tap.compiled[0].request.tool_schemas]
    assert "multiply" in str(schema_names)
    for tapped, body, ins in zip(tap.compiled, posted, new_instructions(branch, ()),
                                 strict=True):
        assert tapped.request.instruction.id == ins.id
        assert tapped.request.response_format is not None
        assert body == tapped.messages == recompiled(branch, tapped)
        # The current turn renders the call's options; history never does.
        assert "Tools" in body[-1]["content"] and "ResponseFormat" in body[-1]["content"]
        assert all("ResponseFormat" not in m["content"] for m in body[:-1])
    # The tool result is folded into the next instruction's context (D2.2).
    last = posted[1][-1]["content"]
    assert "function: multiply" in last and "output: 42" in last
    assert_durable_records(branch)


# ------------------------------------------------------------------------------------- ReAct


async def test_react_two_rounds_with_a_tool(chat_server, openai_model, monkeypatch) -> None:
    tap = CompileTap()
    monkeypatch.setattr(_registry, "compile_traced", tap)
    chat_server.script(
        {"analysis": "I need the product.", "extension_needed": True,
         "action_strategy": "sequential",
         "action_required": True,
         "action_requests": [{"function": "multiply", "arguments": {"a": 3, "b": 5}}],
         "reason": {"title": "r1", "content": "use tool", "confidence_score": 0.8}},
        {"analysis": "The product is 15.", "extension_needed": False,
         "action_strategy": "sequential",
         "action_required": False, "action_requests": [],
         "reason": {"title": "r2", "content": "done", "confidence_score": 0.9}},
        {"product": 15, "note": "3*5"},
    )
    model = openai_model()
    branch = Branch(system=SYSTEM, chat_model=model, tools=[multiply])

    result = await branch.ReAct({"instruction": "Multiply 3 by 5."}, response_format=Product,
                                extension_allowed=True, max_extensions=2)

    assert getattr(result, "product", None) == 15
    posted = chat_server.payloads()
    assert len(posted) == len(tap.compiled) == 3
    for tapped, body in zip(tap.compiled, posted, strict=True):
        assert body == tapped.messages == recompiled(branch, tapped)
        assert tapped.request.instruction.id in {m.id for m in branch.messages}
    assert [len(p) for p in posted] == [1, 3, 5]
    # Round 2 sees round 1's tool result in its instruction's context.
    assert "function: multiply" in posted[1][-1]["content"]
    assert "output: 15" in posted[1][-1]["content"]
    kinds = [type(m).__name__ for m in branch.messages]
    assert kinds.count("ActionResponse") == 1 and kinds.count("Instruction") == 3
    assert_durable_records(branch)


# --------------------------------------------------------------------------------------- run


async def test_two_run_turns_with_cli_tool_events_and_resume(fake_claude, claude_model) -> None:
    fake_claude.script(
        {"text": "There is one file.", "session_id": "S-run",
         "tools": [{"id": "tu-1", "name": "Bash", "input": {"command": "ls"},
                    "output": "notes.txt"}]},
        {"text": "It holds notes.", "session_id": "S-run"},
    )
    model = claude_model()
    branch = Branch(system=SYSTEM, chat_model=model)
    spy = BoundarySpy(model, watch=branch)

    first = await collect(branch.run("List the files.", guidance="Be terse."))
    second = await collect(branch.run("What is in it?"))

    assert [type(m) for m in first] == [Instruction, ActionRequest, ActionResponse,
                                        AssistantResponse]
    assert [type(m) for m in second] == [Instruction, AssistantResponse]
    assert list(branch.messages)[1:] == [*first, *second]

    calls = fake_claude.calls()
    assert [c["resume"] for c in calls] == [None, "S-run"]
    assert [c.resume for c in spy.calls] == [None, "S-run"]
    # The instruction is recorded before the model call in run(): the snapshot excludes it.
    for call, ins in zip(spy.calls, (first[0], second[0]), strict=True):
        before = tuple(i for i in call.progression if i != ins.id)
        assert call.messages == expected(branch, ins, before)
    assert calls[0]["prompt"] == spy.calls[0].messages[0]["content"]
    assert sections(calls[0]["prompt"])["Guidance"] == f"{SYSTEM}\n\nBe terse."
    # Resumed: only the last message goes out, and it carries the CLI tool result.
    assert calls[1]["prompt"] == spy.calls[1].messages[-1]["content"]
    assert "function: Bash" in calls[1]["prompt"] and "output: notes.txt" in calls[1]["prompt"]
    assert [m["role"] for m in spy.calls[1].messages] == ["user", "assistant", "user"]
    assert spy.calls[1].messages[1]["content"] == "There is one file."
    assert_durable_records(branch)


# ---------------------------------------------------------------------------- context provider


class CatalogProvider:
    """A real lionagi ContextProvider: returns retrieved text for every turn it sees."""

    name = "catalog"

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def provide(self, branch: Branch, instruction: Instruction) -> str | None:
        self.seen.append(str(instruction.content.instruction))
        return f'retrieved for "{instruction.content.instruction}"\nline two'


async def test_context_provider_fires_each_turn_and_is_never_recorded(
    chat_server, openai_model, offline_tokens
) -> None:
    chat_server.script("First answer.", "Second answer.")
    model = openai_model()
    branch = Branch(system=SYSTEM, chat_model=model)
    provider = CatalogProvider()
    branch.providers.register(provider, name="catalog")
    spy = BoundarySpy(model, watch=branch)

    await branch.communicate("Find the red lamp.", guidance="Cite sources.")
    report_one = branch.last_context_report
    await branch.communicate("And the blue one?")

    assert provider.seen == ["Find the red lamp.", "And the blue one?"]
    assert [f["provider_name"] for f in report_one.fired] == ["catalog"]
    posted = chat_server.payloads()
    recorded = [m for m in branch.messages if isinstance(m, Instruction)]
    texts = ['retrieved for "Find the red lamp."\nline two',
             'retrieved for "And the blue one?"\nline two']
    for call, ins, body, text in zip(spy.calls, recorded, posted, texts, strict=True):
        blocks = (ContextBlock(provider_name="catalog", content=text),)
        assert body == expected(branch, ins, call.progression, context_blocks=blocks)
        # D3: the envelope sits between the system text and the guidance, as its own section.
        assert sections(body[0]["content"])["Guidance"] == "\n\n".join(
            [SYSTEM, encode_context_section(blocks), "Cite sources."])
    # Each turn's blocks replace the last turn's: the first instruction is re-folded.
    stale = encode_context_section((ContextBlock(provider_name="catalog", content=texts[0]),))
    assert stale not in sections(posted[1][0]["content"])["Guidance"]
    for msg in branch.messages:
        assert "retrieved for" not in str(msg.to_dict())
        assert "LIONAGI_CONTEXT_BLOCKS_JSON" not in str(msg.to_dict())
    assert_durable_records(branch)
