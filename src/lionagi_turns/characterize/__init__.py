"""Characterization tooling: lionagi 0.36's own payloads, live, and the registry of intended
differences. Tooling only: the runtime (compiler, integration, CLI ``compile``/``check``) never
imports this package; ``tests/characterization/test_isolation.py`` proves it.

- ``legacy``: lionagi 0.36's own provider messages for a turn, computed live.
- ``registry``: ``REGISTRY``, the intended differences, each with its ``explain`` function
  (payload entries in ``_payload``, error entries in ``_outcomes``).
- ``_compare``: ``compare(branch, request)`` runs the registry over both sides.
- ``_cache_compare``: ``compare_cache_bodies`` and ``CACHE_REGISTRY`` (re-exported by
  ``registry``), the prompt-cache profile's intended differences (ADR-0127), request body by
  request body over one conversation; ``cache_sim``: Anthropic's prefix-cache rules.
- ``_facts`` (what a turn's branch and request say), ``_sections`` (the oracle's own reading of
  a rendered instruction's sections), ``_rewrite`` (message and section rewrites).
"""

from lionagi_turns.characterize._cache_compare import CacheComparison, compare_cache_bodies
from lionagi_turns.characterize._compare import Comparison, compare
from lionagi_turns.characterize.registry import (
    CACHE_REGISTRY,
    REGISTRY,
    IntendedDifference,
    registry_entry,
)

__all__ = (
    "CACHE_REGISTRY",
    "REGISTRY",
    "CacheComparison",
    "Comparison",
    "IntendedDifference",
    "compare",
    "compare_cache_bodies",
    "registry_entry",
)
