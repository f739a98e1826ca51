"""``__rich__`` of a compiled request (either profile's): the one-line summary over a table of
the last messages, stored text never read as Rich markup."""

from __future__ import annotations

import re

from lionagi import Branch
from rich.console import Console

from lionagi_turns import TurnRequest, amendment1, compile_chat_request
from lionagi_turns.core._rich_view import SHOWN


def _printed(value: object) -> str:
    console = Console(record=True, width=120, color_system=None)
    console.print(value)
    return console.export_text()


def _branch(pairs: int) -> Branch:
    branch = Branch(system="be brief")
    for i in range(pairs):
        branch.msgs.add_message(instruction=f"question {i} [bold]not markup[/bold]")
        branch.msgs.add_message(assistant_response=f"answer {i}")
    return branch


def test_a_compiled_request_prints_its_summary_and_last_messages() -> None:
    branch = _branch(15)
    compiled = compile_chat_request(
        branch, TurnRequest(instruction=branch.msgs.create_instruction(instruction="And now?")))
    text = _printed(compiled)
    assert " ".join(text.split()).startswith(repr(compiled))
    count = len(compiled.messages)
    assert count > SHOWN
    assert f"{count - SHOWN:,} earlier message(s) not listed" in text
    rows = [int(i) for i in re.findall(r"^\s*(\d+) │", text, re.M)]
    assert rows == list(range(count - SHOWN, count))
    assert "[bold]not markup[/bold]" in text  # shown as written, not styled
    assert "And now?" in text


def test_an_amendment1_request_adds_what_each_section_left_out() -> None:
    branch = _branch(3)
    instruction = branch.msgs.create_instruction(instruction="And now?")
    amended = amendment1.compile_chat_request(
        branch, amendment1.TurnRequest(instruction=instruction),
        budgets=amendment1.SectionBudgets(history=1))
    text = _printed(amended)
    left = [b for b in amended.bounds if b.left_out]
    assert left
    for bound in left:
        reason = bound.left_out[0].reason
        assert f"{bound.section} left out" in text and reason in text
    assert " ".join(text.split()).startswith(repr(amended))
