"""The 0.1 import paths are served by stub modules, with no process-wide import hook."""

from __future__ import annotations

import subprocess
import sys

from lionagi_turns import _moved


def test_no_import_hook_and_the_warning_names_the_importing_line() -> None:
    # A fresh interpreter: no old path already sits in sys.modules.
    code = (
        "import sys, warnings\n"
        "warnings.simplefilter('always')\n"
        "import lionagi_turns.compiler\n"
        "print(sorted(type(f).__module__ for f in sys.meta_path"
        " if type(f).__module__.startswith('lionagi_turns')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "[]"
    assert done.stderr.startswith("<string>:3: DeprecationWarning: lionagi_turns.compiler moved")


def test_serve_refuses_a_path_that_did_not_move() -> None:
    try:
        _moved.serve("lionagi_turns.no_such_module")
    except ValueError as exc:
        assert "lionagi_turns.no_such_module is not a moved 0.1 path" in str(exc)
    else:
        raise AssertionError("serve() accepted a path that did not move")
