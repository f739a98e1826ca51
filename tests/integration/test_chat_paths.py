"""Branch.chat / communicate / operate through the installed adapter, with an in-process model.

The real HTTP server and fake ``claude`` matrix lives in tests/e2e; these tests pin the
adapter's contract: one compile, the recorded instruction, structured output, refusals before
any model call, context-provider attribution, and the one-time gap warnings.
"""

from __future__ import annotations

import json
import warnings
from types import SimpleNamespace
from typing import Any

import pytest
from lionagi import Branch
from lionagi.operations.chat._prepare import _react_context
from lionagi.operations.types import ChatParam
from lionagi.protocols.messages import Instruction
from lionagi.protocols.messages.instruction import InstructionContent
from lionagi.service.token_calculator import TokenCalculator
from pydantic import BaseModel

import lionagi_turns
from lionagi_turns import TurnRequest, compile_chat_request, decode_context_section
from lionagi_turns.cli._load import parse_branch
from lionagi_turns.integration import TurnsCompatibilityWarning, prepare_run_kwargs
from lionagi_turns.integration import _install as integration

from .conftest import FakeChatModel

pytestmark = pytest.mark.anyio


class Answer(BaseModel):
    value: int


def _branch(model: FakeChatModel, system: str | None = "You are terse.") -> Branch:
    return Branch(system=system, chat_model=model.imodel, parse_model=model.imodel)


def _stored(branch: Branch) -> list[dict[str, Any]]:
    return [m.to_dict() for m in branch.messages]


async def test_chat_sends_exactly_the_compiled_messages(fake_model: FakeChatModel) -> None:
    branch = _branch(fake_model)
    with lionagi_turns.installed():
        await branch.communicate("first", guidance="be brief")
        expected_request = TurnRequest(
            instruction=Instruction(content=InstructionContent(instruction="second")),  # type: ignore[call-arg]
        )
        expected = lionagi_turns.to_provider_messages(
            compile_chat_request(branch, expected_request)
        )
        await branch.chat("second")
    assert fake_model.messages == expected
    assert fake_model.messages[0] == {
        "role": "user",
        "content": "Guidance: |-\n  You are terse.\n\n  be brief\nInstruction: first",
    }


async def test_uninstalled_lionagi_keeps_its_own_fold(fake_model: FakeChatModel) -> None:
    branch = _branch(fake_model)
    await branch.chat("first", guidance="be brief")
    # legacy: system and guidance joined with no separator (intended-differences §4.1)
    assert "You are terse.be brief" in fake_model.messages[0]["content"]


async def test_communicate_records_only_the_compiled_instruction(
    fake_model: FakeChatModel,
) -> None:
    fake_model.replies = ['{"value": 3}']
    branch = _branch(fake_model)
    with lionagi_turns.installed():
        await branch.communicate("q", response_format=Answer)
    recorded = branch.messages[1]
    assert isinstance(recorded, Instruction)
    content = recorded.content.to_dict()
    assert "response_format" not in content and "tool_schemas" not in content
    assert recorded.content.response_format is None
    assert "ResponseFormat" not in recorded.rendered
    # ... while the model saw the call's response format
    assert "ResponseFormat" in fake_model.messages[-1]["content"]


async def test_caller_instruction_is_never_mutated(fake_model: FakeChatModel) -> None:
    fake_model.replies = ['{"value": 1}']
    branch = _branch(fake_model)
    mine = Instruction(content=InstructionContent(instruction="q"))  # type: ignore[call-arg]
    before = mine.to_dict()
    with lionagi_turns.installed():
        await branch.communicate(mine, guidance="g", context={"k": 1}, response_format=Answer)
        await branch.chat(mine, guidance="g2")
    assert mine.to_dict() == before
    assert mine.content.response_format is None
    recorded = branch.messages[1]
    assert recorded is not mine and recorded.id == mine.id
    assert recorded.content.guidance == "g" and recorded.content.prompt_context == [{"k": 1}]


async def test_structured_output_parses_like_lionagi(fake_model: FakeChatModel) -> None:
    fake_model.replies = ['```json\n{"value": 7}\n```', '```json\n{"value": 7}\n```']
    legacy = await _branch(fake_model).communicate("q", response_format=Answer)
    with lionagi_turns.installed():
        compiled = await _branch(fake_model).communicate("q", response_format=Answer)
    assert type(compiled).__name__ == type(legacy).__name__
    assert compiled.model_dump() == legacy.model_dump() == {"value": 7}


async def test_structure_is_handed_to_parsing_from_the_request(
    fake_model: FakeChatModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[Any] = []
    from lionagi.operations.parse import parse as parse_mod

    real_parse = parse_mod.parse

    async def spy(branch: Branch, text: str, parse_param: Any, **kw: Any) -> Any:
        seen.append(parse_param.structure)
        return await real_parse(branch, text, parse_param, **kw)

    monkeypatch.setattr(parse_mod, "parse", spy)
    fake_model.replies = ['{"value": 1}']
    with lionagi_turns.installed():
        await _branch(fake_model).communicate("q", response_format=Answer)
    from lionagi.operations.schema.structure import Structure

    assert len(seen) == 1 and isinstance(seen[0], Structure)


async def test_operate_with_response_format(fake_model: FakeChatModel) -> None:
    fake_model.replies = ['{"value": 5}']
    branch = _branch(fake_model)
    with lionagi_turns.installed():
        out = await branch.operate(instruction="q", response_format=Answer)
    assert out.value == 5
    assert branch.messages[1].content.response_format is None


async def test_compile_error_happens_before_the_model_and_records_nothing(
    fake_model: FakeChatModel,
) -> None:
    branch = _branch(fake_model)
    asked = []
    for text in ("a", "b"):  # answered turns; a view of the two instructions alone is refused
        asked.append(branch.msgs.add_message(instruction=text))
        branch.msgs.add_message(assistant_response=f"re {text}")
    view = [m.id for m in asked]  # two adjacent instructions: ADR D2 step 3 rejects them
    before = _stored(branch)
    with lionagi_turns.installed():
        with pytest.raises(ValueError, match="Consecutive instructions"):
            await branch.communicate("c", progression=view)
        with pytest.raises(ValueError, match="Consecutive instructions"):
            await branch.operate(instruction="c", response_format=Answer, progression=view)
    assert fake_model.payloads == []
    assert _stored(branch) == before


async def test_missing_progression_id_is_refused_before_the_model(
    fake_model: FakeChatModel,
) -> None:
    from uuid import uuid4

    branch = _branch(fake_model)
    ghost = uuid4()
    with lionagi_turns.installed(), pytest.raises(ValueError, match=str(ghost)):
        await branch.communicate("q", progression=[ghost])
    assert fake_model.payloads == [] and len(branch.messages) == 1


async def test_private_image_host_is_refused_before_the_model(
    fake_model: FakeChatModel,
) -> None:
    branch = _branch(fake_model, system=None)
    with lionagi_turns.installed(), pytest.raises(ValueError, match="refused before invocation"):
        await branch.communicate("look", images=["http://127.0.0.1/cat.png"])
    assert fake_model.payloads == [] and len(branch.messages) == 0


async def test_empty_progression_list_keeps_the_whole_history(fake_model: FakeChatModel) -> None:
    branch = _branch(fake_model)
    with lionagi_turns.installed():
        await branch.communicate("one")
        await branch.communicate("two", progression=[])
    assert [m["role"] for m in fake_model.messages] == ["user", "assistant", "user"]


class _Provider:
    def __init__(self, text: str | None) -> None:
        self.text = text

    async def provide(self, branch: Branch, instruction: Instruction) -> str | None:
        return self.text


@pytest.fixture
def no_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(TokenCalculator, "tokenize", staticmethod(lambda text, **_: len(text)))


@pytest.mark.usefixtures("no_tiktoken")
async def test_context_blocks_carry_provider_names(fake_model: FakeChatModel) -> None:
    branch = _branch(fake_model)
    branch.providers.register(_Provider("fact one"), name="catalog")
    branch.providers.register(_Provider(None), name="silent")
    branch.providers.register(_Provider('say "hi"\nnow'), name="memory")
    with lionagi_turns.installed():
        await branch.communicate("q")
    content = fake_model.messages[0]["content"]
    assert decode_context_section(_envelope(content)) == (
        lionagi_turns.ContextBlock("catalog", "fact one"),
        lionagi_turns.ContextBlock("memory", 'say "hi"\nnow'),
    )
    recorded = branch.messages[1]
    assert "LIONAGI_CONTEXT_BLOCKS_JSON" not in str(recorded.to_dict())


def _envelope(content: str) -> str:
    lines = [line.strip() for line in content.split("\n")]
    start = lines.index("LIONAGI_CONTEXT_BLOCKS_JSON")
    return "\n".join(lines[start : start + 3])


@pytest.mark.usefixtures("no_tiktoken")
async def test_context_providers_stay_skipped_on_a_systemless_branch(
    fake_model: FakeChatModel,
) -> None:
    branch = _branch(fake_model, system=None)
    branch.providers.register(_Provider("fact"), name="catalog")
    with lionagi_turns.installed():
        await branch.communicate("q")
    assert "LIONAGI_CONTEXT_BLOCKS_JSON" not in str(fake_model.messages)
    assert branch.last_context_report.skipped == ["catalog"]


async def test_blocks_that_do_not_match_the_report_are_refused(fake_model: FakeChatModel) -> None:
    branch = _branch(fake_model)
    ins = branch.msgs.create_instruction(instruction="q")
    with pytest.raises(ValueError, match="no context report"):
        prepare_run_kwargs(branch, None, ChatParam(), ins=ins, context_blocks=["orphan"])


# ------------------------------------------------------------------------- gap warnings


def _gap_warnings(record: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in record if w.category is TurnsCompatibilityWarning]


def test_prompt_cache_endpoint_with_the_seed_profile_forced_warns_once() -> None:
    from lionagi_turns.integration._install import seed_profile_forced

    branch = Branch(system="s")
    imodel = SimpleNamespace(endpoint=SimpleNamespace(places_prompt_cache=True), is_cli=False)
    with warnings.catch_warnings(record=True) as record, seed_profile_forced():
        warnings.simplefilter("always")
        for _ in range(3):
            ins = branch.msgs.create_instruction(instruction="q")
            _, kw = prepare_run_kwargs(branch, None, ChatParam(), ins=ins, imodel=imodel)
    assert _gap_warnings(record) == [integration.PROMPT_CACHE_GAP]
    assert "system_blocks" not in kw


def test_prompt_cache_endpoint_under_the_amendment1_profile_composes_the_cache_layout() -> None:
    integration._reset_warnings()
    branch = Branch(system="s")
    imodel = SimpleNamespace(endpoint=SimpleNamespace(places_prompt_cache=True), is_cli=False)
    lionagi_turns.install(profile="amendment1")
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            for _ in range(2):
                ins = branch.msgs.create_instruction(instruction="q")
                _, kw = prepare_run_kwargs(branch, None, ChatParam(), ins=ins, imodel=imodel)
    finally:
        lionagi_turns.uninstall()
    assert _gap_warnings(record) == []
    assert kw["system_blocks"] == ["s"]  # the system is the stable segment, not folded
    assert kw["messages"] == [{"role": "user", "content": "Instruction: q"}]


def test_prompt_cache_endpoint_compiles_the_cache_profile_without_a_warning() -> None:
    branch = Branch(system="s")
    imodel = SimpleNamespace(endpoint=SimpleNamespace(places_prompt_cache=True), is_cli=False)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ins = branch.msgs.create_instruction(instruction="q")
        _, kw = prepare_run_kwargs(branch, None, ChatParam(), ins=ins, imodel=imodel)
    assert _gap_warnings(record) == []
    assert kw["system_blocks"] == ["s"]
    assert kw["messages"] == [{"role": "user", "content": "Instruction: q"}]


def test_no_prompt_cache_no_warning() -> None:
    branch = Branch(system="s")
    imodel = SimpleNamespace(endpoint=SimpleNamespace(places_prompt_cache=False), is_cli=False)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        prepare_run_kwargs(
            branch, None, ChatParam(), ins=branch.msgs.create_instruction(instruction="q"),
            imodel=imodel,
        )
    assert _gap_warnings(record) == []


def test_react_context_renders_once_per_request_without_a_warning() -> None:
    branch = Branch(system="s")
    ctx = [{"task": "t"}]
    first = branch.msgs.create_instruction(instruction="round 1", context=ctx)
    branch.msgs.add_message(instruction=first)
    branch.msgs.add_message(assistant_response="r1", sender=branch.id)
    token = _react_context.set(list(ctx))
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            ins = branch.msgs.create_instruction(instruction="round 2", context=ctx)
            _, kw = prepare_run_kwargs(branch, None, ChatParam(), ins=ins)
    finally:
        _react_context.reset(token)
    assert _gap_warnings(record) == []
    users = [m["content"] for m in kw["messages"] if m["role"] == "user"]
    assert ["task: t" in u for u in users] == [True, False]
    # Outside ReAct's later calls the same request shows the context on both instructions.
    _, plain = prepare_run_kwargs(branch, None, ChatParam(), ins=ins)
    assert all("task: t" in m["content"] for m in plain["messages"] if m["role"] == "user")


def test_a_resumed_cli_turn_without_blocks_compiles_the_whole_view_and_does_not_warn() -> None:
    branch = Branch(system="s")
    branch.msgs.add_message(instruction=branch.msgs.create_instruction(instruction="a"))
    branch.msgs.add_message(assistant_response="b", sender=branch.id)
    cli = SimpleNamespace(endpoint=SimpleNamespace(), is_cli=True, provider_session_id="sid")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        ins = branch.msgs.create_instruction(instruction="c")
        _, kw = prepare_run_kwargs(branch, None, ChatParam(), ins=ins, imodel=cli)
    assert _gap_warnings(record) == []
    assert [m["role"] for m in kw["messages"]] == ["user", "assistant", "user"]


def test_fresh_cli_session_does_not_warn() -> None:
    branch = Branch(system="s")
    cli = SimpleNamespace(endpoint=SimpleNamespace(), is_cli=True, provider_session_id=None)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        prepare_run_kwargs(
            branch, None, ChatParam(), ins=branch.msgs.create_instruction(instruction="c"),
            imodel=cli,
        )
    assert _gap_warnings(record) == []


def test_adapter_builds_from_a_copy_when_lionagi_passes_no_ins() -> None:
    branch = Branch(system="s")
    mine = Instruction(content=InstructionContent(instruction="q"))  # type: ignore[call-arg]
    before = mine.to_dict()
    ins, kw = prepare_run_kwargs(branch, mine, ChatParam(guidance="g", imodel_kw={"top_p": 1}))
    assert mine.to_dict() == before
    assert ins.id == mine.id and ins.content.guidance == "g"
    assert kw["top_p"] == 1 and kw["messages"][-1]["role"] == "user"


async def test_branch_recorded_under_install_reloads_with_plain_lionagi(
    fake_model: FakeChatModel,
) -> None:
    """ADR-0007 D1: compiled.instruction is a real lionagi Instruction, so a branch saved while
    installed loads with plain lionagi and compiles to the same messages."""
    fake_model.replies = ['{"value": 3}', "fine"]
    branch = _branch(fake_model)
    with lionagi_turns.installed():
        await branch.communicate("q1", guidance="g", response_format=Answer)
        await branch.communicate("q2", context={"k": [1, 2]})
    saved = branch.to_dict()
    assert not lionagi_turns.integration.is_installed()
    # lionagi 0.36's from_dict drops msgs.system; branch_io.parse_branch restores it.
    reloaded = parse_branch(json.loads(json.dumps(saved, default=str))).branch
    assert reloaded.msgs.system is not None
    assert [m.to_dict() for m in reloaded.messages] == _stored(branch)
    for message in reloaded.messages:
        if isinstance(message, Instruction):
            content = message.content.to_dict()
            assert not {"tool_schemas", "response_format", "structure"} & set(content)
    request = TurnRequest(
        instruction=Instruction(content=InstructionContent(instruction="q3")),  # type: ignore[call-arg]
    )
    assert lionagi_turns.to_provider_messages(
        compile_chat_request(reloaded, request)
    ) == lionagi_turns.to_provider_messages(compile_chat_request(branch, request))
