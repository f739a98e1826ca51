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
from lionagi_turns.integration._capture_line import INLINE_LIMIT, redacted

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
    # The table of last calls is keyed by a weak reference to the branch, not by its id.
    from lionagi_turns.integration import _capture

    assert _capture._last.get(branch) is calls[-1]


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


def _schema() -> dict[str, Any]:
    from importlib import resources

    text = resources.files("lionagi_turns.cli").joinpath("schema/capture.schema.json")
    return json.loads(text.read_text(encoding="utf-8"))


def test_capture_dir_appends_one_valid_line_per_call(tmp_path, monkeypatch) -> None:
    import jsonschema

    lionagi_turns.uninstall()
    lionagi_turns.install(capture_dir=tmp_path / "cap")
    try:
        with ChatServer() as server:
            server.script("one", "two")
            branch = Branch(system="sys", chat_model=openai(server))
            asyncio.run(branch.communicate("first"))
            asyncio.run(branch.communicate("second"))
            received = [r.body for r in server.chat_requests()]
    finally:
        lionagi_turns.uninstall()
    files = list((tmp_path / "cap").iterdir())
    assert [f.name for f in files] == [f"capture-{__import__('os').getpid()}.jsonl"]
    text = files[0].read_text(encoding="utf-8")
    assert KEY not in text
    lines = [json.loads(x) for x in text.splitlines()]
    for line, body in zip(lines, received, strict=True):
        jsonschema.validate(line, _schema())
        assert line["payload"] == body
        assert line["branch"] == str(branch.id) and line["outcome"] == "ok"


def test_the_capture_file_rotates_past_its_cap(tmp_path, monkeypatch) -> None:
    from lionagi_turns.integration import _capture_file

    monkeypatch.setattr(_capture_file, "MAX_BYTES", 1)
    monkeypatch.setattr(_capture_file, "KEEP", 2)
    monkeypatch.setenv("LIONAGI_TURNS_CAPTURE", str(tmp_path))
    lionagi_turns.uninstall()
    lionagi_turns.install()
    try:
        with ChatServer() as server:
            server.script(*["r"] * 4)
            branch = Branch(chat_model=openai(server))
            for n in range(4):
                asyncio.run(branch.communicate(f"m{n}"))
    finally:
        lionagi_turns.uninstall()
    names = sorted(f.name for f in tmp_path.iterdir())
    pid = __import__("os").getpid()
    assert names == [f"capture-{pid}.1.jsonl", f"capture-{pid}.2.jsonl", f"capture-{pid}.jsonl"]
    newest = json.loads((tmp_path / f"capture-{pid}.jsonl").read_text())
    assert newest["payload"]["messages"][-1]["content"].endswith("m3")


def test_an_unwritable_capture_dir_warns_once_and_calls_go_on(tmp_path) -> None:
    from lionagi_turns.integration._capture_file import CaptureWriteWarning

    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    lionagi_turns.uninstall()
    lionagi_turns.install(capture_dir=blocker / "cap")
    try:
        with ChatServer() as server:
            server.script("one", "two")
            branch = Branch(chat_model=openai(server))
            with pytest.warns(CaptureWriteWarning, match="could not write capture lines") as got:
                asyncio.run(branch.communicate("first"))
                asyncio.run(branch.communicate("second"))
            assert len(server.chat_requests()) == 2
    finally:
        lionagi_turns.uninstall()
    assert len([w for w in got if w.category is CaptureWriteWarning]) == 1
    assert [m.role.value for m in branch.messages][-1] == "assistant"


def test_amendment1_record_carries_bounds_and_left_out_and_the_line_validates(tmp_path) -> None:
    import jsonschema

    from lionagi_turns.amendment1 import CompiledChatRequest as AmendedRequest
    from lionagi_turns.amendment1 import SectionBudgets

    lionagi_turns.uninstall()
    lionagi_turns.install(profile="amendment1", budgets=SectionBudgets(history=0),
                          capture_dir=tmp_path)
    try:
        with ChatServer() as server:
            server.script("one", "two", "three")
            branch = Branch(chat_model=openai(server))

            async def drive() -> list[Any]:
                await branch.communicate("first")
                await branch.communicate("second")
                with lionagi_turns.capture() as calls:
                    await branch.communicate("third")
                return calls

            (record,) = asyncio.run(drive())
            sent = server.chat_requests()[-1].body
    finally:
        lionagi_turns.uninstall()
    assert isinstance(record.compiled, AmendedRequest)
    assert record.profile == "amendment1"
    assert record.left_out == 4 == sum(len(b.left_out) for b in record.compiled.bounds)
    assert record.payload == sent
    (found,) = tmp_path.iterdir()
    last = json.loads(found.read_text().splitlines()[-1])
    jsonschema.validate(last, _schema())
    assert last["left_out"] == 4 and {b["section"] for b in last["bounds"]} >= {"history"}


def test_a_record_prints_in_rich_and_shows_in_a_notebook(installed_turns) -> None:
    """``__rich__``: the request's table with the record's facts; ``_repr_html_``: the facts,
    escaped, then the compiled request's page body."""
    from rich.console import Console

    with ChatServer() as server:
        server.script("one")
        branch = Branch(system="be brief", chat_model=openai(server))

        async def drive() -> list[Any]:
            async with lionagi_turns.capture() as calls:
                await branch.communicate("first <b>bold</b>")
            return calls

        record = asyncio.run(drive())[0]
    console = Console(record=True, width=120, color_system=None)
    console.print(record)
    text = " ".join(console.export_text().replace("│", " ").split())
    assert text.startswith(" ".join(repr(record).split()))
    assert "outcome ok" in text and "model gpt-4.1-mini" in text
    assert "input_tokens 11, output_tokens 7" in text and KEY not in text
    page = record._repr_html_()
    assert page.startswith('<div class="lt-call"><table class="call">')
    assert f"<tr><th>branch</th><td>{branch.id}</td></tr>" in page
    assert "<tr><th>outcome</th><td>ok</td></tr>" in page
    assert record.compiled._repr_html_() in page and "first &lt;b&gt;bold&lt;/b&gt;" in page
    assert KEY not in page
