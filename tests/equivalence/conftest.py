"""The ``fuzz`` hypothesis profile (the differential fuzz of the fast YAML path) and the
``busy_switching`` fixture of the thread tests.

The fuzz: 20,000 examples when ``CI`` is set (the CI run), a few hundred in development, so the
dev suite stays fast. Only the tests marked with it use it: the fuzz of the fast YAML path
(tests/equivalence/test_fuzz_yaml.py) and of its text writer
(tests/equivalence/test_direct_yaml.py).
Each runs as ``FUZZ_PARTS`` parametrized parts of ``FUZZ_EXAMPLES // FUZZ_PARTS`` examples (the
``fuzz`` profile is one part), so the parts spread over the xdist workers and the total stays
``FUZZ_EXAMPLES``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

FUZZ_EXAMPLES = 20_000 if os.environ.get("CI") else 300
FUZZ_PARTS = 4
assert FUZZ_EXAMPLES % FUZZ_PARTS == 0, "every part runs the same number of examples"

settings.register_profile(
    "fuzz",
    max_examples=FUZZ_EXAMPLES // FUZZ_PARTS,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture
def busy_switching() -> Iterator[None]:
    """Switch threads as often as CPython allows, to interleave cache reads and writes."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)
