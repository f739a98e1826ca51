"""D7: history ``left_out`` names every message the active view excludes but the record
keeps (``evicted``/``compacted``), recorded at the source by the wrapped context tool."""

from __future__ import annotations

import json

import anyio
import pytest
from lionagi import Branch
from lionagi.tools.context.context import ContextTool

from lionagi_turns.amendment1 import EXCLUSIONS_KEY, LeftOut, marker, view_exclusions
from lionagi_turns.profiles.amendment1._views import record_context_tool

from ._support import (
    add_action_pair,
    add_assistant,
    add_instruction,
    after_fold,
    all_text,
    branch,
    compile_a1,
    set_current_progression,
    text_of,
)


@pytest.fixture(autouse=True)
def _offline_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """The context tool counts tokens with tiktoken, which cannot download o200k here."""
    from lionagi.service.token_calculator import TokenCalculator

    from lionagi_turns.core.measure import count_tokens

    monkeypatch.setattr(
        TokenCalculator, "tokenize", staticmethod(lambda text, **_: count_tokens(text))
    )


def _tool(b: Branch, recording: bool = True):
    bind = record_context_tool(ContextTool.bind) if recording else ContextTool.bind
    return bind(ContextTool(), b).func_callable


def _run(fn, **kwargs):
    async def main():
        return await fn(**kwargs)

    return anyio.run(main)


def _history():
    b = branch("policy")
    msgs = [add_instruction(b, "q1"), add_assistant(b, "a1")]
    req, resp = add_action_pair(b, "f", {"x": 1}, "big output")
    msgs += [req, resp, add_assistant(b, "a1b"), add_instruction(b, "q2"), add_assistant(b, "a2")]
    return b, msgs


def test_no_view_no_exclusions() -> None:
    b, _ = _history()
    assert view_exclusions(b, None).left_out == ()
    assert compile_a1(b).bound("history").left_out == ()


def test_an_eviction_is_a_left_out_entry_with_its_marker() -> None:
    b, msgs = _history()
    result = _run(_tool(b), action="evict_action_results", keep_last=0)
    assert result["success"] and result["removed"] == 1
    resp = msgs[3]
    assert b.metadata[EXCLUSIONS_KEY] == {str(resp.id): "evicted"}
    compiled = compile_a1(b)
    assert compiled.bound("history").left_out == (LeftOut(str(resp.id), "evicted"),)
    assert after_fold(text_of(compiled.messages[0])).startswith(
        marker("history", 1, "evicted") + "\n\n")
    assert "big output" not in all_text(compiled)
    # the record keeps it
    assert resp.id in b.msgs.messages


def test_a_compaction_names_each_replaced_message_as_compacted() -> None:
    b, msgs = _history()
    result = _run(_tool(b), action="compact", start=2, end=5, summary="called f", mode="tool_io")
    assert result["success"], result
    req, resp = msgs[2], msgs[3]
    compiled = compile_a1(b)
    assert compiled.bound("history").left_out == (
        LeftOut(str(req.id), "compacted"),
        LeftOut(str(resp.id), "compacted"),
    )
    assert marker("history", 2, "compacted") in all_text(compiled)
    assert "[CONTEXT COMPACTION] called f" in all_text(compiled)


def test_restore_removes_the_record_and_the_entry() -> None:
    b, _ = _history()
    tool = _tool(b)
    _run(tool, action="evict", start=3, end=5)
    assert len(compile_a1(b).bound("history").left_out) == 2
    _run(tool, action="restore", start=0, end=len(b.msgs.progression))
    assert b.metadata[EXCLUSIONS_KEY] == {}
    assert compile_a1(b).bound("history").left_out == ()


def test_the_record_is_plain_json_and_survives_save_and_load() -> None:
    b, _ = _history()
    _run(_tool(b), action="evict", start=1, end=2)
    data = json.loads(json.dumps(b.to_dict(), default=str))
    loaded = Branch.from_dict(data)
    assert loaded.metadata[EXCLUSIONS_KEY] == b.metadata[EXCLUSIONS_KEY]


def test_an_unrecorded_exclusion_reads_as_evicted_and_is_listed() -> None:
    b, msgs = _history()
    _run(_tool(b, recording=False), action="compact", start=2, end=5, summary="s")
    reading = view_exclusions(b, None)
    assert [e.reason for e in reading.left_out] == ["evicted", "evicted"]
    assert reading.unrecorded == (str(msgs[2].id), str(msgs[3].id))


def test_every_excluded_message_is_named_whatever_changed_the_view() -> None:
    b, msgs = _history()
    set_current_progression(b, [b.msgs.system.id, msgs[0].id, msgs[1].id, msgs[5].id, msgs[6].id])
    names = [e.name for e in compile_a1(b).bound("history").left_out]
    assert names == [str(m.id) for m in msgs[2:5]]


def test_an_explicit_progression_is_the_callers_selection_not_an_exclusion() -> None:
    b, msgs = _history()
    _run(_tool(b), action="evict", start=1, end=3)
    compiled = compile_a1(b, progression=(msgs[5].id, msgs[6].id))
    assert compiled.bound("history").left_out == ()


def test_exclusions_and_truncation_share_the_record_one_marker_per_reason() -> None:
    from lionagi_turns.amendment1 import SectionBudgets

    b, _ = _history()
    _run(_tool(b), action="evict_action_results", keep_last=0)
    compiled = compile_a1(b, budgets=SectionBudgets(history=len("Instruction: q2") + 2))
    reasons = [e.reason for e in compiled.bound("history").left_out]
    # q1's turn (q1, a1, a1b) is dropped; the action request before q2 is q2's turn
    assert reasons == ["evicted", "truncated", "truncated", "truncated"]
    first = after_fold(text_of(compiled.messages[0])).split("\n")
    assert first[:2] == [marker("history", 3, "truncated"), marker("history", 1, "evicted")]


@pytest.mark.parametrize("action", ["status", "get_messages"])
def test_reading_actions_record_nothing(action: str) -> None:
    b, _ = _history()
    _run(_tool(b), action=action)
    assert EXCLUSIONS_KEY not in b.metadata
