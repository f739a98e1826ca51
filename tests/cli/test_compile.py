"""``lionagi-turns compile``: the payload printed equals the in-process compile, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest
from lionagi import Branch

from lionagi_turns import (
    ContextBlock,
    TurnRequest,
    compile_chat_request,
    decode_context_section,
    to_provider_messages,
)
from lionagi_turns.cli._compile import compile_report
from lionagi_turns.cli._inputs import DEFAULT_INSTRUCTION
from lionagi_turns.cli._load import load_branch
from lionagi_turns.core.envelope import find_context_section
from lionagi_turns.core.measure import count_tokens

from .conftest import EXAMPLES, save


def _in_process(path: Path, instruction: str, blocks: tuple[ContextBlock, ...]) -> list[dict]:
    branch = load_branch(path).branch
    request = TurnRequest(
        instruction=branch.msgs.create_instruction(instruction=instruction),
        context_blocks=blocks,
    )
    return to_provider_messages(compile_chat_request(branch, request))


@pytest.mark.parametrize("name", ["support", "tools", "images"])
def test_json_equals_in_process_compile_for_examples(run_cli, name: str) -> None:
    path = EXAMPLES / f"{name}.json"
    run = run_cli("compile", str(path), "--format", "json")
    assert run.code == 0, run.stderr
    assert run.stderr == ""
    out = run.json()
    assert out["messages"] == _in_process(path, DEFAULT_INSTRUCTION, ())
    assert out == compile_report(load_branch(path))
    assert out["instruction_is_placeholder"] is True


def test_json_with_instruction_and_context_blocks(run_cli, conversation: Path) -> None:
    blocks = (
        ContextBlock("catalog", 'line one\nline "two"'),
        ContextBlock("memory", "user prefers metric"),
    )
    run = run_cli(
        "compile", str(conversation), "-i", "And 3+3?",
        "--context", f"catalog={blocks[0].content}", "-c", f"memory={blocks[1].content}",
        "--format", "json",
    )
    assert run.code == 0, run.stderr
    out = run.json()
    assert out["messages"] == _in_process(conversation, "And 3+3?", blocks)
    assert out == compile_report(load_branch(conversation), "And 3+3?", blocks)
    first = out["messages"][0]["content"]
    assert "You are terse." in first  # the restored system is folded
    section = find_context_section(first)
    assert section is not None and decode_context_section(section) == blocks
    assert out["messages"][-1] == {"role": "user", "content": "Instruction: And 3+3?"}


def test_section_sizes_partition_the_messages(run_cli, conversation: Path) -> None:
    run = run_cli("compile", str(conversation), "-c", "kb=fact", "--format", "json")
    assert run.code == 0, run.stderr
    out = run.json()
    sections = out["sections"]
    texts = [m["content"] for m in out["messages"]]
    rows = [name for name in sections if name != "total"]
    assert rows == ["system", "tools", "context_blocks", "guidance", "history", "current_turn"]
    for key in ("characters", "tokens", "images"):
        assert sections["total"][key] == sum(sections[name][key] for name in rows)
    assert sections["total"]["characters"] == sum(len(t) for t in texts)
    assert sections["current_turn"]["characters"] == len(texts[-1])
    assert sections["system"]["characters"] == len("You are terse.\nAnswer in English.")
    assert sections["guidance"]["characters"] == len("Show your work.")
    section = find_context_section(texts[0])
    assert section is not None
    assert sections["context_blocks"]["characters"] == len(section)
    # history is what the fold's message and the other history messages hold besides the fold
    assert sections["history"]["characters"] == sum(len(t) for t in texts[:-1]) - sum(
        sections[name]["characters"] for name in ("system", "context_blocks", "guidance")
    )
    assert out["context_blocks"] == ["kb"]
    assert out["fold"] == {
        "message_index": 0,
        "sections": ["system", "context", "guidance"],
        "encoding": "emitter",
    }
    assert out["tokenizer"] == {"encoding": "o200k_base", "package": "bpe-openai"}
    assert sections["system"]["tokens"] == count_tokens("You are terse.\nAnswer in English.")
    assert sections["guidance"]["tokens"] == count_tokens("Show your work.")
    assert sections["context_blocks"]["tokens"] == count_tokens(section)
    assert sections["current_turn"]["tokens"] == count_tokens(texts[-1])


def test_text_view_marks_fold_sections_and_envelope(run_cli) -> None:
    path = EXAMPLES / "support.json"
    run = run_cli("compile", str(path), "-c", "kb=Refunds take 3-5 business days.")
    assert run.code == 0, run.stderr
    lines = run.stdout.splitlines()

    def labelled(label: str) -> list[str]:
        return [line for line in lines if line.startswith(f"│ {label} ")]

    assert any("You are Ada" in line for line in labelled("system"))
    context = labelled("context")
    assert len(context) >= 3
    assert "LIONAGI_CONTEXT_BLOCKS_JSON" in context[0]
    assert "END_LIONAGI_CONTEXT_BLOCKS_JSON" in context[-1]
    assert any("Answer in at most three sentences" in line for line in labelled("guidance"))
    assert "[0] user  carries system text + context blocks + guidance" in run.stdout
    assert "[4] user" in run.stdout and "current turn (placeholder" in run.stdout
    assert "Sections" in run.stdout


def test_text_view_shows_images(run_cli) -> None:
    run = run_cli("compile", str(EXAMPLES / "images.json"), "-i", "Thanks!")
    assert run.code == 0, run.stderr
    assert run.stdout.count("[image 1] data:image/png;base64,") == 2
    assert "current turn (placeholder" not in run.stdout


def test_python_dash_m_matches_in_process(run_cli, run_cli_process, conversation: Path) -> None:
    """Smoke test: ``python -m lionagi_turns`` prints what ``main(argv)`` prints in process."""
    in_process = run_cli("compile", str(conversation), "--format", "json")
    module = run_cli_process("compile", str(conversation), "--format", "json", module=True)
    assert in_process.code == module.code == 0, module.stderr
    assert module.stdout == in_process.stdout


def test_rejected_history_exits_1_with_one_line(run_cli) -> None:
    path = EXAMPLES / "broken.json"
    run = run_cli("compile", str(path))
    assert run.code == 1
    assert run.stdout == ""
    assert len(run.stderr.splitlines()) == 1
    assert str(path) in run.stderr and "lionagi-turns check" in run.stderr
    assert "Traceback" not in run.stderr


def test_fold_comes_from_the_compilers_plan(run_cli, tmp_path: Path) -> None:
    """A system holding a carriage return cannot sit in a YAML block with the context section:
    the compiler's plan folds it verbatim first (encoding ``fold-first``); the report and the
    view read that plan."""
    branch = Branch(system="line\rnext")
    branch.msgs.add_message(instruction="hi")
    branch.msgs.add_message(assistant_response="hello")
    path = save(branch, tmp_path / "cr.json")
    out = run_cli("compile", str(path), "-c", "kb=fact", "--format", "json").json()
    assert out["fold"] == {
        "message_index": 0,
        "sections": ["system", "context"],
        "encoding": "fold-first",
    }
    text = run_cli("compile", str(path), "-c", "kb=fact")
    assert text.code == 0, text.stderr
    lines = text.stdout.splitlines()
    system = [line for line in lines if line.startswith("│ system ")]
    assert len(system) == 1 and "line\\x0dnext" in system[0]
    assert len([line for line in lines if line.startswith("│ context ")]) == 3
