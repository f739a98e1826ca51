"""Action results lionagi sends as YAML but JSON has no plain form for (a NaN or infinite float,
a dict key that is not text, bytes, an integer beyond 64 bits) reach the model with install()
on exactly as with it off: the same request messages, byte for byte, in ONE test per value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from lionagi import Branch

from lionagi_turns.integration import _install as integration

from .http_server import ChatServer

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

VALUES: dict[str, Any] = {
    "int key": {1: "a", "b": 2},
    "colliding keys": {1: "a", "1": "b"},
    "bytes": b"raw",
    "nan": float("nan"),
    "inf": {"rows": [1.5, float("inf"), float("-inf")]},
    "2**64": 2**64,
}


def _branch(output: Any) -> Branch:
    b = Branch(system="policy")
    b.msgs.add_message(instruction="earlier")
    request = b.msgs.add_message(action_function="lookup", action_arguments={"q": "x"})
    b.msgs.add_message(action_request=request, action_output=output)
    b.msgs.add_message(assistant_response="seen")
    return b


async def _sent(server: ChatServer, make_model: Callable[[], Any], output: Any) -> list[Any]:
    """The messages of two calls: the result pending, then folded into a past instruction."""
    b = _branch(output)
    b.chat_model = make_model()
    start = len(server.chat_requests())
    await b.communicate("now")
    await b.communicate("and now")
    return [r.messages for r in server.chat_requests()[start:]]


@pytest.mark.parametrize("output", list(VALUES.values()), ids=list(VALUES))
async def test_an_action_value_is_sent_as_lionagi_sends_it(
    chat_server: ChatServer, openai_model: Callable[[], Any], output: Any
) -> None:
    off = await _sent(chat_server, openai_model, output)
    with integration.installed():
        on = await _sent(chat_server, openai_model, output)
    assert len(off) == 2
    assert on == off
