"""Importing this module registers the ``Reminder`` stage as the profile ``reminder`` (what a
user's module named in ``LIONAGI_TURNS_STAGES`` does)."""

from lionagi_turns.integration import register_stages
from stages.reminder import Reminder  # type: ignore[import-not-found]

register_stages("reminder", "a reminder after the current instruction", lambda: (Reminder(),))
