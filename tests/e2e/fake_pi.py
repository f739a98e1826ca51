"""A stand-in for the ``pi`` coding agent CLI, run as a real subprocess by lionagi 0.36's pi
provider.

Invocation (lionagi builds it): ``pi -p --mode json [flags] [--system-prompt S] <PROMPT>`` (the
prompt is the last argument). lionagi hands the child its own standard input, so the fake does
not read it (its log line has ``stdin`` null). Pi reports no session id.

Logging and replies: ``fake_cli_log`` (``FAKE_CLI_LOG``, ``FAKE_CLI_REPLIES``).

Output: the ``pi --mode json`` events lionagi parses, one per line: ``agent_start``,
``message_end`` with the assistant message (text content, ``model``, ``usage``), then
``agent_end`` with the messages. Exit code 0.
"""

from __future__ import annotations

import sys

from fake_cli_log import emit, flag, record, reply_for


def main() -> int:
    number = record("pi", None)
    if number is None:
        return 2
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": reply_for(number)}],
        "model": flag(sys.argv[1:], "--model") or "pi-model",
        "usage": {"input": 13, "output": 5},
    }
    emit({"type": "agent_start"})
    emit({"type": "message_end", "message": message})
    emit({"type": "agent_end", "messages": [message]})
    return 0


if __name__ == "__main__":
    sys.exit(main())
