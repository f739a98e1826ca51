"""Fixtures for the integration tests: an in-process fake chat model and a clean install state."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from lionagi import iModel

from lionagi_turns.integration import _install as integration


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def _clean_install_state() -> Iterator[None]:
    """Every test starts and ends uninstalled, with the one-time warnings forgotten."""
    integration.uninstall()
    integration._reset_warnings()
    yield
    integration.uninstall()
    integration._reset_warnings()


class FakeChatModel:
    """A real lionagi OpenAI iModel whose HTTP call is replaced in-process.

    ``payloads`` holds every request payload the endpoint would have POSTed; ``replies`` are
    answered in order (then "ok").
    """

    def __init__(self, replies: list[str] | None = None) -> None:
        self.replies = list(replies or [])
        self.payloads: list[dict[str, Any]] = []
        self.imodel = iModel(
            provider="openai", model="gpt-4.1-mini", api_key="x", requires_tokens=False
        )
        self.imodel.endpoint._call = self._call

    async def _call(self, payload: dict[str, Any], headers: dict[str, Any], **_: Any) -> dict:
        self.payloads.append(payload)
        text = self.replies.pop(0) if self.replies else "ok"
        return {
            "id": f"chatcmpl-{len(self.payloads)}",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4.1-mini",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The ``messages`` of the last request."""
        return list(self.payloads[-1]["messages"])


@pytest.fixture
def fake_model() -> FakeChatModel:
    return FakeChatModel()
