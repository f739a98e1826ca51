"""Send lionagi-turns spans to a real OTLP receiver (Arize Phoenix) on 127.0.0.1, and print
the spans it stored.

    python scripts/otlp_receiver.py [--venv DIR] [--port 6006] [--screenshot OUT.png]

Creates (or reuses) a separate virtual environment (default ``/tmp/lionagi-turns-otlp``),
installs ``arize-phoenix``,
``opentelemetry-exporter-otlp-proto-http`` and this checkout into it from the package index,
starts ``phoenix serve`` bound to 127.0.0.1, runs two installed lionagi calls against the
test suite's fake OpenAI-style server (``tests/e2e/http_server.py``, also on 127.0.0.1) with
``install(otel=True)`` and an OTLP/HTTP exporter pointed at Phoenix, then reads the spans back
through Phoenix's client and prints their names and ``gen_ai.*`` / ``lionagi_turns.*``
attributes. With ``--screenshot``, headless Chromium (Debian's ``chromium``) saves Phoenix's
own page of the project's traces, and of the first span's attributes, as PNGs. Nothing
listens on or connects to any address but 127.0.0.1. The test suite does not use this script.
"""

from __future__ import annotations

import argparse
import base64
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TRACED = r'''
import asyncio, os, sys
os.environ["LOG_AUTO_SAVE_ON_EXIT"] = "false"
sys.path.insert(0, sys.argv[1])
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from lionagi import Branch, iModel
import lionagi_turns
from tests.e2e.http_server import ChatServer

provider = TracerProvider(resource=Resource.create({"service.name": "lionagi-turns-demo"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=sys.argv[2])))
trace.set_tracer_provider(provider)
lionagi_turns.install(otel=True)
with ChatServer() as server:
    server.script("Paris.", "About 2.1 million.")
    model = iModel(provider="openai", model="gpt-4.1-mini", api_key="demo",
                   base_url=server.base_url, requires_tokens=False, allow_local_network=True)
    branch = Branch(system="Answer in one sentence.", chat_model=model)
    asyncio.run(branch.communicate("Capital of France?"))
    asyncio.run(branch.communicate("Its population?"))
provider.force_flush()
print("sent 2 traced calls")
'''

READ = r'''
import sys
from phoenix.client import Client
spans = Client(base_url=sys.argv[1]).spans.get_spans(project_identifier="default")
if not spans:
    print("Phoenix stored no span"); sys.exit(1)
print(f"Phoenix stored {len(spans)} span(s)")
for span in spans:
    trace_id = (span.get("context") or {}).get("trace_id")
    print("-", span["name"], span.get("span_kind"), span.get("status_code"), "trace", trace_id)
    attrs = span.get("attributes") or {}
    for key in sorted(k for k in attrs if k.startswith(("gen_ai.", "lionagi_turns."))):
        print(f"    {key} = {attrs[key]}")
'''


def _run(cmd: list[str], **kw: object) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)  # type: ignore[call-overload]


def _wait(url: str, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            time.sleep(1)
    raise SystemExit(f"Phoenix did not answer at {url} within {seconds:.0f}s")


def _screenshot(url: str, out: Path) -> None:
    """Phoenix's page at ``url`` as a PNG at ``out`` (its script given 20 s to render)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit("--screenshot needs chromium (Debian: apt-get install chromium)")
    profile = tempfile.mkdtemp(prefix="otlp-receiver-chromium-")
    try:
        _run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
              "--proxy-server=127.0.0.1:9", f"--user-data-dir={profile}",
              "--virtual-time-budget=20000", "--window-size=1600,1000",
              f"--screenshot={out}", url], capture_output=True)
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    print(f"saved {out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--venv", default="/tmp/lionagi-turns-otlp")
    parser.add_argument("--port", type=int, default=6006)
    parser.add_argument("--screenshot", type=Path, help="save Phoenix's traces page as this PNG")
    args = parser.parse_args()
    venv = Path(args.venv)
    python = venv / "bin" / "python"
    if not python.exists():
        _run([sys.executable, "-m", "venv", str(venv)])
    _run([str(python), "-m", "pip", "install", "-q", "arize-phoenix",
          "opentelemetry-exporter-otlp-proto-http", "-e", f"{ROOT}[otel]"])
    base = f"http://127.0.0.1:{args.port}"
    env = {**os.environ, "PHOENIX_HOST": "127.0.0.1", "PHOENIX_PORT": str(args.port),
           "PHOENIX_WORKING_DIR": tempfile.mkdtemp(prefix="phoenix-data-"),
           "PHOENIX_TELEMETRY_ENABLED": "false",
           "PHOENIX_GRPC_PORT": str(args.port + 1)}
    server = subprocess.Popen([str(python), "-m", "phoenix.server.main", "serve"], env=env)
    try:
        _wait(base, 180)
        _run([str(python), "-c", TRACED, str(ROOT), f"{base}/v1/traces"], cwd=venv)
        time.sleep(3)
        read = subprocess.run([str(python), "-c", READ, base], check=True, text=True,
                              capture_output=True)
        print(read.stdout, end="")
        if args.screenshot is not None:
            project = base64.b64encode(b"Project:1").decode()  # the default project's id
            _screenshot(f"{base}/projects/{project}", args.screenshot)
            traces = [line.split(" trace ")[-1] for line in read.stdout.splitlines()
                      if " trace " in line]
            if traces:  # Phoenix's page of one trace, its span's attributes shown
                _screenshot(f"{base}/projects/{project}/traces/{traces[0]}",
                            args.screenshot.with_name(args.screenshot.stem + "-trace.png"))
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
