"""The ``lionagi-turns`` command: ``compile``, ``diff`` and ``check`` on a saved branch.

- ``_app``: the typer app, its options and ``main`` (the console-script entry point);
- ``_compile``, ``_check``, ``_diff``: one module per command, each a pure report function and
  its text view; ``_amendment1`` and ``_prompt_cache`` are ``compile --profile``'s views,
  ``_branch_diff`` is ``diff A B``;
- ``_sections``: the partition of a request into sections with their sizes; ``_turn``: the
  turn a ``compile`` shows (the next one, or ``--at K``); ``_shape``: the versioned JSON
  header and the shipped JSON Schema (``schema/``);
- ``_inputs``: exit codes, option parsing and the next turn's request, shared by the commands;
- ``_read``: reading a branch file, bounded, as strict JSON;
- ``_load``: loading that JSON as a lionagi 0.36 branch, its stored view kept;
- ``_views``: inert text, bounded bodies and the console every text view prints to;
- ``_lines``: the plain lines the per-message views write (ANSI only on a colour terminal);
- ``_html``: ``compile --format html``'s self-contained page (and ``_repr_html_``'s body);
- ``_progress``: the status line on a terminal's stderr during a long load.

With a lionagi other than 0.36.x, ``main`` prints one line naming the installed and the
supported versions on standard error and exits 2, whatever the arguments; ``app`` is not there.
"""

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from lionagi_turns.core.support import unsupported_lionagi

if TYPE_CHECKING or unsupported_lionagi() is None:
    from lionagi_turns.cli import _show_command  # noqa: F401  (registers ``show``)
    from lionagi_turns.cli._app import app, main
else:

    def main(argv: Sequence[str] | None = None) -> None:
        """The console-script entry point when lionagi is unsupported: exit 2, one line."""
        print(f"lionagi-turns: {unsupported_lionagi()}", file=sys.stderr)
        raise SystemExit(2)


__all__ = ("app", "main")
