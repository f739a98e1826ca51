"""The ceiling in the provider's own tokens: a tool loop over HTTP under
``install(profile="amendment1", ceiling=InputCeiling(N))`` against fake servers whose usage
comes from a tokenizer counting ~18% more or ~10% fewer tokens than o200k. From the second
request on no request's count by the server passes N; without calibration (the offline
measure only, as before) the +18% server sees requests over N. A reload mid-loop keeps the
calibration."""

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from lionagi import Branch, iModel
from pydantic import BaseModel

import lionagi_turns
from lionagi_turns.amendment1 import (
    CEILING_KEY,
    Calibration,
    InputCeiling,
    TurnRequest,
    compile_chat_request,
)
from lionagi_turns.cli._load import parse_branch

from .counting_servers import CountingChatServer, anthropic_counts, counting_anthropic
from .http_server import Reply

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("offline_tokens")]

SYSTEM = "You are the dispatcher's assistant. Cite every tool result you use. " * 8
CEILING, LOW_WATER = 2500, 1500
ROUNDS = 14


def check_stock(sku: str) -> dict:
    """Look up the stock of one product.

    Args:
        sku: the product's stock-keeping unit
    """
    return {"sku": sku, "detail": "".join(f"{sku} lot {n}: bay {n % 7}, 40 units. "
                                          for n in range(25))}


class Step(BaseModel):
    finding: str


def step(i: int) -> dict[str, Any]:
    return {"finding": f"f{i}", "action_required": True,
            "action_requests": [{"function": "check_stock",
                                 "arguments": {"sku": f"SKU-{i}"}}]}


async def rounds(branch: Branch, start: int, stop: int) -> None:
    for i in range(start, stop):
        await branch.operate(instruction=f"round {i}", response_format=Step, actions=True)


def records(branch: Branch) -> list[dict[str, Any]]:
    return [m.metadata[CEILING_KEY] for m in branch.messages
            if type(m).__name__ == "Instruction"]


@pytest.fixture
def uninstalled() -> Iterator[None]:
    lionagi_turns.uninstall()
    yield
    lionagi_turns.uninstall()


def openai_loop(
    scale: float, ceiling: InputCeiling, n: int = ROUNDS
) -> tuple[list[int], Branch, list[dict[str, Any]]]:
    """The server's count of each request of an ``n``-round tool loop, the branch and the
    bodies the server received."""
    with CountingChatServer(scale=scale) as server:
        server.script(*(Reply(content=step(i)) for i in range(n)))
        lionagi_turns.install(profile="amendment1", ceiling=ceiling)
        try:
            model = iModel(provider="openai", model="gpt-4.1-mini", api_key="x",
                           base_url=server.base_url, requires_tokens=False,
                           allow_local_network=True)
            branch = Branch(system=SYSTEM, chat_model=model, tools=[check_stock])
            asyncio.run(rounds(branch, 0, n))
        finally:
            lionagi_turns.uninstall()
        return server.counts(), branch, [r.body for r in server.chat_requests()]


def anthropic_model(server: Any) -> Any:
    return iModel(provider="anthropic", model="claude-sonnet-4-5", api_key="x",
                  base_url=server.base_url, requires_tokens=False, allow_local_network=True,
                  prompt_caching=True)


def anthropic_loop(
    scale: float, ceiling: InputCeiling, n: int = ROUNDS
) -> tuple[list[int], Branch, list[dict[str, Any]]]:
    with counting_anthropic(scale) as server:
        server.script(*(step(i) for i in range(n)))
        lionagi_turns.install(profile="amendment1", ceiling=ceiling)
        try:
            branch = Branch(system=SYSTEM, chat_model=anthropic_model(server),
                            tools=[check_stock])
            asyncio.run(rounds(branch, 0, n))
        finally:
            lionagi_turns.uninstall()
        return anthropic_counts(server), branch, server.bodies()


UNCALIBRATED = InputCeiling(CEILING, low_water=LOW_WATER, calibration=None)
CALIBRATED = InputCeiling(CEILING, low_water=LOW_WATER)


@pytest.mark.parametrize("loop", [openai_loop, anthropic_loop], ids=["openai", "anthropic"])
def test_a_server_counting_18_percent_more_is_never_passed_after_the_first_response(
    uninstalled: None, loop: Any
) -> None:
    before, plain, _ = loop(1.18, UNCALIBRATED)
    # before: the offline measure holds the ceiling, the server's own count does not
    assert max(r["used"] for r in records(plain)) <= CEILING
    assert sum(n > CEILING for n in before) >= 3
    after, branch, _ = loop(1.18, CALIBRATED)
    assert len(after) == ROUNDS
    assert max(after[1:]) <= CEILING, after
    kept = records(branch)
    assert kept[0]["calibration"]["source"] == "offline"
    for record in kept[1:]:
        calibration = record["calibration"]
        assert calibration["source"] == "reported"
        assert calibration["factor"] > 1  # the server counts more than the offline measure
        assert record["used"] <= calibration["limit"] < CEILING
        assert record["used"] * calibration["factor"] <= CEILING
    # every request's count by the server is in the record of the instruction it was sent for
    assert [r["reported"]["input"] for r in kept] == after
    assert sum(r["stepped"] for r in kept) >= 2


@pytest.mark.parametrize("loop", [openai_loop, anthropic_loop], ids=["openai", "anthropic"])
def test_a_server_counting_10_percent_fewer_gives_ratios_below_one_and_is_never_passed(
    uninstalled: None, loop: Any
) -> None:
    counts, branch, _ = loop(0.90, CALIBRATED)
    assert max(counts) <= CEILING
    last = records(branch)[-1]["calibration"]
    assert last["source"] == "reported"
    assert max(last["ratios"]) < 1  # the offline measure overcounts this provider's tokens
    assert last["factor"] == pytest.approx(max(last["ratios"]) * 1.05, abs=1e-3)
    assert last["limit"] == pytest.approx(CEILING / last["factor"], abs=2)
    assert max(r["used"] for r in records(branch)) <= last["limit"]


def test_without_usage_a_margin_keeps_room_before_the_first_response(
    uninstalled: None,
) -> None:
    """The pre-response margin (opt-in): the first request is bounded at the ceiling less
    the margin; with the default (0) it is bounded at the ceiling itself."""
    margin = InputCeiling(CEILING, low_water=LOW_WATER,
                          calibration=Calibration(unreported_margin=0.25))
    _, branch, _ = openai_loop(1.18, margin, n=4)
    first = records(branch)[0]["calibration"]
    assert first == {"source": "offline", "factor": 1.0, "margin": 0.25, "ratios": [],
                     "model": None, "limit": 1875, "low_limit": 1125}
    _, plain, _ = openai_loop(1.18, CALIBRATED, n=1)
    assert records(plain)[0]["calibration"]["limit"] == CEILING


def test_a_reloaded_branch_keeps_the_calibration_and_continues_byte_for_byte(
    uninstalled: None,
) -> None:
    """Half the loop, ``Branch.to_dict`` / ``from_dict``, the other half: the requests after
    the reload are the uninterrupted loop's, under the same calibration, and none passes the
    ceiling by the server's count."""
    whole, uninterrupted, sent = anthropic_loop(1.18, CALIBRATED)
    half = ROUNDS // 2
    with counting_anthropic(1.18) as server:
        server.script(*(step(i) for i in range(ROUNDS)))
        lionagi_turns.install(profile="amendment1", ceiling=CALIBRATED)
        try:
            branch = Branch(system=SYSTEM, chat_model=anthropic_model(server),
                            tools=[check_stock])
            asyncio.run(rounds(branch, 0, half))
            saved = json.loads(json.dumps(branch.to_dict(mode="json"), default=str))
            reloaded = parse_branch(saved).branch
            reloaded.chat_model = anthropic_model(server)
            reloaded.register_tools([check_stock])
            asyncio.run(rounds(reloaded, half, ROUNDS))
        finally:
            lionagi_turns.uninstall()
        counts = anthropic_counts(server)
        bodies = server.bodies()
    assert counts == whole
    assert max(counts[1:]) <= CEILING
    after = [r["calibration"] for r in records(reloaded)]
    assert after == [r["calibration"] for r in records(uninterrupted)]
    assert after[half]["source"] == "reported"
    assert bodies == sent  # byte for byte what the uninterrupted loop sent
    # the reports in the saved records are what carry it: without them the first request
    # after a reload is bounded by the offline measure again
    for message in saved["messages"]["collections"]:
        message.get("metadata", {}).get(CEILING_KEY, {}).pop("reported", None)
    stripped = parse_branch(saved).branch
    ins = stripped.msgs.create_instruction(instruction="next")
    compiled = compile_chat_request(stripped, TurnRequest(instruction=ins), ceiling=CALIBRATED)
    assert compiled.instruction.metadata[CEILING_KEY]["calibration"]["source"] == "offline"


def test_the_capture_record_and_the_span_carry_the_calibration_and_the_servers_count(
    uninstalled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry import trace
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from lionagi_turns.integration._capture_line import capture_line

    exporter = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(trace, "get_tracer", provider.get_tracer)
    with CountingChatServer(scale=1.18) as server:
        server.script(*(Reply(content=step(i)) for i in range(3)))
        lionagi_turns.install(profile="amendment1", ceiling=CALIBRATED, otel=True)
        try:
            model = iModel(provider="openai", model="gpt-4.1-mini", api_key="x",
                           base_url=server.base_url, requires_tokens=False,
                           allow_local_network=True)
            branch = Branch(system=SYSTEM, chat_model=model, tools=[check_stock])
            with lionagi_turns.capture() as calls:
                asyncio.run(rounds(branch, 0, 3))
        finally:
            lionagi_turns.uninstall()
        counts = server.counts()
    assert len(calls) == len(counts) == 3
    spans = exporter.get_finished_spans()
    chats = [s for s in spans if s.name.startswith("chat")]
    assert len(chats) == 3
    for call, n, span, stored in zip(calls, counts, chats, records(branch), strict=True):
        assert call.ceiling is not None
        assert call.ceiling["reported"] == {"input": n, "model": "gpt-4.1-mini"}
        assert call.ceiling["calibration"] == stored["calibration"]
        line = capture_line(call)["ceiling"]
        assert line["calibration"] == stored["calibration"] and line["reported"]["input"] == n
        a = dict(span.attributes)
        assert a["lionagi_turns.ceiling.reported_input"] == n
        assert a["lionagi_turns.ceiling.calibration.source"] == stored["calibration"]["source"]
        assert a["lionagi_turns.ceiling.calibration.limit"] == stored["calibration"]["limit"]
    assert [c.ceiling["calibration"]["source"] for c in calls] == [
        "offline", "reported", "reported"]


@pytest.mark.slow  # a 4-round loop and three CLI subprocesses: ~5 s on 2 cores
def test_lionagi_turns_compile_shows_the_calibration_the_branch_records(
    uninstalled: None, tmp_path: Any
) -> None:
    """``compile --ceiling`` reads the calibration from the saved branch's records: the JSON
    view (valid against the shipped schema) and the text view show the one the installed
    next compile is in force with."""
    import os
    import subprocess
    import sys
    from importlib import resources

    import jsonschema

    _, branch, _ = openai_loop(1.18, CALIBRATED, n=4)
    path = tmp_path / "branch.json"
    path.write_text(json.dumps(branch.to_dict(mode="json"), default=str), encoding="utf-8")
    ins = branch.msgs.create_instruction(instruction="next")
    expected = compile_chat_request(branch, TurnRequest(instruction=ins), ceiling=CALIBRATED)
    calibration = expected.instruction.metadata[CEILING_KEY]["calibration"]
    assert calibration["source"] == "reported" and len(calibration["ratios"]) == 4
    args = [sys.executable, "-m", "lionagi_turns", "compile", str(path), "--profile",
            "amendment1", "--ceiling", str(CEILING), "--low-water", str(LOW_WATER)]
    run = subprocess.run([*args, "--format", "json"], capture_output=True, text=True,
                         timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    schema = json.loads(resources.files("lionagi_turns.cli").joinpath(
        "schema/lionagi-turns.schema.json").read_text())
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(report))
    assert not errors, [e.message[:200] for e in errors[:3]]
    assert report["ceiling"]["calibration"] == calibration
    # a recorded request is shown under the calibration it was sent under
    at = subprocess.run([*args, "--at", "3", "--format", "json"], capture_output=True,
                        text=True, timeout=60, check=False)
    assert at.returncode == 0, at.stderr
    sent = records(branch)[2]
    assert json.loads(at.stdout)["ceiling"]["calibration"] == sent["calibration"]
    assert sent["calibration"]["source"] == "reported"
    text = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "COLUMNS": "200"})
    assert text.returncode == 0, text.stderr
    assert (f"calibration: gpt-4.1-mini's own count, factor {calibration['factor']:.4f} "
            "(the largest of 4 reported ratios") in text.stdout
    assert f"bounded at {calibration['limit']:,} offline tokens" in text.stdout


def test_the_providers_count_includes_cached_tokens_once() -> None:
    from lionagi_turns.integration._capture import reported_input

    openai = {"usage": {"prompt_tokens": 900, "completion_tokens": 5,
                        "prompt_tokens_details": {"cached_tokens": 600}}}
    anthropic = {"usage": {"input_tokens": 40, "output_tokens": 5,
                           "cache_read_input_tokens": 600, "cache_creation_input_tokens": 260}}
    assert reported_input(openai) == 900  # prompt_tokens already holds the cached 600
    assert reported_input(anthropic) == 900  # input_tokens does not: reads and writes added
    assert reported_input({"usage": {"input_tokens": 70, "output_tokens": 5}}) == 70
    assert reported_input({"usage": {"completion_tokens": 5}}) is None
    assert reported_input({"choices": []}) is None
