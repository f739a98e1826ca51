"""Image content parts, built without I/O (ADR-0007 D2 step 5, D4).

Rules for one image string (history and current instructions alike):

- ``http_url(url)``: the URL lionagi's validator checks when ``url`` is an http(s) URL, else
  None. "Is an http(s) URL" means what ``urllib.parse.urlsplit`` (which lionagi's
  ``validate_image_url`` uses) says: the scheme compares case-insensitively and leading
  spaces/C0 controls are skipped, so ``"Https://h/x"`` and ``" https://h/x"`` are http(s) URLs.
  The returned form is the one that parser checked: leading spaces/controls removed, scheme in
  lower case (RFC 3986 §3.1). A URL holding a tab, CR or LF (the parser deletes them, so the
  host it checks is not the host written) is a ValueError.
- http(s) URLs get every check that needs no DNS (NUL bytes, a host); the SSRF host check
  (``validate_image_url``, which resolves the host) runs only in
  ``core.providers.check_image_hosts`` at the adapter boundary.
- ``data:`` URIs and other schemes go to lionagi's formatter (``_format_image_item``): data URIs
  are checked against lionagi's pattern; any other scheme is refused by lionagi's validator at
  its scheme check, before it would resolve anything.
- Anything else lionagi wraps as raw base64 into ``data:image/jpeg;base64,<it>``. It is refused
  (ValueError) unless that data URI passes lionagi's own data-URI pattern (so ``../etc/passwd``,
  ``a.png`` and text with spaces are refused), and a payload starting with ``/`` must start like
  base64 JPEG bytes (``/9j/``): no other image format's base64 starts with ``/``, so ``//host/x``
  (a scheme-relative URL) and ``/etc/passwd`` (a path) are refused.
- ``image_detail`` must be None or one of ``IMAGE_DETAILS`` (the durable contract's rule), for
  every instruction, images or not.
"""

from __future__ import annotations

from typing import cast
from urllib.parse import urlsplit

from lionagi.protocols.messages.instruction import _DATA_IMAGE_RE, InstructionContent

from lionagi_turns.core.values import JsonObject, shown

__all__ = ("IMAGE_DETAILS", "check_image_detail", "http_url", "image_part")

IMAGE_DETAILS = ("low", "high", "auto")

# What urlsplit skips before a scheme (WHATWG "C0 control or space") and deletes anywhere.
_LEADING = "".join(map(chr, range(0x21)))
_DELETED = ("\t", "\r", "\n")


def http_url(url: str) -> str | None:
    """``url`` as lionagi's validator sees it when that is an http(s) URL, else None (see the
    module rules). ValueError for an http(s) URL the parser would silently change or cannot
    parse."""
    try:
        scheme = urlsplit(url).scheme
    except ValueError as exc:
        if _looks_http(url):
            raise ValueError(f"malformed image URL {url[:80]!r}: {exc}") from exc
        return None
    if scheme not in ("http", "https"):
        return None
    if any(ch in url for ch in _DELETED):
        raise ValueError(
            f"image URL {url[:80]!r} contains a tab or line break; URL parsers delete them, so "
            "the host checked would not be the host written. Remove them."
        )
    stripped = url.lstrip(_LEADING)
    return scheme + stripped[len(scheme):]


def _looks_http(url: str) -> bool:
    return url.lstrip(_LEADING)[:8].lower().startswith(("http:", "https:"))


def check_image_detail(detail: object) -> None:
    """ValueError unless ``detail`` is None or one of ``IMAGE_DETAILS``."""
    if detail is not None and (not isinstance(detail, str) or detail not in IMAGE_DETAILS):
        raise ValueError(
            f"image_detail must be one of {IMAGE_DETAILS} or None, got {shown(detail)}"
        )


def image_part(url: object, detail: str | None) -> JsonObject:
    """One image as lionagi shapes it, with only the checks that need no network."""
    if not isinstance(url, str):
        raise TypeError(
            f"an image is a {type(url).__name__}, not a string; give an http(s) URL, a "
            "data:image/...;base64 URI or base64 image bytes"
        )
    if url.startswith("data:"):
        return _lionagi_part(url, detail)
    http = http_url(url)
    if http is not None:
        _check_http_url(http)
        return {"type": "image_url", "image_url": {"url": http, "detail": detail}}
    if "://" in url or (url.split(":")[0].isalpha() and ":" in url):
        # lionagi's validator refuses the scheme (not http/https) before any lookup.
        return _lionagi_part(url, detail)
    _check_raw_payload(url)
    return _lionagi_part(url, detail)


def _lionagi_part(url: str, detail: str | None) -> JsonObject:
    # lionagi annotates ``detail`` as str, yet passes its own None default (no detail) here
    part: JsonObject = InstructionContent._format_image_item(url, cast(str, detail))
    return part


def _check_http_url(url: str) -> None:
    if "\x00" in url or "%00" in url.lower():
        raise ValueError(f"image URL {url[:80]!r} contains a NUL byte; remove it")
    try:
        parsed = urlsplit(url)
        host = parsed.hostname
    except ValueError as exc:
        raise ValueError(f"malformed image URL {url[:80]!r}: {exc}") from exc
    if not parsed.netloc or not host:
        raise ValueError(f"image URL {url[:80]!r} has no host; give a full http(s) URL")


def _check_raw_payload(payload: str) -> None:
    looks_like = None
    if not _DATA_IMAGE_RE.match(f"data:image/jpeg;base64,{payload}"):
        looks_like = "is not base64"
    elif payload.startswith("/") and not payload.startswith("/9j/"):
        looks_like = "starts with '/' but is not base64 JPEG bytes (a path or scheme-relative URL)"
    if looks_like is not None:
        raise ValueError(
            f"image {payload[:80]!r} {looks_like}: lionagi would send it as "
            "data:image/jpeg;base64,<it>. Give an http(s) URL, a data:image/...;base64 URI or "
            "base64 image bytes."
        )
