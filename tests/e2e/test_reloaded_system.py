"""A branch reloaded with lionagi's own ``Branch.from_dict`` keeps its system text under
``install()`` (intended-differences §4.13), on every profile, over HTTP.

lionagi 0.36's ``from_dict`` leaves ``msgs.system`` None while the System record stays at the
head of the pile; plain lionagi then sends no system text. Under ``install()`` the reloaded
branch sends the same next request as the branch before the reload, and ``lionagi-turns
compile SAVED.json`` prints exactly that request.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from lionagi import Branch, iModel

import lionagi_turns

from .anthropic_server import AnthropicServer
from .http_server import ChatServer

SYSTEM = "You are the support desk of the Northwind depot. Answer in one sentence."
NEXT = "and the fourth question"


@pytest.fixture
def uninstalled() -> Iterator[None]:
    lionagi_turns.uninstall()
    yield
    lionagi_turns.uninstall()


def openai_model(server: ChatServer) -> Any:
    return iModel(provider="openai", model="gpt-4.1-mini", api_key="x",
                  base_url=server.base_url, requires_tokens=False, allow_local_network=True)


def anthropic_model(server: AnthropicServer) -> Any:
    return iModel(provider="anthropic", model="claude-sonnet-4-5", api_key="x",
                  base_url=server.base_url, requires_tokens=False, allow_local_network=True,
                  prompt_caching=True)


async def three_turns_then(model: Callable[[], Any], reload: bool, saved: Path) -> None:
    branch = Branch(system=SYSTEM, chat_model=model())
    for i in range(3):
        await branch.communicate(f"question {i}")
    saved.write_text(json.dumps(branch.to_dict(mode="json")), encoding="utf-8")
    if reload:
        branch = Branch.from_dict(json.loads(saved.read_text(encoding="utf-8")),
                                  chat_model=model())
        assert branch.msgs.system is None  # lionagi 0.36's from_dict
    await branch.communicate(NEXT)


def compile_cli(saved: Path, *options: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "lionagi_turns", "compile", str(saved),
         "--instruction", NEXT, "--format", "json", *options],
        capture_output=True, text=True, timeout=60, cwd=saved.parent,
        env={**os.environ, "LOG_AUTO_SAVE_ON_EXIT": "false"}, check=False,
    )
    assert done.returncode == 0, done.stderr
    shown: dict[str, Any] = json.loads(done.stdout)
    return shown


def openai_session(tmp_path: Path, profile: str | None, reload: bool) -> list[dict[str, Any]]:
    with ChatServer() as server:
        if profile is not None:
            lionagi_turns.install(profile=profile)
        try:
            asyncio.run(three_turns_then(lambda: openai_model(server), reload,
                                         tmp_path / "saved.json"))
        finally:
            lionagi_turns.uninstall()
        return server.payloads()


def dumped(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


@pytest.mark.parametrize("profile", ["default", "amendment1"])
def test_a_reloaded_branch_sends_its_system_text_on_openai_style_endpoints(
    uninstalled: None, tmp_path: Path, profile: str
) -> None:
    before = openai_session(tmp_path, profile, reload=False)
    reloaded = openai_session(tmp_path, profile, reload=True)
    plain = openai_session(tmp_path, None, reload=True)
    assert len(before) == len(reloaded) == len(plain) == 4
    assert dumped(reloaded[-1]) == dumped(before[-1])
    assert SYSTEM in dumped(reloaded[-1][0])
    # Plain lionagi sends no system text after its own reload.
    assert SYSTEM not in dumped(plain[-1])
    shown = compile_cli(tmp_path / "saved.json", "--profile", profile)
    assert dumped(shown["messages"]) == dumped(reloaded[-1])


def anthropic_session(tmp_path: Path, install: bool, reload: bool) -> list[dict[str, Any]]:
    with AnthropicServer() as server:
        if install:
            lionagi_turns.install()
        try:
            asyncio.run(three_turns_then(lambda: anthropic_model(server), reload,
                                         tmp_path / "saved.json"))
        finally:
            lionagi_turns.uninstall()
        return server.bodies()


def test_a_reloaded_branch_sends_its_system_text_with_the_prompt_cache(
    uninstalled: None, tmp_path: Path
) -> None:
    before = anthropic_session(tmp_path, True, reload=False)
    reloaded = anthropic_session(tmp_path, True, reload=True)
    plain = anthropic_session(tmp_path, False, reload=True)
    assert len(before) == len(reloaded) == len(plain) == 4
    assert dumped(reloaded[-1]) == dumped(before[-1])
    assert reloaded[-1]["system"][0]["text"] == SYSTEM
    assert SYSTEM not in dumped(plain[-1])
    shown = compile_cli(tmp_path / "saved.json", "--profile", "prompt-cache")
    sent = reloaded[-1]
    assert dumped(shown["system"]) == dumped(sent["system"])
    assert dumped(shown["messages"]) == dumped(sent["messages"])
