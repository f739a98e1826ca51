"""Measure ``lionagi-turns compile BRANCH --format html`` on a long branch: the page's size and
how long headless Chromium takes to render it.

Usage (in the project's virtualenv, with Debian's ``chromium`` installed)::

    python scripts/measure_html.py [--messages 10000] [--runs 5] [--png OUT.png] [-- OPTIONS...]

It builds a real lionagi ``Branch`` (a system message, then instruction / response pairs of
ordinary length, a few of them long), saves it with ``Branch.to_dict()`` to a temporary file,
runs the command line on it (any OPTIONS after ``--`` go to ``compile``), and prints the
page's size in bytes, the compile's wall time, and Chromium's render time for each run and
their median (each run a fresh headless Chromium taking a 1280x2000 screenshot of the page,
opened from disk, networking pointed at a closed port). The PNG of the last run is kept (by
default in the temporary directory).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def build_branch(messages: int, path: Path) -> None:
    """A branch of ``messages`` messages (one system, then pairs), saved as ``to_dict()``."""
    from lionagi import Branch

    branch = Branch(system="You are a careful assistant for a storage company.")
    for i in range((messages - 1) // 2):
        length = 40 if i % 97 else 400  # now and then a long message
        branch.msgs.add_message(instruction=f"question {i}: " + "why is it slow? " * (length // 4))
        branch.msgs.add_message(assistant_response=f"answer {i}: " + "check the index. " * 6)
    path.write_text(json.dumps(branch.to_dict()), encoding="utf-8")


def compile_page(branch: Path, page: Path, options: list[str]) -> float:
    env = {**os.environ, "LOG_AUTO_SAVE_ON_EXIT": "false"}
    env.setdefault("LIONAGI_HOME", tempfile.mkdtemp(prefix="lionagi-turns-measure-"))
    start = time.perf_counter()
    with page.open("wb") as out:
        done = subprocess.run(
            [sys.executable, "-m", "lionagi_turns", "compile", str(branch), "--format", "html",
             *options], stdout=out, stderr=subprocess.PIPE, env=env, check=False)
    if done.returncode != 0:
        raise SystemExit(f"compile exited {done.returncode}: {done.stderr.decode().strip()}")
    return time.perf_counter() - start


def render(chromium: str, page: Path, png: Path) -> float:
    """One headless Chromium screenshot of ``page``; its wall time in seconds."""
    profile = tempfile.mkdtemp(prefix="lionagi-turns-chromium-")
    start = time.perf_counter()
    done = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--proxy-server=127.0.0.1:9", f"--user-data-dir={profile}",
         "--window-size=1280,2000", f"--screenshot={png}", page.as_uri()],
        capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    shutil.rmtree(profile, ignore_errors=True)
    if done.returncode != 0 or not png.exists():
        raise SystemExit(f"chromium exited {done.returncode}: {done.stderr[-500:]}")
    return elapsed


def main() -> int:
    args = sys.argv[1:]
    options = args[args.index("--") + 1:] if "--" in args else []
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--png", type=Path,
                        default=Path(tempfile.gettempdir()) / "lionagi-turns-measure.png")
    known = parser.parse_args(args[: args.index("--")] if "--" in args else args)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("chromium is not installed (Debian: apt-get install chromium)")
    work = Path(tempfile.mkdtemp(prefix="lionagi-turns-measure-"))
    branch, page = work / "branch.json", work / "page.html"
    build_branch(known.messages, branch)
    seconds = compile_page(branch, page, options)
    print(f"branch: {known.messages:,} messages requested, {branch.stat().st_size:,} bytes saved")
    print(f"page: {page.stat().st_size:,} bytes ({page}); compile {seconds:.2f} s")
    times = [render(chromium, page, known.png) for _ in range(known.runs)]
    print("render (s): " + ", ".join(f"{t:.2f}" for t in times)
          + f"; median {statistics.median(times):.2f}")
    print(f"screenshot: {known.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
