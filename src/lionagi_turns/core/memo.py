"""The text primitives a compile may take from a memo, and which memo is active.

Contract:

- ``TextMemo`` is what the core's renderers (``render``, ``fold``, ``react``, ``durable``) ask
  of a memo: each answer equals lionagi's own (``PLAIN_TEXT``'s) byte for byte; a memo may
  only answer faster.
- ``active()`` is the memo of the running compile (``using``), else the one the registered
  chooser picks for this call, else ``PLAIN_TEXT``. The core never imports ``memo/``: the fast
  path registers its chooser (``install_chooser``) when it is imported, and the chooser is
  the one place the fast-path switch is read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Protocol

import yaml
from lionagi.libs.schema import minimal_yaml as _lionagi_yaml
from lionagi.protocols.messages.instruction import InstructionContent

__all__ = (
    "PLAIN_TEXT",
    "PlainText",
    "TextMemo",
    "active",
    "install_chooser",
    "section_doc",
    "using",
)


class TextMemo(Protocol):
    """Byte-identical text primitives (module contract)."""

    def yaml(self, value: object) -> str:
        """Exactly lionagi's ``minimal_yaml(value)``."""
        ...

    def instruction_text(self, content: InstructionContent) -> str:
        """Exactly ``content._format_text_content()``."""
        ...

    def safe_load(self, text: str) -> object:
        """What PyYAML's ``SafeLoader`` loads from ``text`` (raises ``yaml.YAMLError`` as it)."""
        ...

    def shallow_durable(self, content: InstructionContent) -> bool:
        """Whether InstructionContent's constructor alone copies ``content``'s values deeply
        (every container one of lionagi's tracked ones); False is always safe."""
        ...


class PlainText:
    """lionagi's renderer and PyYAML's safe loader, every time."""

    __slots__ = ()

    def yaml(self, value: object) -> str:
        return _lionagi_yaml.minimal_yaml(value)

    def instruction_text(self, content: InstructionContent) -> str:
        return content._format_text_content()

    def safe_load(self, text: str) -> object:
        return yaml.load(text, Loader=yaml.SafeLoader)

    def shallow_durable(self, content: InstructionContent) -> bool:
        return False


PLAIN_TEXT = PlainText()

_running: ContextVar[TextMemo | None] = ContextVar("lionagi_turns_memo", default=None)
_choosers: list[Callable[[], TextMemo]] = []


def install_chooser(chooser: Callable[[], TextMemo]) -> None:
    """Make ``chooser`` pick the memo outside a running compile (the last one installed wins)."""
    _choosers.append(chooser)


def active() -> TextMemo:
    """The running compile's memo, else the chooser's pick, else ``PLAIN_TEXT``."""
    memo = _running.get()
    if memo is not None:
        return memo
    return _choosers[-1]() if _choosers else PLAIN_TEXT


@contextmanager
def using(memo: TextMemo) -> Iterator[None]:
    """Make ``memo`` the active one for code run inside this block (this context only)."""
    token = _running.set(memo)
    try:
        yield
    finally:
        _running.reset(token)


def section_doc(
    guidance: object, instruction: object, context: object, tools: object
) -> dict[str, object]:
    """lionagi's section document of an instruction without a response format: Guidance,
    Instruction, Context, Tools in that order, the empty ones (lionagi's test) left out."""
    sections: dict[str, object] = {
        "Guidance": guidance,
        "Instruction": instruction,
        "Context": context,
        "Tools": tools,
    }
    return {k: v for k, v in sections.items() if v not in (None, "", [], {})}
