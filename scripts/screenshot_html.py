"""Render ``lionagi-turns compile BRANCH --format html`` in headless Chromium to a PNG.

Usage (in the project's virtualenv, with Debian's ``chromium`` installed)::

    python scripts/screenshot_html.py                      # examples/support.json
    python scripts/screenshot_html.py BRANCH.json OUT.png [-- COMPILE OPTIONS...]

The page is written to a temporary file next to the PNG and opened from disk (``file://``);
Chromium runs with networking pointed at a closed proxy, so a page that tried to load anything
would render without it. Every ``<details>`` element is opened first (a copy of the page with
the ``open`` attribute set), so the screenshot shows each message's text. Exits with
Chromium's status; prints the PNG's path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def page(branch: Path, options: list[str]) -> str:
    env = {**os.environ, "LOG_AUTO_SAVE_ON_EXIT": "false"}
    env.setdefault("LIONAGI_HOME", tempfile.mkdtemp(prefix="lionagi-turns-shot-"))
    done = subprocess.run(
        [sys.executable, "-m", "lionagi_turns", "compile", str(branch), "--format", "html",
         *options],
        capture_output=True, text=True, encoding="utf-8", env=env, check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"compile exited {done.returncode}: {done.stderr.strip()}")
    return done.stdout.replace('<details class="message"', '<details open class="message"')


def main() -> int:
    args = sys.argv[1:]
    options = args[args.index("--") + 1 :] if "--" in args else []
    args = args[: args.index("--")] if "--" in args else args
    branch = Path(args[0]) if args else REPO / "examples" / "support.json"
    out = Path(args[1] if len(args) > 1 else tempfile.gettempdir() + "/lionagi-turns-page.png")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("chromium is not installed (Debian: apt-get install chromium)")
    html_file = out.with_suffix(".html")
    html_file.write_text(page(branch, options), encoding="utf-8")
    profile = tempfile.mkdtemp(prefix="lionagi-turns-chromium-")
    done = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         "--proxy-server=127.0.0.1:9", f"--user-data-dir={profile}",
         "--window-size=1200,1800", f"--screenshot={out}", html_file.as_uri()],
        capture_output=True, text=True, check=False,
    )
    shutil.rmtree(profile, ignore_errors=True)
    if done.returncode != 0 or not out.exists():
        sys.stderr.write(done.stderr[-2000:])
        return done.returncode or 1
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
