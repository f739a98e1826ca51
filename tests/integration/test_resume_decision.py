"""Which CLI turns are resumed is read from lionagi's request models, not from a session id
(issue 18 item 1). The end-to-end check against each real CLI is the provider matrix
(tests/e2e/test_provider_matrix.py); these pin the decision's edges."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from lionagi import iModel
from lionagi.service.connections.agentic_endpoint import AgenticEndpoint
from pydantic import BaseModel, model_validator

from lionagi_turns.integration import TurnsCompatibilityWarning
from lionagi_turns.integration._resume import is_resumed_cli, sends_last_message_only


def test_a_stored_session_id_alone_does_not_resume_codex() -> None:
    model = iModel(provider="codex", model="gpt-5.3-codex")
    model.endpoint.session_id = "thread-1"  # what lionagi stores after each codex exec
    assert model.is_cli and model.provider_session_id == "thread-1"
    assert not is_resumed_cli(model)


@pytest.mark.parametrize(("provider", "model_name"), [
    ("claude_code", "sonnet"), ("gemini_code", "gemini-4-argon")])
def test_claude_and_agy_resume_once_they_hold_a_session(provider: str, model_name: str) -> None:
    model = iModel(provider=provider, model=model_name)
    assert not is_resumed_cli(model)
    model.endpoint.session_id = "S-1"
    assert is_resumed_cli(model)


def test_pi_and_http_models_never_resume() -> None:
    pi = iModel(provider="pi", model="openai/gpt-4.1")
    pi.endpoint.session_id = "S-1"
    http = iModel(provider="openai", model="gpt-4.1-mini", api_key="x", requires_tokens=False)
    assert not is_resumed_cli(pi)
    assert not is_resumed_cli(http)
    assert not is_resumed_cli(None)


def _last_when_resumed(data: dict[str, Any]) -> dict[str, Any]:
    messages = data["messages"]
    texts = [m["content"] for m in (messages[-1:] if data.get("resume") else messages)]
    return {**data, "prompt": "\n".join(texts)}


class ReadsResumeWithoutField(BaseModel):
    """Keeps the last message only when it sees ``resume``, which it does not declare."""

    prompt: str

    @model_validator(mode="before")
    @classmethod
    def _prompt(cls, data: dict[str, Any]) -> dict[str, Any]:
        return _last_when_resumed(data)


class FilteringEndpoint(AgenticEndpoint):
    _request_model: ClassVar[type[BaseModel]] = ReadsResumeWithoutField


class UnfilteredEndpoint(AgenticEndpoint):
    _request_model: ClassVar[type[BaseModel]] = ReadsResumeWithoutField
    _filter_model_fields: ClassVar[bool] = False


def test_resume_reaches_the_request_model_only_where_lionagi_keeps_it() -> None:
    assert not sends_last_message_only(FilteringEndpoint)
    assert sends_last_message_only(UnfilteredEndpoint)


class KeepsResumeSendsAll(BaseModel):
    prompt: str
    resume: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _prompt(cls, data: dict[str, Any]) -> dict[str, Any]:
        texts = [m["content"] for m in data["messages"]]
        return {**data, "prompt": "\n".join(texts)}


class KeepsResumeEndpoint(AgenticEndpoint):
    _request_model: ClassVar[type[BaseModel]] = KeepsResumeSendsAll


class NoRequestModelEndpoint(AgenticEndpoint):
    pass


def test_a_resume_field_that_sends_the_whole_conversation_is_not_resumed() -> None:
    assert not sends_last_message_only(KeepsResumeEndpoint)
    assert not sends_last_message_only(NoRequestModelEndpoint)


class NeedsMore(BaseModel):
    prompt: str = ""
    resume: str | None = None
    workspace: int


class RefusingEndpoint(AgenticEndpoint):
    _request_model: ClassVar[type[BaseModel]] = NeedsMore


def test_a_request_model_that_refuses_the_probe_is_not_resumed_and_says_so() -> None:
    with pytest.warns(TurnsCompatibilityWarning, match="RefusingEndpoint's request model"):
        assert not sends_last_message_only(RefusingEndpoint)
