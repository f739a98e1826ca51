"""The ``lionagi-turns`` command: ``compile``, ``diff`` and ``check`` on a saved branch.

- ``_app``: the typer app, its options and ``main`` (the console-script entry point);
- ``_compile``, ``_check``, ``_diff``: one module per command, each a pure report function and
  its text view; ``_amendment1`` and ``_prompt_cache`` are ``compile --profile``'s views;
- ``_inputs``: exit codes, option parsing and the next turn's request, shared by the commands;
- ``_read``: reading a branch file, bounded, as strict JSON;
- ``_load``: loading that JSON as a lionagi 0.36 branch, its stored view kept;
- ``_views``: inert text, bounded bodies and the console every text view prints to.
"""

from ._app import app, main

__all__ = ("app", "main")
