"""``install(profile="amendment1")``: lionagi's own call surfaces compile through the profile,
against a real 127.0.0.1 chat server; lionagi's context tool records exclusions at the source;
the registry's skips reach the prompt where lionagi's report determines their reason."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from e2e.http_server import ChatServer  # type: ignore[import-not-found]
from lionagi import Branch, iModel
from lionagi.tools.context.context import ContextTool

from lionagi_turns import install, is_installed, to_provider_messages, uninstall
from lionagi_turns.amendment1 import (
    EXCLUSIONS_KEY,
    SectionBudgets,
    TurnRequest,
    compile_chat_request,
    marker,
)
from lionagi_turns.integration import IntegrationError

from ._support import add_action_pair, add_assistant, add_instruction, after_fold

pytestmark = pytest.mark.anyio

ORIGINAL_BIND = ContextTool.__dict__["bind"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as s:
        yield s


@pytest.fixture(autouse=True)
def _clean_install() -> Iterator[None]:
    yield
    if is_installed():
        uninstall()
    assert ContextTool.__dict__["bind"] is ORIGINAL_BIND


@pytest.fixture(autouse=True)
def _offline_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    from lionagi.service.token_calculator import TokenCalculator

    monkeypatch.setattr(
        TokenCalculator, "tokenize", staticmethod(lambda s, *a, **k: len(s.split()) if s else 0)
    )


def _model(server: ChatServer) -> Any:
    return iModel(
        provider="openai", model="gpt-4.1-mini", api_key="x", base_url=server.base_url,
        requires_tokens=False, allow_local_network=True,
    )


def _history(server: ChatServer) -> Branch:
    b = Branch(system="policy", chat_model=_model(server))
    add_instruction(b, "q1")
    add_assistant(b, "calling")
    add_action_pair(b, "lookup", {"q": "x"}, "found")
    return b


def _expected(b: Branch, text: str, **request: Any) -> list[dict[str, Any]]:
    ins = b.msgs.create_instruction(instruction=text)
    return to_provider_messages(
        compile_chat_request(b, TurnRequest(instruction=ins, **request), **request.pop("kw", {}))
    )


async def test_communicate_sends_the_amended_request(server: ChatServer) -> None:
    b = _history(server)
    expected = _expected(b, "now")
    install(profile="amendment1")
    assert await b.communicate("now") == "ok"
    sent = server.requests[-1].messages
    assert sent == expected
    assert "LIONAGI_TOOL_RESULTS_JSON" in sent[-1]["content"]


async def test_the_default_profile_is_unchanged_by_the_option(server: ChatServer) -> None:
    b = _history(server)
    install()
    await b.communicate("now")
    sent = server.requests[-1].messages
    assert "LIONAGI_TOOL_RESULTS_JSON" not in sent[-1]["content"]
    assert "Context:" in sent[-1]["content"]


async def test_installed_budgets_truncate_history_with_the_marker(server: ChatServer) -> None:
    b = _history(server)
    install(profile="amendment1", budgets=SectionBudgets(history=0))
    await b.communicate("now")
    first = after_fold(server.requests[-1].messages[0]["content"])
    assert first.startswith(marker("history", 2, "truncated") + "\n\n")


async def test_a_context_tool_eviction_is_recorded_and_reaches_the_model(
    server: ChatServer,
) -> None:
    b = _history(server)
    install(profile="amendment1")
    tool = ContextTool().bind(b)
    result = await tool.func_callable(action="evict_action_results", keep_last=0)
    assert result["success"]
    assert list(b.metadata[EXCLUSIONS_KEY].values()) == ["evicted"]
    await b.communicate("now")
    first = after_fold(server.requests[-1].messages[0]["content"])
    assert first.startswith(marker("history", 1, "evicted"))
    assert "found" not in "".join(m["content"] for m in server.requests[-1].messages)


class _Fixed:
    def __init__(self, text: str) -> None:
        self.text = text

    async def provide(self, branch: Any, instruction: Any) -> str:
        return self.text


async def test_a_registry_skip_with_a_determined_reason_renders_its_marker(
    server: ChatServer,
) -> None:
    b = Branch(system="policy", chat_model=_model(server))
    registry = b.providers
    registry.register(_Fixed("kept row"), name="catalog")
    registry.register(_Fixed("a b c d e"), name="capped", max_tokens=2)
    install(profile="amendment1")
    await b.communicate("now")
    content = server.requests[-1].messages[0]["content"]
    assert marker("context", 1, "per_provider_limit") in content
    assert '"authority":"material"' in content and "kept row" in content
    from lionagi_turns.profiles.amendment1._integration import last_skip_reading

    reading = last_skip_reading(b)
    assert reading is not None and reading.undetermined == ()


async def test_an_undetermined_skip_is_not_guessed(server: ChatServer) -> None:
    b = Branch(system="policy", chat_model=_model(server))
    b.providers.budget = 3
    b.providers.register(_Fixed("a b"), name="first", priority=1)
    b.providers.register(_Fixed("a b c d"), name="open", max_tokens=5)
    install(profile="amendment1")
    await b.communicate("now")
    content = server.requests[-1].messages[0]["content"]
    assert "LIONAGI_SECTION_TRUNCATED" not in content
    from lionagi_turns.profiles.amendment1._integration import last_skip_reading

    reading = last_skip_reading(b)
    assert reading is not None and [u.name for u in reading.undetermined] == ["open"]


def test_switching_profiles_requires_uninstall() -> None:
    install(profile="amendment1")
    install(profile="amendment1")  # idempotent
    with pytest.raises(IntegrationError, match="uninstall"):
        install()
    uninstall()
    assert ContextTool.__dict__["bind"] is ORIGINAL_BIND
    with pytest.raises(ValueError, match="choose one of"):
        install(profile="nope")
    with pytest.raises(ValueError, match="amendment1"):
        install(budgets=SectionBudgets())
    assert not is_installed()


def test_a_foreign_context_tool_patch_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def other(self: Any, branch: Any) -> Any:
        return ORIGINAL_BIND(self, branch)

    monkeypatch.setattr(ContextTool, "bind", other)
    with pytest.raises(IntegrationError, match=r"ContextTool\.bind"):
        install(profile="amendment1")
    assert not is_installed()
    monkeypatch.undo()


async def test_a_refused_turn_makes_no_model_call_and_records_nothing(server: ChatServer) -> None:
    from lionagi_turns.amendment1 import SectionBudgetRefused

    b = _history(server)
    before = [m.id for m in b.messages]
    install(profile="amendment1", budgets=SectionBudgets(system=0))
    with pytest.raises(SectionBudgetRefused) as info:
        await b.communicate("now")
    assert [r.section for r in info.value.bounds] == [
        "system", "instruction", "history", "context", "tool_results"
    ]
    assert server.requests == []
    assert [m.id for m in b.messages] == before


def _react_replies() -> list[str]:
    import json

    reason = {"title": "plan", "content": "step", "confidence_score": 0.8}
    first = {"analysis": "One more round.", "extension_needed": True,
             "action_strategy": "concurrent", "reason": reason}
    second = {"analysis": "Done.", "extension_needed": False, "action_strategy": "concurrent",
              "reason": reason, "action_required": False, "action_requests": []}
    return [json.dumps(r) for r in (first, second, {"answer": "All done."})]


async def _react_chars(server: ChatServer, profile: str | None) -> list[int]:
    from e2e.http_server import Reply  # type: ignore[import-not-found]

    b = Branch(system="policy", chat_model=_model(server))
    if profile is not None:
        install(profile=profile)
    server.script(*(Reply(content=r) for r in _react_replies()))
    start = len(server.requests)
    await b.ReAct(instruct={"instruction": "study", "context": ["CALLER-CONTEXT " * 200]},
                  max_extensions=1, extension_allowed=True)
    if profile is not None:
        uninstall()
    sent = server.requests[start:]
    assert len(sent) == 3
    return [sum(len(str(m["content"])) for m in r.messages) for r in sent]


async def test_react_under_the_profile_sends_the_context_once_per_call(
    server: ChatServer,
) -> None:
    """Same ReAct run with install off and with the amendment1 profile: each later call carries
    the caller's context once, as lionagi's own pass does, and no call grows past lionagi's by
    more than the amendment's own envelope lines."""
    import warnings

    from lionagi_turns.integration import TurnsCompatibilityWarning
    from lionagi_turns.integration._install import _reset_warnings

    plain = await _react_chars(server, None)
    _reset_warnings()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        amended = await _react_chars(server, "amendment1")
    assert not [w for w in caught if issubclass(w.category, TurnsCompatibilityWarning)]
    print("ReAct chars per call, install off:", plain, "amendment1:", amended)
    for call in server.requests[-3:]:
        text = "".join(str(m["content"]) for m in call.messages)
        assert text.count("CALLER-CONTEXT") == 200
    assert all(a <= p + 200 for a, p in zip(amended, plain, strict=True)), (amended, plain)


async def test_run_on_a_cli_model_sends_the_amended_prompt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``Branch.run`` against the fake ``claude`` executable (a real subprocess): the prompt
    it receives is lionagi's prompt for the amended compiled messages, markers included."""
    import e2e.conftest as e2e_conftest  # type: ignore[import-not-found]  # puts fake claude on PATH
    from e2e.harness import cli_prompt, collect  # type: ignore[import-not-found]
    from lionagi.providers.anthropic import claude_code

    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_CLAUDE_LOG", str(log))
    monkeypatch.setattr(claude_code, "CLAUDE_CLI", str(e2e_conftest.FAKE_CLAUDE))
    monkeypatch.setattr(claude_code, "HAS_CLAUDE_CODE_CLI", True)

    b = Branch(system="policy", chat_model=iModel(provider="claude_code", model="sonnet"))
    add_instruction(b, "q1")
    add_assistant(b, "calling")
    add_action_pair(b, "lookup", {"q": "x"}, "found")
    budgets = SectionBudgets(history=0)
    ins = b.msgs.create_instruction(instruction="now")
    expected = to_provider_messages(
        compile_chat_request(b, TurnRequest(instruction=ins), budgets=budgets)
    )
    install(profile="amendment1", budgets=budgets)
    await collect(b.run("now"))
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert len(calls) == 1
    assert calls[0]["prompt"] == cli_prompt(expected)
    assert marker("history", 2, "truncated") in calls[0]["prompt"]
    assert "LIONAGI_TOOL_RESULTS_JSON" in calls[0]["prompt"]


async def test_skip_readings_are_kept_per_branch_object_not_per_id(server: ChatServer) -> None:
    from lionagi_turns.profiles.amendment1._integration import last_skip_reading

    b = Branch(system="policy", chat_model=_model(server))
    b.providers.budget = 3
    b.providers.register(_Fixed("a b"), name="first", priority=1)
    b.providers.register(_Fixed("a b c d"), name="open", max_tokens=5)
    twin = Branch.from_dict(b.to_dict())  # a restored copy: another branch with the same id
    twin.chat_model = _model(server)
    assert twin.id == b.id and twin is not b
    install(profile="amendment1")
    await b.communicate("now")
    assert last_skip_reading(twin) is None  # the twin was never compiled
    await twin.communicate("now")
    mine, its = last_skip_reading(b), last_skip_reading(twin)
    assert mine is not None and [u.name for u in mine.undetermined] == ["open"]
    assert its is not None and its.undetermined == () and its.skipped == ()
