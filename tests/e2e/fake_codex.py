"""A stand-in for the ``codex`` CLI, run as a real subprocess by lionagi 0.36's codex provider.

Invocation (lionagi builds it): ``codex exec --json [flags] [-c developer_instructions=...]
-C <dir> -- -``; the prompt arrives on stdin. Every ``codex exec`` starts a new thread, as the
real CLI does (lionagi 0.36 never runs ``codex exec resume``): call N reports thread
``thread-N+1``.

Logging and replies: ``fake_cli_log`` (``FAKE_CLI_LOG``, ``FAKE_CLI_REPLIES``); ``stdin`` is
the whole standard input.

Output: the ``codex exec --json`` events lionagi parses, one per line: ``thread.started``
(``thread_id``), ``item.completed`` with an ``agent_message`` item (the reply), then
``turn.completed`` with ``usage``. Exit code 0.
"""

from __future__ import annotations

import sys

from fake_cli_log import emit, record, reply_for


def main() -> int:
    number = record("codex", sys.stdin.read())
    if number is None:
        return 2
    emit({"type": "thread.started", "thread_id": f"thread-{number + 1}"})
    emit({"type": "turn.started"})
    emit({"type": "item.completed",
          "item": {"id": "item_0", "type": "agent_message", "text": reply_for(number)}})
    emit({"type": "turn.completed",
          "usage": {"input_tokens": 13, "cached_input_tokens": 0, "output_tokens": 5}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
