"""Test-wide isolation: lionagi writes nothing into the checkout or the user's home.

Set before lionagi is imported anywhere: a temporary LIONAGI_HOME, no log auto-save on exit,
and every test runs with a temporary working directory (lionagi reads ``.env`` files and writes
``./data/logs`` relative to it).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

_HOME = Path(tempfile.mkdtemp(prefix="lionagi-turns-home-"))
os.environ["LIONAGI_HOME"] = str(_HOME)
os.environ["LOG_AUTO_SAVE_ON_EXIT"] = "false"
# a branch's log dumps at capacity into LOG_PERSIST_DIR (default ./data/logs, relative to the
# working directory at that moment): under the temporary home, whatever the directory then is
os.environ["LOG_PERSIST_DIR"] = str(_HOME / "logs")
os.environ.setdefault("LIONAGI_TURNS_TEST", "1")

REPO_ROOT = Path(__file__).resolve().parent.parent

#: Examples per property test in the ``ci`` profile (``CI`` set, as ``.ci/run`` runs it) and in
#: the ``dev`` profile (the default: the README's command). CI runs five times the dev count.
#: The properties draw from small bounded spaces (lists of a few steps, records of a few kinds,
#: values of at most 16 leaves), and the exact cases they guard are pinned by fixed tests beside
#: them; going from 500 to 1,000 examples cost the CI run about 200 s of CPU (100 s of its
#: wall time on two cores). ``ci`` never runs fewer examples than ``dev``. With ``CI`` set,
#: hypothesis's CI settings make the ``ci`` profile derandomized: every CI run checks the same
#: examples, so a failure there reproduces.
CI_EXAMPLES = 500
DEV_EXAMPLES = 100
assert CI_EXAMPLES >= DEV_EXAMPLES, "CI checks at least what the README's command checks"

settings.register_profile(
    "ci",
    max_examples=CI_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    max_examples=DEV_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(autouse=True)
def _isolated_cwd(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    """Each test runs in an empty temporary directory."""
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


def _count_walks(monkeypatch: pytest.MonkeyPatch, *, fast_only: bool) -> list[int]:
    from lionagi_turns.core import pipeline as _compiler
    from lionagi_turns.memo.switch import fast_path_enabled

    calls: list[int] = []
    real = _compiler.project_history

    def counted(branch: Any, view: Any) -> Any:
        if not fast_only or fast_path_enabled():
            calls.append(len(view))
        return real(branch, view)

    monkeypatch.setattr(_compiler, "project_history", counted)
    return calls


@pytest.fixture
def full_walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The compiler's full history walks (one ``project_history`` call each, the view's
    length recorded); a resumed compile adds none."""
    return _count_walks(monkeypatch, fast_only=False)


@pytest.fixture
def fast_walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """``full_walks`` counting only the walks made with the fast path on (so a differential
    check's slow compile, which always walks, adds none)."""
    return _count_walks(monkeypatch, fast_only=True)
