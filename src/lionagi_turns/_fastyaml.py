"""Moved in 0.2.0 to ``lionagi_turns.memo.yaml`` (see ``lionagi_turns._moved``)."""

from lionagi_turns._moved import serve

serve(__name__)
