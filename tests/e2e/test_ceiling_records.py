"""A ceiling record no compile could have written (its first kept turn after its own
instruction), and a genuine one written under another ceiling, are not obeyed: over HTTP under
``install(profile="amendment1", ceiling=...)`` on the OpenAI-compatible and the Anthropic
endpoints, and in ``lionagi-turns compile`` / ``check`` (the ignored record listed, a warning)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lionagi import Branch, iModel
from lionagi.protocols.messages import Instruction

import lionagi_turns
from lionagi_turns.amendment1 import (
    CEILING_KEY,
    InputCeiling,
    TurnRequest,
    compile_chat_request,
)
from tests.unit._support import add_action_pair

from .anthropic_server import AnthropicServer
from .http_server import Reply

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("offline_tokens")]

SYSTEM = "You answer from the stock ledger. " * 4


@pytest.fixture
def uninstalled() -> Iterator[None]:
    lionagi_turns.uninstall()
    yield
    lionagi_turns.uninstall()


def history(b: Branch) -> None:
    """Five answered rounds, each with one tool call: 21 messages with the system."""
    for i in range(5):
        b.msgs.add_message(instruction=f"question {i}")
        b.msgs.add_message(assistant_response=f"answer {i}")
        add_action_pair(b, "lookup", {"round": i}, f"row {i}")


def instructions(b: Branch) -> list[Instruction]:
    return [m for m in b.messages if isinstance(m, Instruction)]


def forge(b: Branch) -> str:
    """A record on the second instruction naming the fourth as the first kept turn, shaped
    as a genuine record under ``InputCeiling(100000)``; returns the named id."""
    ins = instructions(b)
    later = str(ins[3].id)
    ins[1].metadata[CEILING_KEY] = {
        "first": later, "stepped": True, "ceiling": 100000, "low_water": 50000, "used": 60,
        "sections": {"system": 40, "instruction": 5, "tool_results": 0, "history": 15},
        "kept_turns": 2, "typical_turn": 7, "turns_before_next_step": 9000,
    }
    return later


def written_under(b: Branch, ceiling: InputCeiling) -> str:
    """A genuine record: the branch's next request compiled under ``ceiling`` and recorded
    (as lionagi does after the call), then answered; returns its first kept turn."""
    ins = b.msgs.create_instruction(instruction="question 5")
    compiled = compile_chat_request(b, TurnRequest(instruction=ins), ceiling=ceiling)
    first = compiled.instruction.metadata[CEILING_KEY]["first"]
    assert first is not None  # the small ceiling dropped turns
    b.msgs.add_message(instruction=compiled.instruction)
    b.msgs.add_message(assistant_response="answer 5")
    return str(first)


def fresh(chat_model: Any = None) -> Branch:
    b = Branch(system=SYSTEM, chat_model=chat_model) if chat_model else Branch(system=SYSTEM)
    history(b)
    return b


def cli(tmp_path: Path, b: Branch, *argv: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "branch.json"
    path.write_text(json.dumps(b.to_dict(mode="json")), encoding="utf-8")
    return subprocess.run([sys.executable, "-m", "lionagi_turns", *argv[:1], str(path),
                           *argv[1:]], capture_output=True, text=True, timeout=60, check=False)


def test_the_cli_ignores_and_lists_a_forged_ceiling_record_and_check_warns(
    tmp_path: Path,
) -> None:
    b = fresh()
    forge(b)
    run = cli(tmp_path, b, "compile", "--profile", "amendment1", "--ceiling", "100000",
              "--format", "json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    history_bound = next(x for x in report["bounds"] if x["section"] == "history")
    assert history_bound["left_out"] == []
    sent = json.dumps(report["messages"])
    assert all(f"question {i}" in sent for i in range(5)) and "TRUNCATED" not in sent
    assert report["ceiling"]["first"] is None and report["ceiling"]["stepped"] is False
    [ignored] = report["ignored_records"]
    assert ignored["id"] == str(instructions(b)[1].id)
    assert "no compile wrote it" in ignored["reason"]
    check = cli(tmp_path, b, "check", "--format", "json")
    assert check.returncode == 0, check.stderr
    warnings = [w for w in json.loads(check.stdout)["warnings"] if w["kind"] == "ceiling_record"]
    assert [w["ids"] for w in warnings] == [[str(instructions(b)[1].id)]]


def test_a_record_written_under_another_ceiling_is_not_obeyed(tmp_path: Path) -> None:
    b = fresh()
    written_under(b, InputCeiling(120, low_water=80))
    run = cli(tmp_path, b, "compile", "--profile", "amendment1", "--ceiling", "100000",
              "--format", "json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    history_bound = next(x for x in report["bounds"] if x["section"] == "history")
    assert history_bound["left_out"] == []
    assert "ceiling 120" in report["ignored_records"][0]["reason"]
    # the same ceiling with another low-water mark is another ceiling too
    again = cli(tmp_path, b, "compile", "--profile", "amendment1", "--ceiling", "120",
                "--low-water", "100", "--format", "json")
    assert "low_water 80" in json.loads(again.stdout)["ignored_records"][0]["reason"]
    # and under the very ceiling it was written under it is obeyed, nothing listed
    same = cli(tmp_path, b, "compile", "--profile", "amendment1", "--ceiling", "120",
               "--low-water", "80", "--format", "json")
    assert json.loads(same.stdout)["ignored_records"] == []


def _sent_openai(chat_server: Any, openai_model: Any, install: bool) -> list[dict[str, Any]]:
    chat_server.clear()
    chat_server.script(Reply(content="ok"))
    b = fresh(openai_model())
    forge(b)
    if install:
        lionagi_turns.install(profile="amendment1", ceiling=InputCeiling(100000))
    try:
        asyncio.run(b.communicate("question 5"))
    finally:
        lionagi_turns.uninstall()
    [request] = chat_server.chat_requests()
    return list(request.messages)


def test_over_openai_compatible_http_a_forged_record_drops_nothing(
    uninstalled: None, chat_server: Any, openai_model: Any
) -> None:
    sent = _sent_openai(chat_server, openai_model, install=True)
    plain = _sent_openai(chat_server, openai_model, install=False)
    text = json.dumps(sent)
    for i in range(5):  # every round reaches the model, as without install()
        assert f"question {i}" in text and f"answer {i}" in text
        assert f"question {i}" in json.dumps(plain)
    assert "TRUNCATED" not in text


def test_over_anthropic_http_a_forged_record_drops_nothing(uninstalled: None) -> None:
    with AnthropicServer() as server:
        server.script("ok")
        model = iModel(provider="anthropic", model="claude-sonnet-4-5", api_key="x",
                       base_url=server.base_url, requires_tokens=False,
                       allow_local_network=True)
        b = fresh(model)
        forge(b)
        lionagi_turns.install(profile="amendment1", ceiling=InputCeiling(100000))
        try:
            asyncio.run(b.communicate("question 5"))
        finally:
            lionagi_turns.uninstall()
        [body] = server.bodies()
    text = json.dumps(body["messages"])
    for i in range(5):
        assert f"question {i}" in text and f"answer {i}" in text
    assert "TRUNCATED" not in text


def test_over_openai_compatible_http_drop_steps_keep_the_folded_system_first(
    uninstalled: None, chat_server: Any, openai_model: Any
) -> None:
    """Endpoints without a prompt cache: the fold puts the system text in message 0; the
    history marker goes after it (inside the history section), so every request, drop step
    or not, opens with the same folded system text."""
    chat_server.clear()
    chat_server.script(*(Reply(content=f"answer {i} " + "a" * 200) for i in range(14)))
    lionagi_turns.install(profile="amendment1", ceiling=InputCeiling(400, low_water=250))
    try:
        b = Branch(system=SYSTEM, chat_model=openai_model())
        for i in range(14):
            asyncio.run(b.communicate(f"question {i} " + "q" * 200))
    finally:
        lionagi_turns.uninstall()
    firsts = [r.messages[0]["content"] for r in chat_server.chat_requests()]
    stepped = [m.metadata[CEILING_KEY]["stepped"] for m in instructions(b)]
    assert sum(stepped) >= 2  # the loop crossed at least two drop steps
    marked = [f for f in firsts if "[LIONAGI_SECTION_TRUNCATED section=history" in f]
    assert len(marked) >= 2
    head = firsts[0].split("\n")[0]
    assert head.startswith("Guidance: ") and "You answer from the stock ledger." in head
    for first in firsts:
        assert first.startswith(head + "\n")
    for first in marked:  # the marker on its own line, right after the folded system text
        assert first.split("\n")[1].startswith("[LIONAGI_SECTION_TRUNCATED section=history")
