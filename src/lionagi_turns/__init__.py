"""lionagi-turns: ADR-0007's canonical turn-request compiler for lionagi 0.36."""

from .compiler import compile_chat_request
from .durable import DurableInstructionContent, durable_instruction
from .envelope import decode_context_section, encode_context_section
from .history import HistoryError, UnknownMessageTypeError
from .integration import install, installed, uninstall
from .prepare_compat import prepare_messages_for_chat
from .providers import check_image_hosts, to_provider_messages
from .types import CompiledChatRequest, CompiledMessage, ContextBlock, TurnRequest

__all__ = (
    "CompiledChatRequest",
    "CompiledMessage",
    "ContextBlock",
    "DurableInstructionContent",
    "HistoryError",
    "TurnRequest",
    "UnknownMessageTypeError",
    "check_image_hosts",
    "compile_chat_request",
    "decode_context_section",
    "durable_instruction",
    "encode_context_section",
    "install",
    "installed",
    "prepare_messages_for_chat",
    "to_provider_messages",
    "uninstall",
)

__version__ = "0.1.0"
