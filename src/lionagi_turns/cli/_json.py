"""The JSON data the commands read and print: ``JsonObject`` is one JSON object (a report, a
section, a provider message, a stored record) as ``json`` loads it and ``print_json`` writes
it; its values are JSON values, of any shape the schema in ``cli/schema/`` allows."""

from __future__ import annotations

from typing import Any

__all__ = ("JsonObject",)

JsonObject = dict[str, Any]
