"""A stand-in for the ``claude`` CLI, run as a real subprocess by lionagi's claude_code provider.

Invocation: ``claude -p <PROMPT> --output-format stream-json [...] [--resume SID] --model M
--verbose`` (lionagi builds the argv; stdin is unused).

Environment:

- ``FAKE_CLAUDE_LOG`` (required): a JSONL file; one line per invocation is appended with
  ``argv``, ``prompt`` (the value after ``-p``), ``resume`` (the value after ``--resume`` or
  null), ``model`` and ``cwd``. Without it the fake exits 2 with a message on stderr, so a
  test cannot spawn it unobserved.
- ``FAKE_CLAUDE_SCRIPT`` (optional): a JSON file holding a list of turns; invocation number N
  (counted from the log's existing lines) plays turn N. A turn is an object with optional
  ``text`` (default ``"ok"``), ``session_id`` (default ``"fake-session-1"``), ``tools``
  (a list of ``{"id", "name", "input", "output", "is_error"?}`` played as tool_use /
  tool_result events before the final text) and ``is_error`` (emit an error result and exit 1).
  Without a script, or past its end, every turn is the default turn.

Output: NDJSON on stdout — ``system``/``init``, then per tool an ``assistant`` tool_use event and
a ``user`` tool_result event, then an ``assistant`` text event, then ``result``. Exit code 0.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def _flag(argv: list[str], name: str) -> str | None:
    if name in argv:
        i = argv.index(name)
        if i + 1 < len(argv):
            return argv[i + 1]
    return None


def _emit(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> int:
    argv = sys.argv[1:]
    log_path = os.environ.get("FAKE_CLAUDE_LOG")
    if not log_path:
        sys.stderr.write("fake claude: FAKE_CLAUDE_LOG is not set; refusing to run unobserved\n")
        return 2

    try:
        with open(log_path, encoding="utf-8") as fh:
            number = sum(1 for line in fh if line.strip())
    except FileNotFoundError:
        number = 0

    record = {
        "argv": argv,
        "prompt": _flag(argv, "-p"),
        "resume": _flag(argv, "--resume"),
        "model": _flag(argv, "--model"),
        "cwd": os.getcwd(),
    }
    with open(log_path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")

    turn: dict[str, Any] = {}
    script_path = os.environ.get("FAKE_CLAUDE_SCRIPT")
    if script_path:
        with open(script_path, encoding="utf-8") as fh:
            turns = json.load(fh)
        if number < len(turns):
            turn = turns[number]

    session_id = turn.get("session_id", "fake-session-1")
    text = turn.get("text", "ok")
    _emit({"type": "system", "subtype": "init", "session_id": session_id, "model": record["model"],
           "tools": ["Bash", "Read"]})

    for i, tool in enumerate(turn.get("tools", [])):
        _emit({
            "type": "assistant",
            "session_id": session_id,
            "message": {"id": f"msg-tool-{number}-{i}", "role": "assistant", "content": [
                {"type": "tool_use", "id": tool["id"], "name": tool["name"],
                 "input": tool.get("input", {})},
            ]},
        })
        _emit({
            "type": "user",
            "session_id": session_id,
            "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": tool["id"],
                 "content": tool.get("output", ""), "is_error": bool(tool.get("is_error"))},
            ]},
        })

    usage = {"input_tokens": 13, "output_tokens": 5}
    if turn.get("is_error"):
        _emit({"type": "result", "subtype": "error_during_execution", "is_error": True,
               "result": text, "session_id": session_id, "usage": usage})
        return 1

    _emit({
        "type": "assistant",
        "session_id": session_id,
        "message": {"id": f"msg-{number}", "role": "assistant",
                    "content": [{"type": "text", "text": text}]},
    })
    _emit({"type": "result", "subtype": "success", "is_error": False, "result": text,
           "session_id": session_id, "num_turns": 1, "duration_ms": 1, "usage": usage})
    return 0


if __name__ == "__main__":
    sys.exit(main())
