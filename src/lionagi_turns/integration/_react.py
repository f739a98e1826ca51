"""ReAct's caller context, read from lionagi for the compiler (issue 9 item 1).

lionagi 0.36's ReAct sets ``lionagi.operations.chat._prepare._react_context`` to the caller's
context items while each of its later calls runs (and empties the list when the call returns).
The adapter reads it here and passes it to ``compile_chat_request(..., react_context=...)``
explicitly, so the compiler stays deterministic for its arguments (amended ADR-0007 D2 §2).
"""

from __future__ import annotations

__all__ = ("react_context_now",)


def react_context_now() -> list[object] | None:
    """The caller's ReAct context items as this task sees them, or None outside a later
    ReAct call (unset, or emptied because that call is over)."""
    from lionagi.operations.chat._prepare import _react_context

    items = _react_context.get()
    return list(items) if items else None
