"""Issue #3 item 1: "Nothing changes until the user installs".

The autouse fixture in this package uninstalls before every test, so the other install tests
cannot see what a bare import does. Here a fresh interpreter imports every ``lionagi_turns``
module and checks that each call site ``install()`` would rebind is still lionagi's own function
(compared with the function object defined in lionagi's module, not with our replacement).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SCRIPT = r"""
import importlib, pkgutil
import lionagi.operations.chat._prepare as prep
import lionagi.operations.chat.chat as chat
import lionagi.operations.run.run as run
import lionagi.operations.parse.parse as parse
import lionagi.protocols.messages as messages
import lionagi.protocols.messages.prepare as msg_prepare

def sites():
    return {
        "chat._prepare_run_kwargs": chat._prepare_run_kwargs,
        "run._prepare_run_kwargs": run._prepare_run_kwargs,
        "chat._build_instruction": chat._build_instruction,
        "run._build_instruction": run._build_instruction,
        "messages.prepare_messages_for_chat": messages.prepare_messages_for_chat,
        "prepare.prepare_messages_for_chat": msg_prepare.prepare_messages_for_chat,
        "parse._try_propagate_structure": parse._try_propagate_structure,
    }

before = sites()
assert before["chat._prepare_run_kwargs"] is prep._prepare_run_kwargs
assert before["run._build_instruction"] is prep._build_instruction
origin = before["prepare.prepare_messages_for_chat"].__module__
assert origin == "lionagi.protocols.messages.prepare", origin

import lionagi_turns
for info in pkgutil.walk_packages(lionagi_turns.__path__, "lionagi_turns."):
    if info.name != "lionagi_turns.__main__":
        importlib.import_module(info.name)

after = sites()
changed = [name for name in before if after[name] is not before[name]]
assert not changed, changed
from lionagi_turns.integration import _install as integration
assert not integration.is_installed()
print("inert")
"""


def test_importing_every_module_rebinds_nothing(tmp_path: Path) -> None:
    env = {**os.environ, "LIONAGI_HOME": str(tmp_path / "home"), "LOG_AUTO_SAVE_ON_EXIT": "false"}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "inert"
