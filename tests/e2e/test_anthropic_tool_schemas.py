"""A registered tool whose schema YAML cannot render deterministically, on a prompt-cache
endpoint with install() on: the compile refuses it by tool name and path before any request
reaches the (fake) Anthropic server, and the branch is unchanged.

The same scenario with install() off shows what lionagi does: the process-dependent ``!!set``
rendering is sent, and an object or a self-reference fails inside lionagi's renderer.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from lionagi import Branch, iModel
from lionagi.protocols.action.tool import Tool

import lionagi_turns

from .anthropic_server import AnthropicServer

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("offline_tokens")]


def lookup(q: str) -> str:
    """Look a term up.

    Args:
        q: the term
    """
    return q


def _schema(kind: str) -> dict[str, Any]:
    schema: dict[str, Any] = {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look a term up.",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}},
                           "required": ["q"]},
        },
    }
    q = schema["function"]["parameters"]["properties"]["q"]
    if kind == "set":
        q["enum"] = {"north", "south", "east"}
    elif kind == "object":
        q["default"] = object()
    else:
        q["items"] = schema["function"]
    return schema


LIONAGI_OFF = {"object": yaml.representer.RepresenterError, "itself": RecursionError}


def _state(b: Branch) -> tuple[Any, ...]:
    return (
        tuple(str(i) for i in b.msgs.progression),
        tuple(json.dumps(m.to_dict(), sort_keys=True, default=str) for m in b.msgs.messages),
        json.dumps(b.metadata, sort_keys=True, default=str),
    )


@pytest.fixture
def uninstalled() -> Iterator[None]:
    lionagi_turns.uninstall()
    yield
    lionagi_turns.uninstall()


def _run(kind: str, install: bool) -> tuple[BaseException | None, int, bool]:
    """(what communicate raised, request bodies the server received, branch unchanged)."""
    with AnthropicServer() as server:
        model = iModel(provider="anthropic", model="claude-sonnet-4-5", api_key="x",
                       base_url=server.base_url, requires_tokens=False,
                       allow_local_network=True, prompt_caching=True)
        branch = Branch(system="policy", chat_model=model)
        branch.acts.register_tool(Tool(func_callable=lookup, tool_schema=_schema(kind)))
        before = _state(branch)
        if install:
            lionagi_turns.install()
        raised: BaseException | None = None
        try:
            asyncio.run(branch.communicate("which depot?"))
        except Exception as exc:
            raised = exc
        finally:
            lionagi_turns.uninstall()
        return raised, len(server.bodies()), _state(branch) == before


@pytest.mark.parametrize(
    ("kind", "error", "problem"),
    [
        ("set", TypeError, "['enum'] is a set; lionagi renders a set's items in hash order"),
        ("object", TypeError, "['default'] is of type object, which lionagi's YAML renderer"),
        ("itself", ValueError, "contains itself"),
    ],
)
def test_an_unrenderable_tool_schema_is_refused_before_any_request(
    uninstalled: None, kind: str, error: type[Exception], problem: str
) -> None:
    off, off_bodies, _ = _run(kind, install=False)
    if kind == "set":  # lionagi sends the set in this process's hash order
        assert (off, off_bodies) == (None, 1)
    else:  # lionagi's renderer fails, naming neither the tool nor the path
        assert type(off) is LIONAGI_OFF[kind]
        assert off_bodies == 0

    on, on_bodies, unchanged = _run(kind, install=True)
    assert isinstance(on, error)
    text = str(on)
    assert text.startswith("tool 'lookup' schema['function']")
    assert problem in text
    assert text.endswith(
        "(tool 'lookup' of the Branch's tool set (branch.acts); register the tool with a "
        "schema of plain JSON data, or remove it)"
    )
    assert on_bodies == 0
    assert unchanged
