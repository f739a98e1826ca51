"""lionagi workflows, install off vs on: what reaches the model (issue 9). Not a timing benchmark.

Run from the repository root, in the project's virtualenv::

    python benchmarks/bench_workflows.py            # 5 model calls per workflow
    python benchmarks/bench_workflows.py --smoke    # 3 calls per workflow (CI)

Everything runs in this process against real transports: a local OpenAI-compatible HTTP server
and a fake ``claude`` CLI run as a subprocess (both from ``tests/e2e``). Each workflow runs once
with lionagi alone and once inside ``lionagi_turns.installed()``, through the drivers in
``tests/e2e/workflows.py`` (the ones the e2e tests assert on).

Printed:

- ReAct with ~5 KB of caller context: characters sent per call and in total, over HTTP (the
  POSTed messages) and on the CLI model (the prompt each spawned process received; rounds after
  the first resume the session);
- the host-side context fold's token estimate (``estimate_next_request_tokens`` at API_PRE_CALL)
  against the request that followed, per call and as mean relative error, for an ``operate``
  loop with two context providers and a tool call every round, and for the ReAct run;
- the same estimate, inside calls (at API_PRE_CALL) and outside them (before each round; for
  ReAct at API_POST_CALL, against the next request), for four tool-invoking ``operate`` rounds
  with a ~2.6 KB context provider and a ~1 KB tool result, and for ReAct with ~5.2 KB of caller
  context and ``max_extensions=3`` (``tests/e2e/budget_workflows.py``);
- ``token_budget.used`` after three ``operate(actions=True)`` rounds with a tool, against the
  last request sent.

Every token count uses the offline o200k_base encoding (``lionagi_turns.core.measure``): lionagi's
``estimate_payload_input_tokens`` for estimates, the installed budget and the sent bodies, and
lionagi's ``TokenCalculator.tokenize`` for its own budget.

Exit status 1 when any workflow fails, or the installed side sends more characters on some call,
estimates with a larger mean error, or reports a budget further from what was sent, than
lionagi alone.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("LOG_AUTO_SAVE_ON_EXIT", "false")


def _offline_tokenize() -> None:
    """lionagi's ``TokenCalculator.tokenize`` (its token budget, its context-provider budget)
    loads tiktoken's encoding, a download here: count with the bundled o200k_base instead."""
    from lionagi.service.token_calculator import TokenCalculator

    from lionagi_turns.core.measure import count_tokens

    def tokenize(s_: str | None = None, /, *args: Any, **kwargs: Any) -> int:
        return count_tokens(s_) if s_ else 0

    TokenCalculator.tokenize = staticmethod(tokenize)  # type: ignore[method-assign]


def _fake_cli(state: Path) -> Any:
    from e2e import conftest  # writes the fake `claude` executable and puts it on PATH
    from lionagi.providers.anthropic import claude_code

    fake = conftest.FakeClaude(log=state / "calls.jsonl", script_file=state / "script.json")
    fake.script()
    os.environ["FAKE_CLAUDE_LOG"] = str(fake.log)
    os.environ["FAKE_CLAUDE_SCRIPT"] = str(fake.script_file)
    claude_code.CLAUDE_CLI = str(conftest.FAKE_CLAUDE)
    claude_code.HAS_CLAUDE_CODE_CLI = True
    return fake


def _row(label: str, off: list[int], on: list[int]) -> str:
    return f"  {label:<5} {' '.join(f'{v:>7,}' for v in off):<48} -> " + " ".join(
        f"{v:>7,}" for v in on)


async def _measure(calls: int) -> bool:
    from e2e import workflows
    from e2e.http_server import ChatServer
    from lionagi import iModel

    import lionagi_turns

    ok = True
    with tempfile.TemporaryDirectory() as tmp, ChatServer() as server, workflows.offline_o200k():
        fake = _fake_cli(Path(tmp))

        def http_model() -> Any:
            return iModel(provider="openai", model="gpt-4.1-mini", api_key="x",
                          base_url=server.base_url, requires_tokens=False,
                          allow_local_network=True)

        def cli_model() -> Any:
            return iModel(provider="claude_code", model="sonnet")

        def sides() -> list[tuple[str, Any]]:
            return [("off", contextlib.nullcontext()), ("on", lionagi_turns.installed())]

        print(f"ReAct, {len(str(workflows.CONTEXT_DOC)):,} chars of caller context, "
              f"{calls} model calls: characters sent per call (install off -> on)")
        http: dict[str, list[int]] = {}
        cli: dict[str, list[int]] = {}
        for side, scope in sides():
            with scope:
                posted = await workflows.http_react_calls(server, http_model, calls)
                http[side] = [workflows.sent_chars(m) for m in posted]
                fake.log.unlink(missing_ok=True)
                spawned = await workflows.cli_react_prompts(fake, cli_model, calls)
                cli[side] = [len(c["prompt"]) for c in spawned]
        for label, got in (("HTTP", http), ("CLI", cli)):
            print(_row(label, got["off"], got["on"]))
            print(f"        total {sum(got['off']):,} -> {sum(got['on']):,} "
                  f"({sum(got['on']) / sum(got['off']):.2f}x)")
            ok &= all(a <= b for a, b in zip(got["on"], got["off"], strict=True))

        print("\nContext-fold estimate vs request sent, o200k tokens (install off -> on)")
        for name, driver in (("operate loop (2 providers, tool call per round)",
                              workflows.operate_loop_estimates),
                             ("ReAct", workflows.react_estimates)):
            runs: dict[str, Any] = {}
            for side, scope in sides():
                with scope:
                    runs[side] = await driver(server, http_model, calls)
            off, on = runs["off"], runs["on"]
            print(f"  {name}")
            print(_row("est", off.estimates, on.estimates))
            print(_row("sent", off.actual, on.actual))
            print(f"        mean error {workflows.mean_error(off):.1%} -> "
                  f"{workflows.mean_error(on):.1%}")
            ok &= workflows.mean_error(on) <= workflows.mean_error(off)
        ok &= await _issue_workflows(server, http_model, sides)
    return ok


async def _issue_workflows(
    server: Any, http_model: Any, sides: Callable[[], list[tuple[str, Any]]]
) -> bool:
    from e2e import budget_workflows, workflows

    ok = True
    print("\nContext-fold estimate inside calls (API_PRE_CALL) and outside them, o200k tokens "
          "(install off -> on)")
    for name, driver in (("operate x4, invoke_actions, ~2.6 KB provider, ~1 KB tool result",
                          budget_workflows.operate_tool_estimates),
                         ("ReAct, ~5.2 KB caller context, max_extensions=3",
                          budget_workflows.react_estimates)):
        runs: dict[str, Any] = {}
        for side, scope in sides():
            with scope:
                runs[side] = await driver(server, http_model)
        print(f"  {name}")
        for where in ("in_call", "outside"):
            off, on = getattr(runs["off"], where), getattr(runs["on"], where)
            print(f"  ({where.replace('_', ' ')})")
            print(_row("est", off.estimates, on.estimates))
            print(_row("sent", off.actual, on.actual))
            print(f"        mean error {workflows.mean_error(off):.1%} -> "
                  f"{workflows.mean_error(on):.1%}")
            ok &= workflows.mean_error(on) <= workflows.mean_error(off)
    budgets: dict[str, Any] = {}
    for side, scope in sides():
        with scope:
            budgets[side] = await budget_workflows.operate_budget(server, http_model)
    off_b, on_b = budgets["off"], budgets["on"]
    print("\ntoken_budget.used after 3 operate(actions=True) rounds with a tool, o200k tokens: "
          f"off {off_b.after:,}, on {on_b.after:,}; last request sent {on_b.sent[-1]:,}")
    ok &= abs(on_b.after - on_b.sent[-1]) <= abs(off_b.after - off_b.sent[-1])
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="3 calls per workflow")
    args = parser.parse_args(argv)
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")
    _offline_tokenize()
    try:
        ok = asyncio.run(_measure(3 if args.smoke else 5))
    except Exception as exc:
        print(f"workflow failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    if not ok:
        print("install on sent more or estimated worse than lionagi alone", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
