"""Calls overlapping on one branch (issue 25 item 9): the same outcomes as without ``install()``.

lionagi's ``communicate`` records its instruction, awaits the branch's message callbacks, then
records the answer; a second call on the same branch can start in between. Before this fix the
installed repair took the first call's instruction for a failed turn (a marker on a turn whose
call then succeeded) and the compiler met two instructions in a row (``HistoryError``). Now each
installed call's instruction is in flight until its task ends or starts its next call: the
repair skips it, other calls' requests leave its open turn out (and say so), and its answer is
placed in its own turn. Each scenario runs with ``install()`` off and on against a real local
server (OpenAI-style and Anthropic Messages) and compares what reached the model.
"""

from __future__ import annotations

import asyncio
import re
import time
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from lionagi import Branch, iModel
from lionagi.protocols.messages import AssistantResponse, Instruction

import lionagi_turns
from lionagi_turns.integration import _install as integration
from lionagi_turns.integration._compile import IN_FLIGHT_LEFT_OUT
from lionagi_turns.integration._unanswered import UNANSWERED_KEY

from .anthropic_server import AnthropicServer
from .http_server import ChatServer

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

CALLS = 50
QUESTION = re.compile(r"\bq(\d+)\b")


def _asked(text: str) -> str:
    found = QUESTION.findall(text)
    return f"answer q{found[-1]}" if found else "answer ?"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))


class EchoChat(ChatServer):
    """Answers each request after a short delay with ``answer qN`` for its last question."""

    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        time.sleep(0.03)
        status, payload = super()._answer(body)
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        payload["choices"][0]["message"]["content"] = _asked(_text(users[-1]["content"]))
        return status, payload

    def sent(self) -> list[list[dict[str, Any]]]:
        return self.payloads()


class EchoAnthropic(AnthropicServer):
    """The Anthropic Messages server answering like ``EchoChat``."""

    def _answer(self, body: Any) -> tuple[int, dict[str, Any]]:
        time.sleep(0.03)
        status, payload = super()._answer(body)
        users = [m for m in body.get("messages", []) if m.get("role") == "user"]
        if status == 200:
            payload["content"][0]["text"] = _asked(_text(users[-1]["content"]))
        return status, payload

    def sent(self) -> list[list[dict[str, Any]]]:
        return [list(b.get("messages", [])) for b in self.bodies()]


def _model(server: ChatServer | AnthropicServer, provider: str, **kw: Any) -> iModel:
    name = "gpt-4.1-mini" if provider == "openai" else "claude-sonnet-4-5"
    return iModel(provider=provider, model=name, api_key="x", base_url=server.base_url,
                  requires_tokens=False, allow_local_network=True, **kw)


async def _yield_between(msg: object) -> None:
    """A message callback that yields, as an async observer does: between a call recording its
    instruction and its answer, other calls run."""
    await asyncio.sleep(0.01)


async def _storm(branch: Branch, first: int = 0) -> list[str]:
    """``CALLS`` communicate calls on ``branch`` in one gather, staggered by 4 ms; each outcome
    is the answer text or the exception's class name."""

    async def one(i: int) -> str:
        await asyncio.sleep(i * 0.004)
        try:
            return str(await branch.communicate(f"q{i}"))
        except Exception as exc:  # the outcome is what is compared
            return type(exc).__name__

    return list(await asyncio.gather(*(one(i) for i in range(first, first + CALLS))))


def _users_in_a_row(messages: list[dict[str, Any]]) -> int:
    best = run = 0
    for message in messages:
        run = run + 1 if message["role"] == "user" else 0
        best = max(best, run)
    return best


def _turns(branch: Branch) -> list[tuple[str, str]]:
    """The branch's records after the system as (kind, text) pairs."""
    out = []
    for msg in branch.messages:
        if isinstance(msg, Instruction):
            out.append(("I", str(msg.content.instruction)))
        elif isinstance(msg, AssistantResponse):
            out.append(("R", str(msg.response)))
    return out


def _each_turn_answered_in_place(branch: Branch) -> None:
    turns = _turns(branch)
    assert [kind for kind, _ in turns] == ["I", "R"] * (len(turns) // 2)
    for (_, question), (_, answer) in zip(turns[::2], turns[1::2], strict=True):
        assert answer == f"answer {question}", (question, answer)


@pytest.fixture
def installed_profile() -> Iterator[Any]:
    """``install(profile=...)`` for the test, uninstalled after it."""

    def use(profile: str | None = None) -> None:
        if profile is None:
            lionagi_turns.install()
        else:
            lionagi_turns.install(profile=profile)

    try:
        yield use
    finally:
        integration.uninstall()


SERVERS = {
    "openai": (EchoChat, "openai", {}),
    "anthropic": (EchoAnthropic, "anthropic", {}),
    "anthropic-prompt-cache": (EchoAnthropic, "anthropic", {"prompt_caching": True}),
}


@pytest.mark.parametrize("where", sorted(SERVERS))
async def test_storm_has_lionagis_outcomes_and_answers_in_their_own_turns(
    where: str, installed_profile: Any
) -> None:
    server_type, provider, kw = SERVERS[where]
    results: dict[bool, list[str]] = {}
    for on in (False, True):
        with server_type() as server:
            if on:
                installed_profile()
            branch = Branch(system="sys", chat_model=_model(server, provider, **kw))
            branch.msgs._on_message_added.append(_yield_between)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                async with lionagi_turns.capture() if on else _nothing() as calls:
                    results[on] = await _storm(branch)
            sent = server.sent()
        if on:
            assert not [m for m in branch.messages if UNANSWERED_KEY in m.metadata]
            assert max(_users_in_a_row(messages) for messages in sent) == 1
            for messages in sent:  # every request ends with its own question, answered pairs before
                texts = [_text(m["content"]) for m in messages if m["role"] != "system"]
                asked = [QUESTION.findall(t)[-1] for t in texts[0::2]]
                assert texts[1::2] == [f"answer q{n}" for n in asked[:-1]]
            _each_turn_answered_in_place(branch)
            left_out = {uid for record in calls for uid in record.in_flight_left_out}
            recorded = {str(m.id) for m in branch.messages if isinstance(m, Instruction)}
            assert left_out <= recorded
        integration.uninstall()
    assert results[True] == results[False] == [f"answer q{i}" for i in range(CALLS)]


class _nothing:
    async def __aenter__(self) -> list[Any]:
        return []

    async def __aexit__(self, *exc: object) -> None:
        return None


async def test_a_call_started_while_another_awaits_its_answer_leaves_that_turn_out(
    installed_profile: Any,
) -> None:
    """Deterministic overlap: call A records its instruction and is held before recording its
    answer; call B runs whole meanwhile. Plain lionagi sends B's request with A's unanswered
    instruction (two user messages in a row) and records A's answer after B's turn; installed,
    B's request leaves A's open turn out and its record names it, and A's answer follows A."""
    sent: dict[bool, list[list[dict[str, Any]]]] = {}
    for on in (False, True):
        with EchoChat() as server:
            if on:
                installed_profile()
            branch = Branch(system="sys", chat_model=_model(server, "openai"))
            hold, held = asyncio.Event(), asyncio.Event()

            async def hold_first_instruction(
                msg: object, hold: asyncio.Event = hold, held: asyncio.Event = held
            ) -> None:
                if isinstance(msg, Instruction) and "q1" in str(msg.content.instruction):
                    held.set()
                    await hold.wait()

            branch.msgs._on_message_added.append(hold_first_instruction)
            async with lionagi_turns.capture() if on else _nothing() as calls:
                first = asyncio.create_task(branch.communicate("q1"))
                await held.wait()
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    second = await branch.communicate("q2")
                hold.set()
                assert await first == "answer q1"
            assert second == "answer q2"
            sent[on] = server.sent()
        if on:
            first_id = next(m.id for m in branch.messages
                            if isinstance(m, Instruction) and "q1" in str(m.content.instruction))
            assert calls[1].in_flight_left_out == (str(first_id),)
            assert calls[0].in_flight_left_out == ()
            assert [str(w.message) for w in caught] == [
                IN_FLIGHT_LEFT_OUT.format(branch=branch.id)
            ]
            _each_turn_answered_in_place(branch)
        else:
            assert [kind for kind, _ in _turns(branch)] == ["I", "I", "R", "R"]
        integration.uninstall()
    assert _users_in_a_row(sent[False][1]) == 2  # plain lionagi: q1 unanswered, then q2
    assert [m["role"] for m in sent[True][1]] == ["user"]  # the system text folds into it
    assert "q2" in _text(sent[True][1][0]["content"])
    assert "q1" not in _text(sent[True][1][0]["content"])
    assert sent[True][0] == sent[False][0]


async def test_storm_on_a_branch_plain_lionagi_left_unanswered_marks_only_the_old_turns(
    installed_profile: Any,
) -> None:
    """A plain-lionagi storm leaves instructions no response follows (its answers land after
    other calls' records); an installed storm on that branch marks exactly those, once, and none
    of its own."""
    with EchoChat() as server:
        branch = Branch(system="sys", chat_model=_model(server, "openai"))
        branch.msgs._on_message_added.append(_yield_between)
        await _storm(branch)
        kinds = [(type(m), m.id) for m in branch.messages]
        following = [*kinds[1:], (Instruction, None)]
        old_open = {
            uid for (kind, uid), (after, _) in zip(kinds, following, strict=True)
            if kind is Instruction and after is Instruction
        }
        assert old_open, "the plain storm interleaved no turns; the scenario did not happen"
        installed_profile()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = await _storm(branch, first=CALLS)
    marked = [m for m in branch.messages if UNANSWERED_KEY in m.metadata]
    assert results == [f"answer q{i}" for i in range(CALLS, 2 * CALLS)]
    marked_turns = set()
    records = list(branch.messages)
    for index, msg in enumerate(records):
        if msg in marked:
            marked_turns.add(records[index - 1].id)
    assert marked_turns == old_open and len(marked) == len(old_open)
    new = [m for m in records if isinstance(m, Instruction)
           and int(QUESTION.findall(str(m.content.instruction))[-1]) >= CALLS]
    assert len(new) == CALLS
    assert not {m.id for m in new} & marked_turns
