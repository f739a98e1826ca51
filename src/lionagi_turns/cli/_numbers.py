"""How the text views write a number a person reads: ``number(n)`` with a thousands separator
(``19,986``), ``count(n, noun)`` with the noun in the singular for exactly one (``1 turn``,
``2 turns``). Ids, dates and digests are not numbers and never pass through here."""

from __future__ import annotations

__all__ = ("budget", "count", "number", "tokens")


def number(n: int) -> str:
    """``n`` with a comma every three digits."""
    return f"{n:,}"


def count(n: int, noun: str) -> str:
    """``n`` and ``noun``, plural (an ``s`` added) unless ``n`` is 1."""
    return f"{number(n)} {noun if n == 1 else noun + 's'}"


def tokens(n: int) -> str:
    """``n`` tokens, separated (``19,986 tokens``)."""
    return count(n, "token")


def budget(n: int | None) -> str:
    """A section budget: ``n`` tokens, or ``unbounded`` for none."""
    return "unbounded" if n is None else tokens(n)
