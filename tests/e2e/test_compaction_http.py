"""Tier 3, recorded compaction, over HTTP under ``install()`` (issue 28 item 3): at a drop step
the summarizer's text is recorded in the branch and sent at the truncation point, so facts said
early survive the drop; every request stays under the ceiling; a failing summarizer falls back
to a plain drop with one warning."""

from __future__ import annotations

import asyncio
import re
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from lionagi import Branch, iModel

import lionagi_turns
from lionagi_turns import TurnsCompatibilityWarning
from lionagi_turns import amendment1 as a1
from lionagi_turns.integration import _install
from lionagi_turns.profiles.amendment1._summary import SUMMARIES_KEY

from .http_server import ChatServer, Reply

pytestmark = pytest.mark.e2e

ROUNDS = 16
FACT = re.compile(r"FACT-\d+=\w+")
PAD = " ".join(["filler"] * 40)


async def keep_facts(texts: list[str]) -> str:
    """A deterministic summarizer: the fact lines of what it is given, in order, once each."""
    return "\n".join(dict.fromkeys(f for t in texts for f in FACT.findall(t)))


async def explode(texts: list[str]) -> str:
    raise RuntimeError("summarizer down")


@pytest.fixture
def uninstalled() -> Iterator[None]:
    try:
        yield
    finally:
        _install.uninstall()


def _loop(compaction: a1.Compaction | None) -> tuple[Branch, list[Any], list[list[dict[str, Any]]]]:
    ceiling = a1.InputCeiling(900, low_water=500, compaction=compaction)
    with ChatServer(default=Reply(content=f"noted. {PAD}")) as server:
        model = iModel(provider="openai", model="gpt-4.1-mini", api_key="x",
                       base_url=server.base_url, requires_tokens=False, allow_local_network=True)
        lionagi_turns.install(profile="amendment1", ceiling=ceiling)
        branch = Branch(system="Keep track of the facts.", chat_model=model)

        async def talk() -> list[Any]:
            async with lionagi_turns.capture() as calls:
                for i in range(ROUNDS):
                    await branch.communicate(f"round {i}: FACT-{i}=v{i}. {PAD}")
            return list(calls)

        calls = asyncio.run(talk())
        _install.uninstall()
        return branch, calls, server.payloads()


def _facts(messages: list[dict[str, Any]]) -> set[str]:
    return {f for m in messages for f in FACT.findall(str(m["content"]))}


def test_summaries_keep_the_dropped_facts_and_every_request_stays_under_the_ceiling(
    uninstalled: None,
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", TurnsCompatibilityWarning)
        branch, calls, sent = _loop(a1.Compaction(keep_facts))
    plain_branch, _, plain_sent = _loop(None)
    assert all(c.ceiling["used"] <= 900 for c in calls)
    steps = [c for c in calls if c.ceiling.get("stepped")]
    summaries = branch.metadata[SUMMARIES_KEY]
    assert steps and len(summaries) == len(steps)
    assert [s["step"] for s in summaries] == list(range(1, len(steps) + 1))
    # a callable is no model and reports no usage: the record holds the summary's own size
    assert all(s["model"] is None and list(s["tokens"]) == ["summary"] for s in summaries)
    assert all(s["tokens"]["summary"] > 0 for s in summaries)
    last = sent[-1]
    assert "[LIONAGI_SUMMARY covers=" in str(last[0]["content"])
    assert "reason=summarized" in str(last[0]["content"])
    assert _facts(last) == {f"FACT-{i}=v{i}" for i in range(ROUNDS)}  # nothing forgotten
    assert len(_facts(plain_sent[-1])) < ROUNDS  # a plain drop forgets
    reasons = {e.reason for b in calls[-1].compiled.bounds for e in b.left_out}
    assert "summarized" in reasons
    assert len(branch.messages) == len(plain_branch.messages) == 2 * ROUNDS + 1  # none removed


def test_a_reloaded_branch_sends_the_same_summary(uninstalled: None) -> None:
    branch, _, _ = _loop(a1.Compaction(keep_facts))
    again = Branch.from_dict(branch.to_dict(mode="json"))
    request = a1.TurnRequest(instruction=again.msgs.create_instruction(instruction="next"))
    reloaded = a1.compile_chat_request(again, request, ceiling=a1.InputCeiling(900, 500))
    request = a1.TurnRequest(instruction=branch.msgs.create_instruction(instruction="next"))
    live = a1.compile_chat_request(branch, request, ceiling=a1.InputCeiling(900, 500))
    assert reloaded.messages == live.messages
    assert "[LIONAGI_SUMMARY" in str(live.messages[0].content)


def test_a_failing_summarizer_falls_back_to_a_plain_drop_once_warned(uninstalled: None) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        branch, calls, sent = _loop(a1.Compaction(explode))
    _, _, plain_sent = _loop(None)
    said = [str(w.message) for w in caught if "summarizer" in str(w.message)]
    assert len(said) == 1 and "RuntimeError: summarizer down" in said[0]
    assert SUMMARIES_KEY not in branch.metadata
    assert sent == plain_sent  # exactly the plain drops
    assert all(c.outcome == "ok" for c in calls)


def test_bad_compaction_options_are_refused_naming_the_value() -> None:
    with pytest.raises(TypeError, match=r"Compaction\.summarize must be an async callable"):
        a1.Compaction("not callable")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"Compaction.share must be in \(0, 1\], got 0"):
        a1.Compaction(keep_facts, share=0)
    with pytest.raises(ValueError, match=r"Compaction\.timeout must be seconds > 0"):
        a1.Compaction(keep_facts, timeout=-1)
    with pytest.raises(TypeError, match=r"InputCeiling\.compaction must be a Compaction"):
        a1.InputCeiling(100, compaction=keep_facts)  # type: ignore[arg-type]


def test_compile_shows_the_summary_record_and_the_ids_it_stands_for(
    uninstalled: None, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``compile --ceiling`` on the saved branch: the JSON's ``summary`` is the record the
    branch keeps (valid against the shipped schema), its ids the ones listed as summarized;
    the text view names its step, its size and who wrote it, within 80 columns; the HTML
    page says the same."""
    import io
    import json
    import sys
    from importlib import resources

    import jsonschema

    from lionagi_turns.cli import main

    branch, _, _ = _loop(a1.Compaction(keep_facts))
    path = tmp_path / "branch.json"
    path.write_text(json.dumps(branch.to_dict(mode="json"), default=str), encoding="utf-8")
    args = ["compile", str(path), "--profile", "amendment1", "--ceiling", "900",
            "--low-water", "500"]

    def run(*extra: str) -> str:
        out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
        with monkeypatch.context() as mp:
            mp.setenv("COLUMNS", "80")
            mp.setattr(sys, "stdout", out)
            try:
                main([*args, *extra])
            except SystemExit as exc:
                assert not exc.code
        return out.buffer.getvalue().decode("utf-8")  # type: ignore[attr-defined]

    report = json.loads(run("--format", "json"))
    schema = json.loads(resources.files("lionagi_turns.cli").joinpath(
        "schema/lionagi-turns.schema.json").read_text())
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(report))
    assert not errors, [e.message[:200] for e in errors[:3]]
    newest = branch.metadata[SUMMARIES_KEY][-1]
    assert report["summary"] == newest and report["ceiling"]["first"] == newest["upto"]
    summarized = [e["name"] for row in report["bounds"] for e in row["left_out"]
                  if e["reason"] == "summarized"]
    assert summarized == newest["covers"]
    text = run()
    assert max(len(line) for line in text.splitlines()) <= 80
    joined = " ".join(line.strip() for line in text.splitlines())
    assert (f"summary (tier 3): drop step {newest['step']}, stands for "
            f"{len(newest['covers'])} records (listed as summarized), adds "
            f"{newest['tokens']['summary']} tokens; written by a callable") in joined
    assert all(uid in joined for uid in newest["covers"])
    page = run("--format", "html")
    assert f"summary (tier 3): drop step {newest['step']}, stands for" in page
