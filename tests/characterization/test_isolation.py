"""The runtime never imports the characterization tooling (``lionagi_turns.characterize``).

Checked in a fresh interpreter, where nothing else can have imported it first: importing the
package, ``install()``, compiling a request and running the CLI's ``compile`` and ``check``
leave no ``lionagi_turns.characterize`` module in ``sys.modules``; ``diff`` is the one command
that needs it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROGRAM = """
import contextlib, io, sys
import lionagi_turns
from lionagi import Branch

def tooling():
    return sorted(m for m in sys.modules if m.startswith("lionagi_turns.characterize"))

lionagi_turns.install()
branch = Branch(system="Be brief.")
branch.msgs.add_message(instruction="Hi")
branch.msgs.add_message(assistant_response="Hello.")
request = lionagi_turns.TurnRequest(
    instruction=branch.msgs.create_instruction(instruction="Again?"),
    context_blocks=(lionagi_turns.ContextBlock("kb", "fact"),),
)
messages = lionagi_turns.to_provider_messages(lionagi_turns.compile_chat_request(branch, request))
assert len(messages) == 3, messages
lionagi_turns.uninstall()
assert tooling() == [], tooling()

from lionagi_turns.cli import main
for command in (["compile", sys.argv[1]], ["check", sys.argv[1]]):
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main(command)
        except SystemExit as exit:
            assert exit.code == 0, (command, exit.code)
assert tooling() == [], tooling()
with contextlib.redirect_stdout(io.StringIO()):
    try:
        main(["diff", sys.argv[1]])
    except SystemExit:
        pass
assert tooling(), "diff should have imported the registry"
print("ok")
"""


def test_runtime_and_cli_compile_never_import_characterize(repo_root: Path) -> None:
    example = repo_root / "examples" / "support.json"
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(example)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().endswith("ok")
