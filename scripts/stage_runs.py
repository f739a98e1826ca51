"""Per request, under install(): how many times the pipeline ran, how many times the view was
selected, and how many of the package's modules ran code, for the default profile, Amendment 1
with a ceiling, the prompt-cache layout and Amendment 1 laid out for the cache (Anthropic
endpoint with prompt_caching=True). Local fake servers; nothing leaves the machine.

    python scripts/stage_runs.py          # the table
    python scripts/stage_runs.py --list   # and the modules each profile entered
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import warnings
from collections import Counter
from pathlib import Path
from types import FrameType

os.environ.setdefault("LOG_AUTO_SAVE_ON_EXIT", "false")
os.environ.setdefault("LIONAGI_HOME", tempfile.mkdtemp(prefix="stage-runs-"))
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from anthropic_server import AnthropicServer  # type: ignore[import-not-found]  # noqa: E402
from http_server import ChatServer  # type: ignore[import-not-found]  # noqa: E402
from lionagi import Branch, iModel  # noqa: E402

import lionagi_turns  # noqa: E402
from lionagi_turns import amendment1 as a1  # noqa: E402
from lionagi_turns.core import history, pipeline  # noqa: E402
from lionagi_turns.integration import _install  # noqa: E402

PACKAGE = str(Path(lionagi_turns.__file__).resolve().parent)
WATCHED = {pipeline.compile_traced.__code__: "pipeline runs",
           history.select_ids.__code__: "view selections"}


def measure(provider: str, caching: bool, **install: object) -> tuple[Counter[str], set[str]]:
    server = (ChatServer if provider == "openai" else AnthropicServer)()
    counts: Counter[str] = Counter()
    modules: set[str] = set()

    def hook(frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        code = frame.f_code
        if code in WATCHED:
            counts[WATCHED[code]] += 1
        if code.co_filename.startswith(PACKAGE):
            modules.add(code.co_filename)

    with server:
        name = "gpt-4.1-mini" if provider == "openai" else "claude-sonnet-4-5"
        extra = {"prompt_caching": True} if caching else {}
        model = iModel(provider=provider, model=name, api_key="x", base_url=server.base_url,
                       requires_tokens=False, allow_local_network=True, **extra)
        lionagi_turns.install(**install)  # type: ignore[arg-type]
        branch = Branch(system="Be brief.", chat_model=model)

        async def talk() -> None:
            await branch.communicate("warm up")  # imports and first-call work, not counted
            sys.setprofile(hook)
            try:
                await branch.communicate("the counted call")
            finally:
                sys.setprofile(None)

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            asyncio.run(talk())
        _install.uninstall()
    return counts, modules


def main() -> None:
    ceiling = a1.InputCeiling(50_000)
    rows = {
        "default": measure("openai", False),
        "amendment1, ceiling": measure("openai", False, profile="amendment1", ceiling=ceiling),
        "prompt-cache": measure("anthropic", True),
        "amendment1+prompt-cache": measure("anthropic", True, profile="amendment1",
                                           ceiling=ceiling),
    }
    print(f"{'profile':<26}{'pipeline runs':>15}{'view selections':>17}{'modules entered':>17}")
    for name, (counts, modules) in rows.items():
        print(f"{name:<26}{counts['pipeline runs']:>15}{counts['view selections']:>17}"
              f"{len(modules):>17}")
    if "--list" in sys.argv[1:]:
        for name, (_, modules) in rows.items():
            names = sorted(str(Path(m).relative_to(PACKAGE)) for m in modules)
            print(f"\n{name} ({len(names)}):\n  " + "\n  ".join(names))


if __name__ == "__main__":
    main()
