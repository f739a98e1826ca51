"""A stage written from docs/architecture.md "How to write a stage" alone: it appends a fixed
reminder to the message the model answers, and records on the compiled instruction that it did.
``tests/stages/reminder_profile.py`` registers it as the profile ``reminder``."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from lionagi_turns.core.contracts import CompiledMessage
from lionagi_turns.core.plan import Plan
from lionagi_turns.core.stage import Stage

REMINDER = "Reminder: answer in one sentence."


@dataclass(frozen=True, slots=True)
class Reminder(Stage):
    text: str = REMINDER
    name: str = "reminder"

    def finish(self, plan: Plan) -> Plan:
        *head, last = plan.messages
        content = last.content
        added = f"{content}\n\n{self.text}" if isinstance(content, str) else [
            *content, {"type": "text", "text": self.text}]
        messages = (*head, CompiledMessage(last.role, added))
        assert plan.compiled is not None
        plan.compiled.instruction.metadata["example.reminded"] = True
        compiled = dataclasses.replace(plan.compiled, messages=messages)
        return plan._replace(messages=messages, compiled=compiled).with_slot(self.name, self.text)
