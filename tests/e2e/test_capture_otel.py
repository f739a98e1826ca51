"""``install(otel=True)``: one GenAI-convention span per installed call, its values those the
fake server received and reported; tracing never changes what is sent."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from lionagi import Branch, iModel

import lionagi_turns

from .anthropic_server import AnthropicServer
from .http_server import ChatServer

otel_sdk = pytest.importorskip("opentelemetry.sdk.trace")
from opentelemetry import trace  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)

pytestmark = pytest.mark.usefixtures("offline_tokens")
_EXPORTER = InMemorySpanExporter()


@pytest.fixture
def spans(monkeypatch: pytest.MonkeyPatch) -> InMemorySpanExporter:
    provider = otel_sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(_EXPORTER))
    monkeypatch.setattr(trace, "get_tracer", provider.get_tracer)
    _EXPORTER.clear()
    lionagi_turns.uninstall()
    yield _EXPORTER
    lionagi_turns.uninstall()


def _openai(server: ChatServer) -> Any:
    return iModel(provider="openai", model="gpt-4.1-mini", api_key="sk-otel-key",
                  base_url=server.base_url, requires_tokens=False, allow_local_network=True)


def test_each_call_is_one_span_with_what_the_server_saw(spans) -> None:
    lionagi_turns.install(otel=True)
    with ChatServer() as server:
        server.script("one", "two")
        branch = Branch(system="sys", chat_model=_openai(server))
        asyncio.run(branch.communicate("first"))
        asyncio.run(branch.operate(instruction="second"))
        bodies = [r.body for r in server.chat_requests()]
    got = spans.get_finished_spans()
    assert len(got) == 2
    for span, body in zip(got, bodies, strict=True):
        a = dict(span.attributes)
        assert span.name == f"chat {body['model']}"
        assert a["gen_ai.operation.name"] == "chat"
        assert a["gen_ai.provider.name"] == "openai"
        assert a["gen_ai.request.model"] == body["model"]
        assert a["gen_ai.usage.input_tokens"] == 11 and a["gen_ai.usage.output_tokens"] == 7
        assert a["gen_ai.response.finish_reasons"] == ("stop",)
        assert a["lionagi_turns.profile"] == "default"
        assert a["lionagi_turns.messages"] == len(body["messages"])
        assert "gen_ai.input.messages" not in a
        assert "sk-otel-key" not in json.dumps({k: str(v) for k, v in a.items()})


def test_anthropic_cache_tokens_on_the_span(spans) -> None:
    lionagi_turns.install(otel=True)
    with AnthropicServer() as server:
        server.script("a", "b")
        model = iModel(provider="anthropic", model="claude-sonnet-4-5", api_key="x",
                       base_url=server.base_url, requires_tokens=False,
                       allow_local_network=True, prompt_caching=True)
        branch = Branch(system="stable system text " * 30, chat_model=model)
        asyncio.run(branch.communicate("hello"))
        asyncio.run(branch.communicate("again"))
        usages = [u.anthropic() for u in server.usages()]
    got = spans.get_finished_spans()
    assert len(got) == 2
    for span, usage in zip(got, usages, strict=True):
        a = dict(span.attributes)
        assert a["gen_ai.provider.name"] == "anthropic"
        assert a["gen_ai.usage.input_tokens"] == usage["input_tokens"]
        assert a["gen_ai.usage.cache_read.input_tokens"] == usage["cache_read_input_tokens"]
        assert a["gen_ai.usage.cache_creation.input_tokens"] == usage[
            "cache_creation_input_tokens"]
        assert a["lionagi_turns.cache.marks"]
        assert "lionagi_turns.cache.stable_count" in a


def test_a_failed_call_span_has_error_type(spans) -> None:
    from .http_server import Reply

    lionagi_turns.install(otel=True)
    with ChatServer() as server:
        server.script(Reply(status=400))
        branch = Branch(chat_model=_openai(server))
        with pytest.raises(Exception):  # noqa: B017 - whichever lionagi raises
            asyncio.run(branch.communicate("x"))
    (span,) = spans.get_finished_spans()
    assert span.attributes["error.type"] not in ("", "ok")
    assert span.status.status_code.name == "ERROR"


def test_content_only_when_opted_in_and_bodies_the_same_on_and_off(spans, monkeypatch) -> None:
    def run(otel: bool) -> list[dict[str, Any]]:
        lionagi_turns.uninstall()
        lionagi_turns.install(otel=otel)
        with ChatServer() as server:
            server.script("one", "two")
            branch = Branch(system="sys", chat_model=_openai(server))
            asyncio.run(branch.communicate("first"))
            asyncio.run(branch.communicate("second"))
            return [r.body for r in server.chat_requests()]

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    off = run(False)
    assert spans.get_finished_spans() == ()
    on = run(True)
    assert on == off
    spans_on = spans.get_finished_spans()
    assert len(spans_on) == 2
    sent = json.loads(spans_on[1].attributes["gen_ai.input.messages"])
    assert sent["messages"] == on[1]["messages"]


def test_env_turns_it_on(spans, monkeypatch) -> None:
    monkeypatch.setenv("LIONAGI_TURNS_OTEL", "1")
    lionagi_turns.install()
    with ChatServer() as server:
        server.script("one")
        asyncio.run(Branch(chat_model=_openai(server)).communicate("x"))
    assert len(spans.get_finished_spans()) == 1


def test_default_profile_spans_carry_the_sections_compile_reports(spans, tmp_path) -> None:
    """Each default-profile span has the request's per-section tokens under the attribute
    names a ceiling's span uses, equal to what ``lionagi-turns compile --at K`` reports for
    the K-th call rebuilt from the saved branch (whose messages are what the server received)."""
    from lionagi_turns.cli._compile import compile_report
    from lionagi_turns.cli._load import load_branch

    lionagi_turns.install(otel=True)
    with ChatServer() as server:
        server.script("one", "two")
        branch = Branch(system="You are an order-status assistant; never guess a date.",
                        chat_model=_openai(server))
        asyncio.run(branch.communicate("Where is order 1042?"))
        asyncio.run(branch.communicate("And order 1043?"))
        bodies = [r.body for r in server.chat_requests()]
    path = tmp_path / "branch.json"
    path.write_text(json.dumps(branch.to_dict(mode="json")), encoding="utf-8")
    got = spans.get_finished_spans()
    assert len(got) == 2
    for k, (span, body) in enumerate(zip(got, bodies, strict=True), 1):
        report = compile_report(load_branch(path), at=k)
        assert report["messages"] == body["messages"]  # the rebuilt request is the one sent
        a = dict(span.attributes)
        for name, row in report["sections"].items():
            assert a[f"lionagi_turns.sections.{name}.tokens"] == row["tokens"], (k, name)
        assert a["lionagi_turns.sections.system.tokens"] > 0  # the fold's system part


@pytest.mark.parametrize("profile", ["default", "amendment1"])
def test_prompt_cache_spans_carry_the_sections_compile_reports(
    spans, tmp_path, capsys, profile: str
) -> None:
    """A call laid out for the prompt cache (Anthropic, ``prompt_caching=True``) has the
    request's per-section tokens on its span, system blocks included, equal to what
    ``lionagi-turns compile --profile <profile>+prompt-cache --at K`` reports for that call
    rebuilt from the saved branch (whose messages and system blocks are what the server got)."""
    from lionagi_turns.cli import main

    def check_stock(sku: str) -> dict:
        """Stock of one product.

        Args:
            sku: the product's stock-keeping unit
        """
        return {"sku": sku, "units": 40}

    # lionagi reads the annotations as types (this module's are strings)
    check_stock.__annotations__ = {"sku": str, "return": dict}
    lionagi_turns.install(profile=profile, otel=True)
    with AnthropicServer() as server:
        server.script("a", "b")
        model = iModel(provider="anthropic", model="claude-sonnet-4-5", api_key="x",
                       base_url=server.base_url, requires_tokens=False,
                       allow_local_network=True, prompt_caching=True)
        branch = Branch(system="stable system text " * 30, chat_model=model,
                        tools=[check_stock])
        asyncio.run(branch.communicate("Is SKU-1 in stock?"))
        asyncio.run(branch.communicate("And SKU-2?"))
        bodies = server.bodies()
    path = tmp_path / "branch.json"
    path.write_text(json.dumps(branch.to_dict(mode="json"), default=str), encoding="utf-8")
    got = spans.get_finished_spans()
    assert len(got) == 2
    layout = "prompt-cache" if profile == "default" else f"{profile}+prompt-cache"
    for k, (span, body) in enumerate(zip(got, bodies, strict=True), 1):
        capsys.readouterr()
        with pytest.raises(SystemExit) as ended:
            main(["compile", str(path), "--profile", layout, "--at", str(k), "--format", "json"])
        assert ended.value.code in (0, None)
        report = json.loads(capsys.readouterr().out)
        assert [b["text"] for b in body["system"]] == [b["text"] for b in report["system"]]
        a = dict(span.attributes)
        for name, row in report["sections"].items():
            assert a[f"lionagi_turns.sections.{name}.tokens"] == row["tokens"], (k, name)
        assert a["lionagi_turns.sections.system.tokens"] > 0
        assert a["lionagi_turns.sections.tools.tokens"] > 0
