"""Tool functions the prompt-cache tests register on a Branch (their docstrings become the
schemas' descriptions). No ``from __future__ import annotations`` here: lionagi builds the
schemas from the annotations as objects."""


def lookup(term: str) -> str:
    """Look a term up.

    Args:
        term: the term
    """
    return term


def convert(amount: float) -> float:
    """Convert an amount.

    Args:
        amount: the amount
    """
    return amount
