"""Errors callers already catch keep being caught (issue 9 item 5), install off vs on.

lionagi 0.36 raises ``NotFoundError`` for a progression entry it cannot find (a missing id, a
string that is not an id, an int). Under ``install()`` the compiler's missing-ids error and the
adapter's progression errors are ``ValueError``/``TypeError`` as ADR-0007 says and still
lionagi's ``NotFoundError``; either way no request is sent and nothing is recorded.
"""

from __future__ import annotations

import contextlib
from uuid import uuid4

import pytest
from lionagi import Branch
from lionagi._errors import NotFoundError
from lionagi.operations.run.run import run
from lionagi.operations.types import RunParam

from lionagi_turns.integration import _install as integration

from .harness import branch_state, collect

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

ENTRIES = {
    "missing-id": (lambda: uuid4(), ValueError),
    "not-a-uuid": (lambda: "not-a-uuid", ValueError),
    "an-int": (lambda: 5, TypeError),
}


def _branch(model) -> Branch:
    branch = Branch(system="S", chat_model=model)
    branch.msgs.add_message(instruction="a")
    branch.msgs.add_message(assistant_response="b", sender=branch.id)
    return branch


@pytest.mark.parametrize("entry", list(ENTRIES))
async def test_communicate_over_http(entry, chat_server, openai_model) -> None:
    make, adr_kind = ENTRIES[entry]
    for installed in (False, True):
        branch = _branch(openai_model())
        before = branch_state(branch)
        with integration.installed() if installed else contextlib.nullcontext():
            try:
                await branch.communicate("q", progression=[make()])
            except NotFoundError as exc:  # what a caller of lionagi 0.36 wrote
                caught = exc
            else:  # pragma: no cover - the assertion below names the failure
                caught = None
        assert caught is not None, f"install={installed}: not a NotFoundError"
        if installed:
            assert isinstance(caught, adr_kind)
        assert branch_state(branch) == before
    assert chat_server.chat_requests() == []


@pytest.mark.parametrize("entry", list(ENTRIES))
async def test_run_on_a_cli_model(entry, fake_claude, claude_model) -> None:
    make, adr_kind = ENTRIES[entry]
    for installed in (False, True):
        branch = _branch(claude_model())
        before = branch_state(branch)
        scope = integration.installed() if installed else contextlib.nullcontext()
        with scope, pytest.raises(NotFoundError) as info:
            await collect(run(branch, "q", RunParam(progression=[make()])))
        if installed:
            assert isinstance(info.value, adr_kind)
        assert branch_state(branch) == before
    assert fake_claude.calls() == []

