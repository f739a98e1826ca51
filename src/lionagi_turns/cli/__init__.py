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
- ``_views``: inert text, bounded bodies and the console every text view prints to.
"""

from ._app import app, main

__all__ = ("app", "main")
