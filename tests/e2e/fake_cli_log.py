"""What the fake ``codex``, ``agy`` and ``pi`` executables share: the call log and the replies.

Environment:

- ``FAKE_CLI_LOG`` (required): a JSONL file. Each invocation appends one line with ``program``
  (``codex``, ``agy`` or ``pi``), ``argv`` (the arguments after the program), ``stdin`` (the
  text read from standard input, or null for a program lionagi gives no input on stdin) and
  ``cwd``. Without it a fake exits 2 with a message on stderr, so no test spawns one unobserved.
- ``FAKE_CLI_REPLIES`` (optional): a JSON file holding a list of reply texts; the Nth call of a
  program (counted from that program's lines already in the log) answers ``replies[N]``.
  Without it, or past its end, the Nth call answers ``"reply N+1"``.
"""

from __future__ import annotations

import json
import os
import sys

__all__ = ("flag", "record", "reply_for")


def flag(argv: list[str], name: str) -> str | None:
    """The value after the first ``name`` in ``argv``, or None."""
    if name in argv:
        i = argv.index(name)
        if i + 1 < len(argv):
            return argv[i + 1]
    return None


def record(program: str, stdin: str | None) -> int | None:
    """Append this invocation to the log; its 0-based number among ``program``'s calls, or
    None (after writing to stderr) when ``FAKE_CLI_LOG`` is unset."""
    log_path = os.environ.get("FAKE_CLI_LOG")
    if not log_path:
        sys.stderr.write(f"fake {program}: FAKE_CLI_LOG is not set; refusing to run unobserved\n")
        return None
    number = 0
    try:
        with open(log_path, encoding="utf-8") as fh:
            records = [json.loads(line) for line in fh if line.strip()]
        number = sum(1 for r in records if r["program"] == program)
    except FileNotFoundError:
        pass
    line = {"program": program, "argv": sys.argv[1:], "stdin": stdin, "cwd": os.getcwd()}
    with open(log_path, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")
    return number


def reply_for(number: int) -> str:
    """The scripted reply of call ``number`` (see the module contract)."""
    path = os.environ.get("FAKE_CLI_REPLIES")
    if path:
        with open(path, encoding="utf-8") as fh:
            replies = json.load(fh)
        if number < len(replies):
            return str(replies[number])
    return f"reply {number + 1}"


def emit(obj: dict[str, object]) -> None:
    """One NDJSON line on stdout."""
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()
