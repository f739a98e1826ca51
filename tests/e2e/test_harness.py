"""The e2e fixtures themselves: a real server on 127.0.0.1 and a really spawned fake CLI.

These run without the compiler installed: they pin what lionagi 0.36 does at each boundary so
the matrix tests can rely on it (what a POST carries, how a CLI prompt is flattened, when
``--resume`` is sent).
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from lionagi import Branch
from lionagi.protocols.messages import ActionRequest, ActionResponse, AssistantResponse

from .fake_cli_log import flag
from .harness import BoundarySpy, cli_prompt, collect
from .http_server import ChatServer, Reply, tool_call

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


def _post(url: str, body: bytes) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_server_listens_on_loopback_records_bodies_and_plays_script_in_order() -> None:
    with ChatServer() as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        server.script("first", Reply(tool_calls=(tool_call("c1", "add", {"a": 1}),),
                                     content=None))
        url = server.base_url + "/chat/completions"
        s1, r1 = _post(url, json.dumps({"model": "m", "messages": [{"role": "user",
                                                                    "content": "a"}]}).encode())
        s2, r2 = _post(url, json.dumps({"model": "m", "messages": []}).encode())
        s3, r3 = _post(url, json.dumps({"model": "m", "messages": []}).encode())
        valid_payloads = server.payloads()
        s4, _ = _post(url, b"not json")
        s5, _ = _post(server.base_url + "/embeddings", b"{}")
        port = server.port
    assert (s1, s2, s3, s4, s5) == (200, 200, 200, 400, 404)
    assert r1["choices"][0]["message"]["content"] == "first"
    assert r2["choices"][0]["finish_reason"] == "tool_calls"
    assert json.loads(r2["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]) \
        == {"a": 1}
    assert r3["choices"][0]["message"]["content"] == "ok"  # script exhausted -> default
    assert valid_payloads == [[{"role": "user", "content": "a"}], [], []]
    assert len(server.requests) == 5
    assert server.requests[3].body == {"_invalid": "not json"}
    with pytest.raises(KeyError, match="has no 'messages'"):
        server.payloads()
    with pytest.raises(OSError):  # shut down: nothing listens any more
        urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/chat/completions", timeout=2)


async def test_branch_chat_reaches_the_server_with_its_messages(chat_server, openai_model) -> None:
    chat_server.script("hi there")
    branch = Branch(system="Be brief.", chat_model=openai_model())
    answer = await branch.chat("hello", guidance="g")
    assert answer == "hi there"
    (request,) = chat_server.chat_requests()
    assert request.body["model"] == "gpt-4.1-mini"
    assert [m["role"] for m in request.messages] == ["user"]
    assert "Instruction: hello" in request.messages[0]["content"]


async def test_json_reply_parses_into_a_response_format(chat_server, openai_model) -> None:
    from pydantic import BaseModel

    class Answer(BaseModel):
        value: int

    chat_server.script({"value": 42})
    branch = Branch(chat_model=openai_model())
    result = await branch.communicate("give a number", response_format=Answer)
    assert isinstance(result, BaseModel) and result.model_dump() == {"value": 42}


async def test_fake_claude_is_spawned_and_flattens_fresh_and_resumed_sessions(
    fake_claude, claude_model
) -> None:
    fake_claude.script(
        {"text": "done", "session_id": "S-1",
         "tools": [{"id": "tu1", "name": "Bash", "input": {"command": "ls"}, "output": "a.txt"}]},
        {"text": "second", "session_id": "S-1"},
    )
    model = claude_model()
    branch = Branch(system="Be brief.", chat_model=model)
    spy = BoundarySpy(model, watch=branch)

    first = await collect(branch.run("list files"))
    second = await collect(branch.run("and again"))

    assert [type(m).__name__ for m in first] == [
        "Instruction", "ActionRequest", "ActionResponse", "AssistantResponse"]
    assert [type(m).__name__ for m in second] == ["Instruction", "AssistantResponse"]
    assert isinstance(first[1], ActionRequest) and first[1].content.function == "Bash"
    assert isinstance(first[2], ActionResponse) and first[2].content.output == "a.txt"
    assert isinstance(second[1], AssistantResponse)
    assert second[1].content.assistant_response == "second"

    calls = fake_claude.calls()
    assert len(calls) == len(spy.calls) == 2
    assert calls[0]["resume"] is None and spy.calls[0].resume is None
    assert calls[1]["resume"] == spy.calls[1].resume == "S-1"
    assert "--output-format" in calls[0]["argv"] and calls[0]["argv"][-1] == "--verbose"
    # Fresh session: every message's content joined with "\n"; resumed: only the last one.
    fresh = spy.calls[0].messages
    assert calls[0]["prompt"] == "\n".join(m["content"] for m in fresh) == cli_prompt(fresh)
    resumed = spy.calls[1].messages
    assert len(resumed) == 3
    assert calls[1]["prompt"] == resumed[-1]["content"] == cli_prompt(resumed, "S-1")
    # The spy saw the branch as it was when the payload was built: the second turn's
    # instruction was already recorded, its answer not yet.
    assert spy.calls[1].progression == tuple(branch.progression)[:-1]


async def test_fake_claude_refuses_to_run_unobserved(tmp_path, monkeypatch) -> None:
    import subprocess

    from .conftest import FAKE_CLAUDE

    monkeypatch.delenv("FAKE_CLAUDE_LOG", raising=False)
    proc = subprocess.run([str(FAKE_CLAUDE), "-p", "x"], capture_output=True, text=True,
                          timeout=30, check=False)
    assert proc.returncode == 2
    assert "FAKE_CLAUDE_LOG" in proc.stderr


@pytest.mark.parametrize(("provider", "model_name", "program"), [
    ("codex", "gpt-5.3-codex", "codex"), ("gemini_code", "gemini-4-argon", "agy"),
    ("pi", "openai/gpt-4.1", "pi")])
async def test_fake_clis_are_spawned_and_answer_as_lionagi_parses(
    fake_clis, provider: str, model_name: str, program: str
) -> None:
    from lionagi import iModel

    fake_clis.replies("first answer", "second answer")
    model = iModel(provider=provider, model=model_name)
    branch = Branch(system="Be brief.", chat_model=model)
    spy = BoundarySpy(model, watch=branch)
    assert await branch.communicate("one") == "first answer"
    assert await branch.communicate("two") == "second answer"

    calls = fake_clis.calls(program)
    assert len(calls) == len(spy.calls) == 2
    for call, boundary in zip(calls, spy.calls, strict=True):
        sent = [m["content"] for m in boundary.messages if m["role"] != "system"]
        # agy resumes its conversation (the last message alone); codex and pi get them all.
        prompt = sent[-1] if program == "agy" and boundary.resume else "\n".join(sent)
        where = {"codex": call["stdin"], "agy": call["argv"][1], "pi": call["argv"][-1]}
        assert where[program] == prompt
    sessions = [flag(c["argv"], "--conversation") for c in calls]
    assert sessions == ([None, "conv-1"] if program == "agy" else [None, None])
    assert model.provider_session_id == {"codex": "thread-2", "agy": "conv-1", "pi": None}[
        program]


@pytest.mark.parametrize("name", ["FAKE_CODEX", "FAKE_AGY", "FAKE_PI"])
async def test_fake_clis_refuse_to_run_unobserved(name: str, monkeypatch) -> None:
    import subprocess

    from . import conftest

    monkeypatch.delenv("FAKE_CLI_LOG", raising=False)
    proc = subprocess.run([str(getattr(conftest, name))], input="x", capture_output=True,
                          text=True, timeout=30, check=False)
    assert proc.returncode == 2
    assert "FAKE_CLI_LOG" in proc.stderr
