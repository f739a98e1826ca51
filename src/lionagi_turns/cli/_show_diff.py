"""``lionagi-turns show CAPTURE.jsonl --call N --diff M``: how two captured calls' requests
differ, in ``diff A B``'s shape and view (``_branch_diff``).

Contract:

- ``other_call(spec, path, max_bytes)``: ``spec`` is ``M`` (call M of the same file) or
  ``FILE#M`` (call M of another capture file); returns its label and line. A spec that is
  neither exits 2 with one line; M out of range exits 2 naming the range (``_show.chosen``).
- ``calls_diff(a, b)`` is the ``lionagi-turns/branch-diff@1`` object of the two calls'
  messages as they were sent (``a`` and ``b`` are ``(label, line)``; ``path`` is the label,
  ``view`` is ``"captured"``, ``records`` the message count); ``identical`` when their messages
  are equal. The caller exits 1 when they differ, as ``diff A B`` does.
"""

from __future__ import annotations

from lionagi_turns.cli._branch_diff import Side, branch_diff_report
from lionagi_turns.cli._inputs import EXIT_BAD_INPUT, die
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._sections import measure
from lionagi_turns.cli._show import chosen, read_captures
from lionagi_turns.cli._turn import TurnSpec

__all__ = ("calls_diff", "other_call")

Labelled = tuple[str, JsonObject]


def other_call(spec: str, path: str, max_bytes: int) -> Labelled:
    """The call ``--diff`` names (see the module contract)."""
    file, _, number = spec.rpartition("#") if "#" in spec else (path, "#", spec)
    if not number.isdigit():
        die(EXIT_BAD_INPUT, f"bad option: --diff {spec!r} is not M or FILE#M (M a call number)")
    n = int(number)
    return f"{file}#{n}", chosen(read_captures(file, max_bytes), n, file)


def _side(label: str, line: JsonObject) -> Side:
    messages = line["messages"]
    measured = measure(messages, None, ())
    part = {
        "path": label,
        "view": "captured",
        "records": len(messages),
        "sections": measured.sections,
        "messages": messages,
    }
    return part, measured.messages


def _spec(line: JsonObject) -> TurnSpec:
    from lionagi import Branch

    current = Branch().msgs.create_instruction(instruction=f"captured call on {line['branch']}")
    return TurnSpec(current, None, (), False, None)


def calls_diff(a: Labelled, b: Labelled) -> JsonObject:
    """The diff of two captured calls (see the module contract)."""
    return branch_diff_report(_side(*a), _side(*b), _spec(b[1]))
