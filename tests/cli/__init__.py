"""Tests of the ``lionagi-turns`` command, run through the installed entry point."""
