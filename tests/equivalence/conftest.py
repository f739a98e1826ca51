"""The ``fuzz`` hypothesis profile (the differential fuzz of the fast YAML path) and the
``busy_switching`` fixture of the thread tests.

The fuzz: 8,000 examples when ``CI`` is set (the CI run), 300 in development, so the dev suite
stays fast. At 6 ms an example (almost all of it hypothesis drawing the nested values), 8,000
examples for each of the two tests are 100 s of CPU of the CI run; 20,000 were 240 s, which kept
the CI run over its 6 minutes. 8,000 is still over 25 times the development count, and the fixed
cases beside the fuzz (characters of every Unicode general category, the YAML-special strings,
the pinned layouts) are checked in every run. Only the tests marked with it use it: the fuzz of
the fast YAML path (tests/equivalence/test_fuzz_yaml.py) and of its text writer
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

FUZZ_EXAMPLES = 8_000 if os.environ.get("CI") else 300
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
