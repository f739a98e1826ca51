"""Which turn a ``compile`` shows: the next one, or an earlier one (``--at K``) rebuilt.

``--at K`` names the K-th recorded instruction: the instructions of the stored view, counted
from 1 in view order, whatever follows them. Its request is rebuilt from the records before it
(the compiler is a pure function of the history and the call, so everything durable is exact)
with that instruction as the current one. The call options a saved branch does not hold are
listed in ``not_recorded`` (``NOT_DURABLE``), unless a profile recorded them: under the
prompt-cache profile an instruction's ``SentRecord`` holds the text it was sent as and, on the
conversation's first call, its context blocks (``recorded``).

``turn_spec`` raises ``Fail`` (exit 2, one line naming the valid range) for an out-of-range K
and for ``--at`` with ``--instruction``.
"""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from lionagi.protocols.messages import Instruction

from lionagi_turns.cli._inputs import DEFAULT_INSTRUCTION, EXIT_BAD_INPUT, Fail
from lionagi_turns.cli._json import JsonObject
from lionagi_turns.cli._load import LoadedBranch
from lionagi_turns.core.contracts import ContextBlock
from lionagi_turns.profiles.prompt_cache._compile import recorded_tool_section
from lionagi_turns.profiles.prompt_cache._record import read_record
from lionagi_turns.profiles.prompt_cache._sent import response_sections

__all__ = ("NOT_DURABLE", "TurnSpec", "recorded_instructions", "recorded_tools", "turn_spec")

# The call options of a turn that no record of lionagi 0.36 keeps.
NOT_DURABLE = ("tool_schemas", "response_format", "context_blocks")


@dataclass(frozen=True, slots=True)
class TurnSpec:
    """The current instruction, the history it follows (None: the branch's view) and the
    context blocks; ``at`` is the JSON ``at`` object (None for the next turn)."""

    instruction: Instruction
    progression: tuple[UUID, ...] | None
    blocks: tuple[ContextBlock, ...]
    placeholder: bool
    at: JsonObject | None

    @property
    def text(self) -> str:
        return str(self.instruction.content.instruction)


def recorded_instructions(loaded: LoadedBranch) -> list[tuple[int, Instruction]]:
    """``(view position, instruction)`` of every instruction in the stored view, in order."""
    pile: dict[UUID, object] = loaded.branch.msgs.messages.collections  # type: ignore[has-type]
    out = []
    for position, uid in enumerate(loaded.view):
        message = pile.get(uid)
        if isinstance(message, Instruction):
            out.append((position, message))
    return out


def turn_spec(
    loaded: LoadedBranch,
    instruction: str | None,
    blocks: tuple[ContextBlock, ...],
    at: int | None,
    profile: str,
) -> TurnSpec:
    """The turn to compile (module docstring)."""
    branch = loaded.branch
    if at is None:
        text = DEFAULT_INSTRUCTION if instruction is None else instruction
        current = branch.msgs.create_instruction(instruction=text)
        return TurnSpec(current, None, blocks, instruction is None, None)
    if instruction is not None:
        raise Fail(
            EXIT_BAD_INPUT,
            "bad option: --at rebuilds a recorded instruction; drop --instruction",
        )
    found = recorded_instructions(loaded)
    if not 1 <= at <= len(found):
        valid = f"1..{len(found)}" if found else "none: it records no instruction"
        raise Fail(
            EXIT_BAD_INPUT,
            f"bad option: --at {at} is out of range for {loaded.path}: the view records "
            f"{len(found)} instruction(s) (valid: {valid})",
        )
    position, stored = found[at - 1]
    record = read_record(stored) if "prompt-cache" in profile.split("+") else None
    recorded: list[str] = []
    if record is not None:
        if record.text is not None:  # None: the stored text was not a text (ignored)
            recorded.append("sent_text")
        if record.blocks is not None and not blocks:
            blocks = record.blocks
            recorded.append("context_blocks")
    info: JsonObject = {
        "instruction": at,
        "of": len(found),
        "position": position,
        "id": str(stored.id),
        "recorded": recorded,
        "not_recorded": [name for name in NOT_DURABLE if name not in recorded],
        "sent_text": None if record is None else record.text,
        "sent_text_matches": None,
    }
    return TurnSpec(stored, tuple(loaded.view[:position]), blocks, False, info)


def recorded_tools(loaded: LoadedBranch, at: int | None) -> list[JsonObject] | None:
    """The tool list of the stable segment last recorded at or before instruction ``at``
    (None: the view's last; a record holds the stable segment when it changed)."""
    found = recorded_instructions(loaded)
    upto = found if at is None else found[:at]
    blocks = next((r.stable_blocks for _, m in reversed(upto)
                   if (r := read_record(m)) is not None and r.stable_blocks), None)
    section = recorded_tool_section(blocks)
    tools = response_sections(section, keys=("Tools",)) if section else None
    return None if tools is None else [t for t in tools["Tools"] if isinstance(t, dict)]
