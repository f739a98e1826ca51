"""The CLI shows a branch in the layout it was sent in: a 40-round tool loop under
``install(profile="amendment1", ceiling=...)`` on lionagi's Anthropic adapter with
``prompt_caching=True`` (the fake Messages server over HTTP), saved, then every recorded
request rebuilt with ``compile --at K --format json``: equal to the body the server received
for call K (system blocks and cache marks included), its ceiling figures equal to call K's
``lionagi_turns.ceiling`` record."""

import asyncio
import io
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from lionagi import Branch

import lionagi_turns
from lionagi_turns.amendment1 import CEILING_KEY, InputCeiling
from lionagi_turns.cli import main
from lionagi_turns.integration._registry import compositions

from .anthropic_server import AnthropicServer
from .test_bounded_cache import SYSTEM, check_stock, model, rounds, step

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("offline_tokens")]

ROUNDS = 40
CEILING, LOW_WATER = 6000, 3600


def cli(monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[int, str]:
    out = io.StringIO()
    with monkeypatch.context() as mp:
        mp.setenv("COLUMNS", "100")
        mp.setenv("NO_COLOR", "1")
        mp.setattr(sys, "stdout", out)
        try:
            main(list(args))
            code: Any = 0
        except SystemExit as exc:
            code = exc.code
    return int(code or 0), out.getvalue()


@pytest.fixture(scope="module")
def played(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, list[dict[str, Any]], list[Any]]:
    lionagi_turns.uninstall()
    with AnthropicServer() as server:
        server.script(*(step(i) for i in range(ROUNDS)))
        lionagi_turns.install(profile="amendment1",
                              ceiling=InputCeiling(CEILING, low_water=LOW_WATER))
        try:
            branch = Branch(system=SYSTEM, chat_model=model(server), tools=[check_stock])
            asyncio.run(rounds(branch, 0, ROUNDS))
        finally:
            lionagi_turns.uninstall()
        bodies = server.bodies()
    path = tmp_path_factory.mktemp("composed") / "saved.json"
    path.write_text(json.dumps(branch.to_dict(mode="json"), default=str), encoding="utf-8")
    records = [m.metadata[CEILING_KEY] for m in branch.messages
               if type(m).__name__ == "Instruction"]
    return path, bodies, records


@pytest.mark.slow  # the 40-round loop and 40 compiles: ~7 s on 2 cores
def test_every_recorded_request_is_rebuilt_as_sent_with_its_ceiling_record(
    played: tuple[Path, list[dict[str, Any]], list[Any]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    path, bodies, records = played
    assert len(bodies) == len(records) == ROUNDS
    assert sum(r["stepped"] for r in records) >= 5  # drop steps happened
    for k in range(1, ROUNDS + 1):
        code, out = cli(monkeypatch, "compile", str(path), "--profile", "amendment1",
                        "--ceiling", str(CEILING), "--low-water", str(LOW_WATER),
                        "--at", str(k), "--format", "json")
        assert code == 0, (k, out)
        report = json.loads(out)
        sent = bodies[k - 1]
        assert report["profile"] == "amendment1+prompt-cache"
        assert report["system"] == sent["system"], k
        assert report["messages"] == sent["messages"], k
        stored = dict(records[k - 1])  # the provider's count is written once the call settled
        assert stored.pop("reported")["input"] > 0, k
        assert report["ceiling"] == stored, k
        assert report["at"]["sent_text_matches"] is True


def test_the_composition_is_selectable_and_listed_from_the_registry(
    played: tuple[Path, list[dict[str, Any]], list[Any]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    path, bodies, _ = played
    assert "amendment1+prompt-cache" in compositions()
    code, out = cli(monkeypatch, "compile", str(path), "--profile", "amendment1+prompt-cache",
                    "--ceiling", str(CEILING), "--at", "3")
    assert code == 0, out
    assert "--profile amendment1+prompt-cache" in out
    assert f"Input ceiling {CEILING:,}" in out
    code, out = cli(monkeypatch, "compile", str(path), "--profile", "amendment1+prompt-cache",
                    "--at", "1", "--format", "json")
    report = json.loads(out)
    assert report["messages"] == bodies[0]["messages"]  # the first call: nothing to bound
    schema = json.loads(resources.files("lionagi_turns.cli").joinpath(
        "schema/lionagi-turns.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(report)
