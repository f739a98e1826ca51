"""lionagi-turns: ADR-0007's canonical turn-request compiler for lionagi 0.36.

The public API is exactly ``__all__`` (pinned by ``tests/unit/test_public_api.py``); every
module whose name starts with ``_`` is internal. Layout: ``docs/architecture.md``.

With a lionagi other than 0.36.x the package still imports: ``IntegrationError`` and
``__version__`` are there, ``install()`` and its siblings raise ``IntegrationError`` naming the
installed and the supported versions, and every other public name raises it on access
(``core.support``); nothing reaches lionagi's internals.
"""

from typing import TYPE_CHECKING

from lionagi_turns.core.support import IntegrationError, unsupported_lionagi, unsupported_module
from lionagi_turns.core.version import __version__ as __version__

if TYPE_CHECKING or unsupported_lionagi() is None:
    from lionagi_turns.core.contracts import (
        CompiledChatRequest,
        CompiledMessage,
        ContextBlock,
        TurnRequest,
    )
    from lionagi_turns.core.contracts import register_html_view as _register_html_view
    from lionagi_turns.core.durable import DurableInstructionContent, durable_instruction
    from lionagi_turns.core.envelope import decode_context_section, encode_context_section
    from lionagi_turns.core.history import HistoryError, UnknownMessageTypeError
    from lionagi_turns.core.pipeline import compile_chat_request
    from lionagi_turns.core.providers import check_image_hosts, to_provider_messages
    from lionagi_turns.integration import (
        CallRecord,
        TurnsCompatibilityWarning,
        capture,
        install,
        installed,
        is_installed,
        last_request,
        mark_unanswered_turns,
        uninstall,
    )
    from lionagi_turns.integration._prepare_compat import prepare_messages_for_chat
    from lionagi_turns.memo.switch import no_fast_path
    from lionagi_turns.profiles.prompt_cache._account import (
        PromptCacheAccount,
        PromptCacheCall,
        prompt_cache_account,
    )

    def _html_view(request: CompiledChatRequest) -> str:
        from lionagi_turns.cli._html import compiled_body  # the view loads only when shown

        return compiled_body(request)

    _register_html_view(_html_view)

__all__ = (
    "CallRecord",
    "CompiledChatRequest",
    "CompiledMessage",
    "ContextBlock",
    "DurableInstructionContent",
    "HistoryError",
    "IntegrationError",
    "PromptCacheAccount",
    "PromptCacheCall",
    "TurnRequest",
    "TurnsCompatibilityWarning",
    "UnknownMessageTypeError",
    "capture",
    "check_image_hosts",
    "compile_chat_request",
    "decode_context_section",
    "durable_instruction",
    "encode_context_section",
    "install",
    "installed",
    "is_installed",
    "last_request",
    "mark_unanswered_turns",
    "no_fast_path",
    "prepare_messages_for_chat",
    "prompt_cache_account",
    "to_provider_messages",
    "uninstall",
)

_INTEGRATION = ("install", "installed", "is_installed", "uninstall")

if not TYPE_CHECKING and unsupported_lionagi() is not None:
    __getattr__ = unsupported_module(unsupported_lionagi(), __all__, _INTEGRATION)
