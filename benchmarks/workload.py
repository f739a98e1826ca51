"""The benchmark's realistic branch: what an agent's history looks like after many turns.

Every turn records, through lionagi's own APIs: an instruction with a dict context and a
guidance string, an action request/response pair on every other turn, and an assistant
response. The branch has a system message. Texts vary per turn (multi-line, punctuation,
accented letters, an em dash) so no two renderings are alike.
"""

from __future__ import annotations

from lionagi import Branch
from lionagi.protocols.messages import Instruction

__all__ = ("SYSTEM", "append_turn", "build_branch", "next_instruction")

SYSTEM = (
    "You are a careful research assistant.\n"
    "Rules:\n- cite the documents you use\n- answer in at most five sentences"
)


def _context(i: int) -> list[object]:
    return [
        {
            "document": f"report-{i:05d}.md",
            "section": f"§{i % 7 + 1} Findings — draft",
            "excerpt": f"Quarter {i % 4 + 1} revenue grew {i % 13}%.\nCosts were flat.",
            "tags": ["finance", f"q{i % 4 + 1}", "résumé"],
            "score": round(0.5 + (i % 10) / 20, 2),
            "reviewed": i % 3 == 0,
        }
    ]


def next_instruction(branch: Branch, i: int) -> Instruction:
    """The instruction of turn ``i`` (not recorded)."""
    return branch.msgs.create_instruction(
        instruction=f"Step {i}: summarise the findings of report {i} for the board.",
        context=_context(i),
        guidance="Be concise; quote figures exactly.",
        sender="user",
        recipient=branch.id,
    )


def append_turn(branch: Branch, instruction: Instruction, i: int) -> int:
    """Record ``instruction`` as turn ``i`` (with its tool call on odd turns) and the assistant's
    answer; returns the number of messages recorded."""
    msgs = branch.msgs
    msgs.add_message(instruction=instruction)
    added = 1
    if i % 2 == 1:
        request = msgs.add_message(
            action_function="search_reports",
            action_arguments={"query": f"report {i} revenue", "limit": 3},
            sender=branch.id,
            recipient="tools",
        )
        msgs.add_message(
            action_request=request,
            action_output={
                "hits": [
                    {"id": f"report-{i:05d}", "score": 0.91},
                    {"id": f"memo-{i}", "score": 0.4},
                ],
                "total": 2,
            },
            sender="tools",
            recipient=branch.id,
        )
        added += 2
    msgs.add_message(
        assistant_response=(
            f"Report {i}: revenue grew {i % 13}% in Q{i % 4 + 1}.\n"
            "Costs were flat, so margin improved."
        ),
        sender=branch.id,
        recipient="user",
    )
    return added + 1


def build_branch(n_messages: int) -> Branch:
    """A branch with a system message and at least ``n_messages`` history messages (whole turns;
    the system message counts)."""
    branch = Branch(system=SYSTEM)
    count, i = 1, 0
    while count < n_messages:
        count += append_turn(branch, next_instruction(branch, i), i)
        i += 1
    return branch


def turns_recorded(branch: Branch) -> int:
    """How many instructions the branch holds (the index of the next turn)."""
    return sum(1 for m in branch.msgs.messages if isinstance(m, Instruction))
