"""docs/usage.md's table of names imported before install() lists every rebound name."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import lionagi_turns
from lionagi_turns.integration._patches import TARGETS

USAGE = Path(__file__).resolve().parents[2] / "docs" / "usage.md"
HEADING = "### Names imported before `install()`"
ROW = re.compile(r"^\| `([^`]+)` \| `([^`]+)` \| (.+) \|$")


def _documented_rows() -> list[tuple[str, str, str]]:
    text = USAGE.read_text(encoding="utf-8")
    section = text[text.index(HEADING) :]
    section = section[: section.index("\n#", len(HEADING))]
    return [m.groups() for m in map(ROW.match, section.splitlines()) if m]  # type: ignore[misc]


def test_docs_table_lists_exactly_the_rebound_names() -> None:
    rows = _documented_rows()
    documented = [(module, name) for name, module, _ in rows]
    assert sorted(documented) == sorted((t.site, t.name) for t in TARGETS)
    assert len(documented) == len(set(documented))


def test_each_row_says_how_to_call_the_rebound_name() -> None:
    for name, module, how in _documented_rows():
        assert "import after `install()`" in how or "through the class" in how, (module, name)


def test_install_docstring_says_an_early_import_keeps_lionagis_original() -> None:
    doc = " ".join((lionagi_turns.install.__doc__ or "").split())
    assert "imported from one of those modules before ``install()``" in doc
    assert "keeps lionagi's original" in doc


def test_a_name_imported_before_install_keeps_lionagis_original() -> None:
    fold = importlib.import_module("lionagi.agent.context_fold")
    early = fold.estimate_next_request_tokens
    lionagi_turns.install()
    try:
        assert fold.estimate_next_request_tokens is not early
        assert early.__module__ == "lionagi.agent.context_fold"
    finally:
        lionagi_turns.uninstall()
    assert fold.estimate_next_request_tokens is early
