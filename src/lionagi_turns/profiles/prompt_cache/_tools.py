"""The tool section of the ADR-0127 stable segment: rendered as lionagi renders a tool set, and
read back from recorded stable blocks."""

from __future__ import annotations

from collections.abc import Sequence

from lionagi.operations.chat._prepare import _tool_name

from lionagi_turns.core.values import check_value, naming_record
from lionagi_turns.memo.yaml import minimal_yaml
from lionagi_turns.profiles.prompt_cache._sent import response_sections

__all__ = ("recorded_tool_section", "tool_section")


def tool_section(schemas: Sequence[object]) -> str:
    """The tool set as the stable segment shows it (lionagi's rendering), "" for none.

    Every schema first passes the value guard (``core.values.check_value``): a schema holding a
    value lionagi's YAML cannot represent, itself, a set (hash order: a stable segment that
    differs per process) or a lone surrogate is refused with a ValueError/TypeError naming the
    tool and the path inside its schema, before anything is rendered or sent."""
    if not schemas:
        return ""
    for index, schema in enumerate(schemas):
        name = _tool_name(schema) if isinstance(schema, dict) else None
        label = f"tool {name!r}" if name else f"tool #{index}"
        with naming_record(
            f"{label} of the Branch's tool set (branch.acts); register the tool with a schema "
            "of plain JSON data, or remove it"
        ):
            check_value(schema, f"{label} schema")
    return minimal_yaml({"Tools": list(schemas)}).strip()


def recorded_tool_section(blocks: Sequence[str] | None) -> str:
    """The tool section of recorded ``stable_blocks`` (the system text, then the tool section;
    either may be absent): their last block when it is exactly ``tool_section`` of the tool
    list it loads back to, else ``""``."""
    if not blocks:
        return ""
    candidate = blocks[-1]
    loaded = response_sections(candidate, keys=("Tools",))
    if loaded is None or tool_section(loaded["Tools"]) != candidate:
        return ""
    return candidate
