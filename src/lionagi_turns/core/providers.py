"""ADR-0007 D4: provider-neutral messages to provider payloads, and the pre-invocation checks.

``to_provider_messages`` is the default service projection and the only one the call surfaces
use. ``check_image_hosts`` runs lionagi's own image-URL validator (which resolves hosts to
refuse private, loopback and link-local addresses) on every http(s) image part; it is the one
step of request preparation that does network I/O, so it runs at the adapter boundary, right
before invocation, never inside ``compile_chat_request``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping

from lionagi.protocols.messages import MessageRole
from lionagi.protocols.messages.validators import validate_image_url

from lionagi_turns.core.contracts import CompiledChatRequest
from lionagi_turns.core.parts import http_url
from lionagi_turns.core.values import JsonObject

__all__ = ("check_image_hosts", "to_provider_messages")


def to_provider_messages(compiled: CompiledChatRequest) -> list[dict[str, str | list[JsonObject]]]:
    """``[{"role": <str>, "content": <str | list>}]`` in compiled order; list content is
    deep-copied, so mutating the result never changes ``compiled`` (text is immutable and
    shared as it is)."""
    user, assistant = MessageRole.USER, MessageRole.ASSISTANT
    return [
        {
            "role": _USER
            if (role := m.role) is user
            else _ASSISTANT
            if role is assistant
            else str(role.value),
            "content": m.content if type(m.content) is str else copy.deepcopy(m.content),
        }
        for m in compiled.messages
    ]


# The texts of the two roles compiled messages carry, tested by identity first (members are
# singletons; an Enum's ``.value`` is a Python-level call).
_USER, _ASSISTANT = str(MessageRole.USER.value), str(MessageRole.ASSISTANT.value)


def check_image_hosts(messages: Iterable[Mapping[str, object]]) -> None:
    """Raise ValueError (naming the message index and URL) for an http(s) image whose host
    lionagi refuses; data URIs need no check. An ``image_url`` part without a URL string
    (``{"image_url": {"url": <str>}}``) is a TypeError: it cannot be checked, so it is not
    passed."""
    for index, message in enumerate(messages):
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            if not isinstance(part, Mapping) or part.get("type") != "image_url":
                continue
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, Mapping) else None
            if not isinstance(url, str):
                raise TypeError(
                    f"messages[{index}] has an image_url part whose URL is not a string "
                    f"(image_url is {type(image).__name__}); give it "
                    "{'image_url': {'url': <http(s) URL or data: URI>}}"
                )
            if _is_http(url):
                try:
                    validate_image_url(url)
                except ValueError as exc:
                    raise ValueError(
                        f"messages[{index}] image {url[:80]!r} refused before invocation: {exc} "
                        "Use a public https URL or send the image as a data: URI."
                    ) from exc


def _is_http(url: str) -> bool:
    """Whether ``url`` is an http(s) URL by ``core.parts.http_url``'s rule; one it refuses is still
    handed to lionagi's validator, which refuses it too."""
    try:
        return http_url(url) is not None
    except ValueError:
        return True
