"""``lionagi_turns.capture()`` and ``last_request()``: one record per installed call, made of
what the one compile produced and what lionagi's endpoint sent, with usage and outcome."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from lionagi import Branch, iModel

import lionagi_turns
from lionagi_turns import CompiledChatRequest
from lionagi_turns.integration._capture import INLINE_LIMIT, redacted

from .anthropic_server import AnthropicServer
from .http_server import ChatServer, Reply

pytestmark = pytest.mark.usefixtures("offline_tokens")

KEY = "sk-capture-secret-key-1234"


def openai(server: ChatServer) -> Any:
    return iModel(provider="openai", model="gpt-4.1-mini", api_key=KEY,
                  base_url=server.base_url, requires_tokens=False, allow_local_network=True)


def anthropic(server: AnthropicServer) -> Any:
    return iModel(provider="anthropic", model="claude-sonnet-4-5", api_key=KEY,
                  base_url=server.base_url, requires_tokens=False, allow_local_network=True,
                  prompt_caching=True)


@pytest.fixture
def installed_turns():
    lionagi_turns.uninstall()
    lionagi_turns.install()
    yield
    lionagi_turns.uninstall()


def test_capture_outside_install_says_to_install() -> None:
    lionagi_turns.uninstall()
    opened = lionagi_turns.capture()
    with pytest.raises(lionagi_turns.IntegrationError, match=r"call lionagi_turns\.install\(\)"):
        opened.__enter__()


def test_each_communicate_is_one_record_of_what_the_server_received(installed_turns) -> None:
    with ChatServer() as server:
        server.script("one", "two")
        branch = Branch(system="be brief", chat_model=openai(server))

        async def drive() -> list[Any]:
            async with lionagi_turns.capture() as calls:
                await branch.communicate("first")
                await branch.communicate("second")
            return calls

        calls = asyncio.run(drive())
        received = [r.body for r in server.chat_requests()]
    assert len(calls) == 2
    for record, body in zip(calls, received, strict=True):
        assert record.payload == body
        assert record.branch_id == str(branch.id)
        assert record.profile == "default"
        assert isinstance(record.compiled, CompiledChatRequest)
        assert record.outcome == "ok"
        assert record.usage == {"input_tokens": 11, "output_tokens": 7}
    assert lionagi_turns.last_request(branch) is calls[-1]
    assert "outcome=ok" in repr(calls[0])


def test_anthropic_record_has_cache_segments_marks_and_usage(installed_turns) -> None:
    with AnthropicServer() as server:
        server.script("a", "b")
        branch = Branch(system="stable system text " * 20, chat_model=anthropic(server))

        async def drive() -> list[Any]:
            with lionagi_turns.capture() as calls:
                await branch.communicate("hello")
                await branch.operate(instruction="again")
            return calls

        calls = asyncio.run(drive())
        bodies, usages = server.bodies(), server.usages()
    assert [c.payload for c in calls] == bodies
    for record, usage in zip(calls, usages, strict=True):
        assert record.cache_segments is not None
        assert record.cache_marks and all("[" in m for m in record.cache_marks)
        reported = usage.anthropic()
        assert record.usage["input_tokens"] == reported["input_tokens"]
        assert record.usage["cache_read_tokens"] == reported["cache_read_input_tokens"]
        assert record.usage["cache_write_tokens"] == reported["cache_creation_input_tokens"]
        assert record.usage["output_tokens"] == reported["output_tokens"]


def test_nested_and_concurrent_captures_see_their_own_calls(installed_turns) -> None:
    with ChatServer() as server:
        server.script(*["r"] * 4)
        a = Branch(chat_model=openai(server))
        b = Branch(chat_model=openai(server))

        async def one(branch: Branch) -> list[Any]:
            with lionagi_turns.capture() as calls:
                await branch.communicate("x")
            return calls

        async def drive() -> tuple[list[Any], list[Any], list[Any], list[Any]]:
            with lionagi_turns.capture() as outer:
                with lionagi_turns.capture() as inner:
                    await a.communicate("nested")
                ca, cb = await asyncio.gather(one(a), one(b))
            return outer, inner, ca, cb

        outer, inner, ca, cb = asyncio.run(drive())
    assert len(inner) == 1 and inner[0].branch_id == str(a.id)
    assert [r.branch_id for r in ca] == [str(a.id)]
    assert [r.branch_id for r in cb] == [str(b.id)]
    assert len(outer) == 3


def test_a_failed_call_is_recorded_with_the_exception_type(installed_turns) -> None:
    with ChatServer() as server:
        server.script(Reply(status=400))
        branch = Branch(chat_model=openai(server))

        async def drive() -> list[Any]:
            with lionagi_turns.capture() as calls, pytest.raises(Exception):  # noqa: B017
                await branch.communicate("x")
            return calls

        calls = asyncio.run(drive())
    assert len(calls) == 1 and calls[0].outcome not in (None, "ok")


def test_no_api_key_anywhere_and_large_data_urls_kept_by_digest(installed_turns) -> None:
    with ChatServer() as server:
        server.script("seen")
        branch = Branch(chat_model=openai(server))

        async def drive() -> list[Any]:
            with lionagi_turns.capture() as calls:
                await branch.communicate("hi")
            return calls

        calls = asyncio.run(drive())
    assert KEY not in repr(calls[0]) and KEY not in json.dumps(calls[0].payload)
    big = "data:image/png;base64," + "A" * (INLINE_LIMIT + 1)
    kept = redacted({"x": [big, "data:image/png;base64,AAAA"]})
    assert kept["x"][0].startswith("data:image/png;sha256=")
    assert kept["x"][0].endswith(f";bytes={len(big)}")
    assert kept["x"][1] == "data:image/png;base64,AAAA"
