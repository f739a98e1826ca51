"""Every ``--format json`` output validates against the JSON Schema the package ships, on every
example and in every profile; the shared fields have one type everywhere."""

from __future__ import annotations

import json
from importlib import resources
from itertools import product
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from lionagi_turns import __version__
from lionagi_turns.cli._load import load_branch
from lionagi_turns.cli._turn import recorded_instructions

from .conftest import EXAMPLES

SCHEMA = json.loads(
    resources.files("lionagi_turns.cli").joinpath("schema/lionagi-turns.schema.json").read_text()
)
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
EXAMPLE_FILES = sorted(EXAMPLES.glob("*.json"))
PROFILES = ("default", "prompt-cache", "amendment1")


def _valid(out: dict[str, Any]) -> None:
    errors = sorted(VALIDATOR.iter_errors(out), key=str)
    assert not errors, [f"{list(e.absolute_path)}: {e.message}"[:300] for e in errors[:5]]


def _json(run_cli, *args: str) -> dict[str, Any] | None:
    run = run_cli(*args, "--format", "json")
    if run.code == 1 and run.stdout == "":  # the compiler rejects the example (broken.json)
        assert "reject" in run.stderr or "cannot compile" in run.stderr, run.stderr
        return None
    assert run.code in (0, 1), run.stderr
    return run.json()


def test_the_schema_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize(("path", "profile"), list(product(EXAMPLE_FILES, PROFILES)),
                         ids=lambda v: v.stem if isinstance(v, Path) else v)
def test_compile_validates_on_every_example_and_profile(run_cli, path: Path, profile: str) -> None:
    outs = [_json(run_cli, "compile", str(path), "--profile", profile)]
    count = len(recorded_instructions(load_branch(path)))
    outs += [
        _json(run_cli, "compile", str(path), "--profile", profile, "--at", str(k))
        for k in range(1, count + 1)
    ]
    for out in outs:
        if out is None:
            assert path.stem == "broken"
            continue
        _valid(out)
        assert out["schema"] == "lionagi-turns/compile@1"
        assert out["version"] == __version__
        assert out["profile"] == profile
        assert isinstance(out["records"], int)


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_check_and_diff_validate_on_every_example(run_cli, path: Path) -> None:
    check = _json(run_cli, "check", str(path))
    diff = _json(run_cli, "diff", str(path))
    assert check is not None and diff is not None
    _valid(check)
    _valid(diff)
    assert (check["schema"], diff["schema"]) == ("lionagi-turns/check@1", "lionagi-turns/diff@1")
    assert check["records"] == diff["records"] == len(check["view_records"])


@pytest.mark.parametrize(("a", "b"), [(a, b) for a in EXAMPLE_FILES for b in EXAMPLE_FILES
                                      if "broken" not in (a.stem, b.stem)],
                         ids=lambda p: p.stem)
def test_branch_diff_validates_on_every_pair_of_examples(run_cli, a: Path, b: Path) -> None:
    out = _json(run_cli, "diff", str(a), str(b))
    assert out is not None
    _valid(out)
    assert out["schema"] == "lionagi-turns/branch-diff@1"
    assert out["identical"] is (a == b)


def test_the_same_field_has_one_type_in_every_shape(run_cli) -> None:
    path = str(EXAMPLES / "support.json")
    outs = [_json(run_cli, "compile", path, "--profile", p) for p in PROFILES]
    outs += [_json(run_cli, "check", path), _json(run_cli, "diff", path)]
    for out in outs:
        assert out is not None
        assert out["records"] == 5 and out["path"] == path
        assert out["view"] == "messages.progression"
    for out in outs[:3] + outs[4:]:
        assert set(out["sections"]) == {
            "system", "tools", "context_blocks", "guidance", "history", "current_turn", "total"
        }


def test_the_old_shapes_are_rejected(run_cli) -> None:
    """The schema is strict: the version-0 shapes (check's ``records`` a list, prompt-cache's
    segments in ``chars``, no ``schema``) do not validate."""
    path = str(EXAMPLES / "support.json")
    check = _json(run_cli, "check", path)
    cached = _json(run_cli, "compile", path, "--profile", "prompt-cache")
    assert check is not None and cached is not None
    old_check = {**check, "records": check["view_records"]}
    del old_check["view_records"]
    stable = {"blocks": 1, "chars": 181}
    old_cached = {**cached, "segments": {**cached["segments"], "stable": stable}}
    unnamed = {k: v for k, v in check.items() if k != "schema"}
    for out in (old_check, old_cached, unnamed):
        assert not VALIDATOR.is_valid(out)


# Options that change the JSON's shape, per command and profile: each adds or fills fields.
SHAPED: list[tuple[str, str, tuple[str, ...]]] = [
    ("compile", "amendment1", ("--ceiling", "100000")),
    ("compile", "amendment1", ("--ceiling", "600", "--low-water", "300")),
    ("compile", "amendment1", ("--ceiling", "250", "--clear-results", "0")),
    ("compile", "amendment1", ("--budget", "context=5", "--budget", "history=200")),
    ("compile", "amendment1", ("--ceiling", "100000", "--at", "1")),
    *[("compile", p, ("--context", "ticket=BL-7731 is open")) for p in PROFILES],
    *[("compile", p, ("--last", "1")) for p in PROFILES],
    ("diff", "default", ("--context", "ticket=BL-7731 is open")),
    ("diff", "default", ("--last", "1")),
]


def shaped_outputs(run_cli, path: Path) -> list[dict[str, Any]]:
    """The JSON of every shape-changing option in ``SHAPED`` on ``path`` (a run the compiler
    rejects or refuses is left out: it prints no JSON)."""
    outs = []
    for command, profile, options in SHAPED:
        args = [command, str(path), *options]
        if command == "compile":
            args += ["--profile", profile]
        run = run_cli(*args, "--format", "json")
        assert run.code in (0, 1), (args, run.stderr)
        if run.stdout:
            outs.append(run.json())
    return outs


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_every_shape_changing_option_validates(run_cli, path: Path) -> None:
    outs = shaped_outputs(run_cli, path)
    if path.stem != "broken":
        assert len(outs) == len(SHAPED)
        assert any("ceiling" in out for out in outs)
    for out in outs:
        _valid(out)
