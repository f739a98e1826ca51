"""The ``lionagi-turns`` command: ``compile``, ``diff`` and ``check`` on a saved branch."""

from ._app import app, main

__all__ = ("app", "main")
