"""The ~30-line stage of docs/architecture.md "How to write a stage" (``tests/stages/reminder.py``)
composes with the default profile, Amendment 1 and the prompt-cache layout, installs by name
through ``register_stages``, and is listed and compiled by the CLI."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from e2e.http_server import ChatServer  # type: ignore[import-not-found]
from lionagi import Branch, iModel
from stages.reminder import REMINDER, Reminder  # type: ignore[import-not-found]

import lionagi_turns
from lionagi_turns import TurnRequest, compile_chat_request
from lionagi_turns import amendment1 as a1
from lionagi_turns.core.pipeline import compile_traced
from lionagi_turns.integration import _install, _registry
from lionagi_turns.profiles.amendment1._compile import (
    amended_result,
    amendment1_stage,
    seed_request,
)
from lionagi_turns.profiles.prompt_cache._compile import PromptCache, compile_cached, laid_out

from .conftest import Run

TESTS = Path(__file__).resolve().parents[1]
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support.json"


def _branch() -> Branch:
    b = Branch(system="Be brief.")
    b.msgs.add_message(instruction="first question")
    b.msgs.add_message(assistant_response="first answer")
    return b


def _with_reminder(text: object) -> object:
    return f"{text}\n\n{REMINDER}"


def test_alone_it_appends_the_reminder_to_what_the_default_profile_sends() -> None:
    b = _branch()
    request = TurnRequest(instruction=b.msgs.create_instruction(instruction="now"))
    plain = compile_chat_request(b, request)
    trace = compile_traced(b, request, stages=(Reminder(),))
    assert trace.compiled.messages[:-1] == plain.messages[:-1]
    assert trace.compiled.messages[-1].content == _with_reminder(plain.messages[-1].content)
    assert trace.slot("reminder") == REMINDER
    assert trace.compiled.instruction.metadata["example.reminded"] is True


def test_after_amendment1_its_messages_are_the_amended_ones_and_the_bounds_stay() -> None:
    b = _branch()
    request = a1.TurnRequest(instruction=b.msgs.create_instruction(instruction="now"))
    plain = a1.compile_chat_request(b, request, ceiling=a1.InputCeiling(10_000))
    stage = amendment1_stage(request, ceiling=a1.InputCeiling(10_000))
    trace = compile_traced(b, seed_request(request), stages=(stage, Reminder()))
    compiled = amended_result(trace)
    assert compiled.bounds == plain.bounds
    assert compiled.messages[-1].content == _with_reminder(plain.messages[-1].content)


def test_before_the_layout_the_record_covers_the_messages_as_sent() -> None:
    b = _branch()
    request = TurnRequest(instruction=b.msgs.create_instruction(instruction="now"))
    plain = compile_cached(b, TurnRequest(instruction=b.msgs.create_instruction(
        instruction="now")), None)
    laid = laid_out(b, request, (Reminder(), PromptCache()))
    assert laid.compiled.messages[-1].content == _with_reminder(plain.compiled.messages[-1].content)
    assert laid.layout.stable == plain.layout.stable
    assert laid.record.prefix != plain.record.prefix  # the digest covers the reminder


@pytest.fixture
def reminder_profile():  # type: ignore[no-untyped-def]
    _registry.register_stages("reminder", "a reminder", lambda: (Reminder(),))
    try:
        yield
    finally:
        _install.uninstall()
        _registry.unregister("reminder")


def test_install_by_name_sends_the_reminder_over_http(reminder_profile: None) -> None:
    bodies = {}
    for profile in ("default", "reminder"):
        with ChatServer() as server:
            model = iModel(provider="openai", model="gpt-4.1-mini", api_key="x",
                           base_url=server.base_url, requires_tokens=False,
                           allow_local_network=True)
            lionagi_turns.install(profile=profile)
            asyncio.run(Branch(system="Be brief.", chat_model=model).communicate("hello"))
            _install.uninstall()
            bodies[profile] = server.payloads()[0]
    assert bodies["reminder"][:-1] == bodies["default"][:-1]
    assert bodies["reminder"][-1]["content"] == _with_reminder(bodies["default"][-1]["content"])
    assert "reminder+prompt-cache" in _registry.compositions()


def test_the_cli_lists_and_compiles_a_registered_stage_profile(run_cli_process) -> None:  # type: ignore[no-untyped-def]
    env = {"LIONAGI_TURNS_STAGES": "stages.reminder_profile", "PYTHONPATH": str(TESTS)}
    done: Run = run_cli_process("compile", str(EXAMPLE), "--profile", "reminder",
                                "--format", "json", env=env)
    assert done.code == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["stages"] == ["reminder"]
    assert report["messages"][-1]["content"].endswith(REMINDER)
    laid: Run = run_cli_process("compile", str(EXAMPLE), "--profile", "reminder+prompt-cache",
                                "--format", "json", env=env)
    assert laid.code == 0, laid.stderr
    assert json.loads(laid.stdout)["stages"] == ["reminder"]
    wrong: Run = run_cli_process("compile", str(EXAMPLE), "--profile", "nope", env=env)
    assert wrong.code == 2 and "reminder" in wrong.stderr
    broken: Run = run_cli_process("compile", str(EXAMPLE), env={
        "LIONAGI_TURNS_STAGES": "no_such_stage_module"})
    assert broken.code == 2
    assert broken.stderr.strip().splitlines() == [
        "lionagi-turns: LIONAGI_TURNS_STAGES names 'no_such_stage_module', which does not "
        "import: ModuleNotFoundError: No module named 'no_such_stage_module'"]
