"""The provider matrix (issue 18): every chat provider of lionagi 0.36 that takes a
conversation, one test each, the same scenario with ``install()`` off and on.

Scenario: a ``Branch`` with a system message and a registered lionagi context provider
(``Memory``; lionagi gathers its block before every turn), then three ``communicate`` turns.
What reached the model is read at the far side: the JSON bodies a 127.0.0.1 server received
(HTTP providers, every string in the body) and the argv and stdin the fake executables logged
(CLI providers). Asserted for each provider, off against on:

- the outcome is the same (the replies recorded, or the same failure);
- call N on reaches the model with every history marker (an earlier question, an earlier
  reply, the block's text) that call N off reached it with, so no history present off is
  missing on ("Dana" of turn 1 reaches turn 2 wherever it does off);
- a CLI call resumes the same session off and on, and ``is_resumed_cli`` says a turn is resumed
  exactly when lionagi, off, sent that turn without the earlier turns (read from the fake's log,
  not from a table).

``test_the_matrix_covers_every_conversation_endpoint`` holds the matrix to lionagi's endpoint
registry, so an endpoint lionagi adds fails it until it has a row.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import pytest
from lionagi import Branch, iModel

from lionagi_turns.integration import installed
from lionagi_turns.integration._resume import is_resumed_cli

from .anthropic_server import AnthropicServer
from .conftest import FakeClaude, FakeCLIs
from .fake_cli_log import flag
from .http_server import ChatServer

pytestmark = [pytest.mark.e2e, pytest.mark.anyio, pytest.mark.usefixtures("offline_tokens")]

SYSTEM = "You are terse."
BLOCK = "user prefers metric"
QUESTIONS = ("My name is Dana.", "What is my name?", "Which units do I prefer?")
REPLIES = ("Noted.", "You told me.", "Metric units.")  # no "Dana": it comes from turn 1
MARKERS = (*QUESTIONS, *REPLIES, BLOCK)
#: The flags by which a CLI argv names the session it resumes.
SESSION_FLAGS = ("--resume", "--conversation", "--session")


class Memory:
    """A lionagi context provider: the same block before every turn."""

    async def provide(self, branch: Branch, instruction: object) -> str:
        return BLOCK


class ResponsesServer(ChatServer):
    """The 127.0.0.1 chat server answering lionagi's OpenAI Responses path."""

    _ROUTE: ClassVar[str] = "/responses"


@dataclass(frozen=True)
class Reached:
    """One call as the model received it: all its text, and the session it resumes."""

    text: str
    session: str | None = None


@dataclass
class Run:
    """One scenario run: what reached the model per call, the replies, the failure."""

    calls: list[Reached]
    replies: list[str]
    error: str | None
    resumed_after_turn_1: bool | None


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value, keys included, depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


async def scenario(build: Callable[[], Any]) -> tuple[list[str], str | None, bool | None]:
    """The three turns on a fresh branch over ``build()``: replies, the failure (type and
    text) if building the model or a turn raised, and ``is_resumed_cli(model)`` as it stood
    after turn 1 (None if it did not complete)."""
    replies: list[str] = []
    resumed: bool | None = None
    try:
        model = build()
    except Exception as exc:
        return replies, f"{type(exc).__name__}: {exc}", resumed
    branch = Branch(system=SYSTEM, chat_model=model)
    branch.providers.register(Memory(), name="memory")
    for number, question in enumerate(QUESTIONS):
        try:
            replies.append(str(await branch.communicate(question)))
        except Exception as exc:
            return replies, f"{type(exc).__name__}: {exc}", resumed
        if number == 0:
            resumed = is_resumed_cli(model)
    return replies, None, resumed


@dataclass(frozen=True)
class Provider:
    """One row: how to build the model against its far side and read what reached it."""

    name: str
    provider: str
    model: str
    registered: str = "chat/completions"  # the endpoint's name in lionagi's registry
    endpoint: str | None = None  # passed to iModel when not lionagi's default
    server: type[ChatServer] | type[AnthropicServer] | None = ChatServer
    program: str | None = None  # a fake CLI: "claude", "codex", "agy" or "pi"
    #: What lionagi (off) sends on each call: the whole conversation, the current turn alone
    #: (a resumed CLI session holds the rest), or nothing of it.
    sends: Literal["conversation", "current turn", "nothing"] = "conversation"
    fails_in_lionagi: bool = False

    def build(self, base_url: str | None) -> Any:
        kwargs: dict[str, Any] = {"provider": self.provider, "model": self.model}
        if self.endpoint is not None:
            kwargs["endpoint"] = self.endpoint
        if base_url is not None:
            kwargs.update(api_key="x", base_url=base_url, requires_tokens=False,
                          allow_local_network=True)
        return iModel(**kwargs)


PROVIDERS = (
    Provider("openai", "openai", "gpt-4.1-mini"),
    Provider("groq", "groq", "llama-3.3-70b-versatile"),
    Provider("openrouter", "openrouter", "openai/gpt-4.1-mini"),
    Provider("deepseek", "deepseek", "deepseek-chat"),
    Provider("perplexity", "perplexity", "sonar"),
    Provider("nvidia_nim", "nvidia_nim", "meta/llama-3.1-8b-instruct"),
    Provider("gemini", "gemini", "gemini-2.5-flash"),
    Provider("lattice", "lattice", "lattice-chat"),
    # lionagi 0.36 needs the ollama package for its chat endpoint (not installed): no request.
    Provider("ollama", "ollama", "llama3", fails_in_lionagi=True),
    # lionagi 0.36's Responses endpoint posts the model name alone: no conversation, off or on.
    Provider("openai_responses", "openai", "gpt-4.1-mini", "responses", endpoint="responses",
             server=ResponsesServer, sends="nothing"),
    Provider("anthropic", "anthropic", "claude-sonnet-4-5", "messages", server=AnthropicServer),
    # lionagi 0.36's AG2 endpoints refuse communicate (stream-only) before any model.
    *(Provider(f"ag2_{ep}", "ag2", "gpt-4.1-mini", ep, endpoint=ep, server=None,
               fails_in_lionagi=True) for ep in ("agent", "group_chat", "nlip")),
    # Resumed CLIs: lionagi sends a later turn alone, the session holds the earlier ones.
    Provider("claude_code", "claude_code", "sonnet", "query_cli", server=None,
             program="claude", sends="current turn"),
    Provider("gemini_code", "gemini_code", "gemini-4-argon", "query_cli", server=None,
             program="agy", sends="current turn"),
    # Never resumed: codex starts a new thread per `codex exec`, pi keeps no session; lionagi
    # renders the whole conversation into each prompt (codex on stdin, pi as the last argument).
    Provider("codex", "codex", "gpt-5.3-codex", "query_cli", server=None, program="codex"),
    Provider("pi", "pi", "openai/gpt-4.1", "query_cli", server=None, program="pi"),
)

#: lionagi 0.36 endpoints that take no conversation (provider, endpoint), and its test double.
NOT_CONVERSATIONS = frozenset({
    ("openai", "audio/speech"), ("openai", "audio/transcriptions"), ("openai", "batches"),
    ("openai", "images/generations"), ("openai", "images/edits"), ("openai", "embeddings"),
    ("ollama", "embeddings"), ("ollama", "generate"), ("lattice", "embeddings"),
    ("tavily", "search"), ("tavily", "extract"), ("exa", "search"), ("exa", "contents"),
    ("exa", "findSimilar"), ("firecrawl", "v1/scrape"), ("firecrawl", "v1/map"),
    ("firecrawl", "v1/crawl"), ("nvidia_nim", "embeddings"), ("groq", "audio/transcriptions"),
    ("scripted", "chat/completions"),  # lionagi.testing's scripted endpoint
})


def test_the_matrix_covers_every_conversation_endpoint() -> None:
    from lionagi.service.connections.registry import EndpointRegistry

    registered = {(e["provider"], e["endpoint"]) for e in EndpointRegistry.list_providers()}
    assert {(row.provider, row.registered) for row in PROVIDERS} == (
        registered - NOT_CONVERSATIONS)
    assert registered >= NOT_CONVERSATIONS
    for row in PROVIDERS:  # each row builds the endpoint it names (or fails in lionagi)
        try:
            model = row.build("http://127.0.0.1:9/v1" if row.server else None)
        except ModuleNotFoundError:
            assert row.fails_in_lionagi, row.name
            continue
        assert model.endpoint.config.endpoint == row.registered, row.name


async def drive(row: Provider, claude: FakeClaude, clis: FakeCLIs) -> Run:
    """One run of the scenario on a fresh far side (server, or emptied fake log)."""
    if row.server is not None:
        with row.server() as server:
            server.script(*REPLIES)
            replies, error, resumed = await scenario(lambda: row.build(server.base_url))
            bodies = ([b for _, b in server.requests] if isinstance(server, AnthropicServer)
                      else [r.body for r in server.requests])
        calls = [Reached("\n".join(strings(body))) for body in bodies]
        return Run(calls, replies, error, resumed)
    if row.program == "claude":
        claude.log.unlink(missing_ok=True)
        claude.script(*({"text": text, "session_id": "S-matrix"} for text in REPLIES))
        replies, error, resumed = await scenario(lambda: row.build(None))
        calls = [Reached("\n".join(c["argv"]), c["resume"]) for c in claude.calls()]
        return Run(calls, replies, error, resumed)
    clis.reset()
    clis.replies(*REPLIES)
    replies, error, resumed = await scenario(lambda: row.build(None))
    calls = []
    if row.program is not None:
        for c in clis.calls(row.program):
            session = next((flag(c["argv"], f) for f in SESSION_FLAGS if f in c["argv"]), None)
            calls.append(Reached("\n".join([*c["argv"], c["stdin"] or ""]), session))
    return Run(calls, replies, error, resumed)


def missing_on(off: Run, on: Run) -> list[tuple[int, str]]:
    """(call, marker) pairs that reached the model off but not on."""
    return [(i, marker) for i, (a, b) in enumerate(zip(off.calls, on.calls, strict=True))
            for marker in MARKERS if marker in a.text and marker not in b.text]


@pytest.mark.parametrize("row", PROVIDERS, ids=[p.name for p in PROVIDERS])
async def test_no_history_is_lost_on_any_provider(
    row: Provider, fake_claude: FakeClaude, fake_clis: FakeCLIs
) -> None:
    off = await drive(row, fake_claude, fake_clis)
    with installed():
        on = await drive(row, fake_claude, fake_clis)

    assert (on.replies, on.error) == (off.replies, off.error)
    assert len(on.calls) == len(off.calls)
    assert missing_on(off, on) == []
    assert [c.session for c in on.calls] == [c.session for c in off.calls]
    if row.fails_in_lionagi:
        assert off.error is not None and off.calls == []
        return
    assert off.error is None and on.replies == list(REPLIES)
    assert len(on.calls) == len(QUESTIONS)
    for run in (off, on):  # "Dana" of turn 1 reaches turns 2 and 3 wherever lionagi sends it
        later = run.calls[1:]
        assert all(("Dana" in c.text) is (row.sends == "conversation") for c in later)
    # Under install() every call that carries the conversation carries the turn's block.
    assert all((BLOCK in c.text) is (row.sends != "nothing") for c in on.calls)
    if row.program is not None:
        # Resumed exactly when lionagi sent turn 2 without turn 1 and named a session.
        alone = QUESTIONS[0] not in off.calls[1].text and off.calls[1].session is not None
        assert on.resumed_after_turn_1 is off.resumed_after_turn_1 is alone

