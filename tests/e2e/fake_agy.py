"""A stand-in for the Antigravity (Gemini) CLI ``agy``, run as a real subprocess by lionagi
0.36's gemini_code provider.

Invocation (lionagi builds it): ``agy -p <PROMPT> --output-format json --model M [...]
[--conversation ID]``; stdin is not used (lionagi gives the child /dev/null, which the fake
reads and logs). The conversation is kept: call N answers in the conversation named by
``--conversation``, or in ``conv-1`` when none is named.

Logging and replies: ``fake_cli_log`` (``FAKE_CLI_LOG``, ``FAKE_CLI_REPLIES``).

Output: one JSON object, as ``agy --output-format json`` prints it: ``status`` ``SUCCESS``,
``response``, ``conversation_id``, ``model``, ``usage``, ``num_turns``, ``duration_seconds``.
Exit code 0.
"""

from __future__ import annotations

import sys

from fake_cli_log import emit, flag, record, reply_for


def main() -> int:
    number = record("agy", sys.stdin.read())
    if number is None:
        return 2
    emit({
        "status": "SUCCESS",
        "response": reply_for(number),
        "conversation_id": flag(sys.argv[1:], "--conversation") or "conv-1",
        "model": flag(sys.argv[1:], "--model"),
        "usage": {"input_tokens": 13, "output_tokens": 5},
        "num_turns": 1,
        "duration_seconds": 0.01,
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
