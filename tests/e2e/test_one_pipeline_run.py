"""One request, one pipeline run, one view selection (issue 26): for the default profile,
Amendment 1 with a ceiling, the prompt-cache layout and Amendment 1 laid out for the cache
(the last two through ``install()`` on an Anthropic endpoint with ``prompt_caching=True``),
every model call runs ``compile_traced`` once and selects the view once. Counted with a
profiler hook on the functions' code objects while the calls run against local servers."""

from __future__ import annotations

import asyncio
import sys
import warnings
from collections import Counter
from collections.abc import Iterator
from types import FrameType
from typing import Any

import pytest
from lionagi import Branch, iModel

import lionagi_turns
from lionagi_turns import amendment1 as a1
from lionagi_turns.core import history, pipeline
from lionagi_turns.integration import _install

from .anthropic_server import AnthropicServer
from .http_server import ChatServer

pytestmark = pytest.mark.e2e

WATCHED = {pipeline.compile_traced.__code__: "compile", history.select_ids.__code__: "select"}


class _Counting:
    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()

    def __call__(self, frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code in WATCHED:
            self.counts[WATCHED[frame.f_code]] += 1


def _counted(branch: Branch, texts: list[str]) -> Counter[str]:
    counting = _Counting()

    async def talk() -> None:
        for text in texts:
            await branch.communicate(text)

    sys.setprofile(counting)
    try:
        asyncio.run(talk())
    finally:
        sys.setprofile(None)
    return counting.counts


@pytest.fixture
def uninstalled() -> Iterator[None]:
    try:
        yield
    finally:
        _install.uninstall()


CASES: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {
    "default": ("openai", {}, {}),
    "amendment1 with a ceiling": ("openai", {"prompt_caching": False},
                                  {"profile": "amendment1", "ceiling": 50_000}),
    "prompt-cache": ("anthropic", {"prompt_caching": True}, {}),
    "amendment1+prompt-cache": ("anthropic", {"prompt_caching": True},
                                {"profile": "amendment1", "ceiling": 50_000}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_request_runs_the_pipeline_once_and_selects_its_view_once(
    case: str, uninstalled: None
) -> None:
    provider, model_kw, install_kw = CASES[case]
    server_type = ChatServer if provider == "openai" else AnthropicServer
    if "ceiling" in install_kw:
        install_kw = {**install_kw, "ceiling": a1.InputCeiling(install_kw["ceiling"])}
    with server_type() as server:
        name = "gpt-4.1-mini" if provider == "openai" else "claude-sonnet-4-5"
        kw = {"prompt_caching": True} if model_kw.get("prompt_caching") else {}
        model = iModel(provider=provider, model=name, api_key="x", base_url=server.base_url,
                       requires_tokens=False, allow_local_network=True, **kw)
        lionagi_turns.install(**install_kw)
        branch = Branch(system="Be brief.", chat_model=model)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            counts = _counted(branch, ["one", "two", "three"])
        sent = len(server.payloads()) if provider == "openai" else len(server.bodies())
    assert sent == 3
    assert counts == {"compile": 3, "select": 3}
