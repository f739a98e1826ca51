"""Hostile image strings and image_detail values: compile does no I/O, ever; every string
lionagi's validator treats as an http(s) URL is treated as one (and sent as the form it
checked); strings lionagi would wrap into a garbage data URI are refused by name; history and
current instructions follow one rule."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from lionagi import Branch
from lionagi.protocols.messages import Instruction
from lionagi.protocols.messages.validators import validate_image_url

from lionagi_turns import TurnRequest, check_image_hosts, compile_chat_request
from lionagi_turns import to_provider_messages as provider_messages
from lionagi_turns.core.parts import http_url

from ._hostile import DNSAttempted, fingerprint, no_dns
from ._support import add_assistant, add_instruction, branch

PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+A8A"
    "AQUBAScY42YAAAAASUVORK5CYII="
)


_SLASH = "starts with '/' but is not base64 JPEG bytes (a path or scheme-relative URL)"


def _current(b: Branch, **kwargs: Any) -> Instruction:
    return b.msgs.create_instruction(instruction="now", **kwargs)


def _urls(content: Any) -> list[str]:
    return [p["image_url"]["url"] for p in content if p["type"] == "image_url"]


@pytest.mark.parametrize(
    "url",
    [
        "Https://example.com/a.png",
        "HTTP://example.com/a.png",
        " https://example.com/a.png",
        "\x01\x1f https://example.com/a.png",
    ],
    ids=["mixed-case", "upper-case", "leading-space", "leading-controls"],
)
def test_http_urls_lionagi_accepts_are_normalised_without_dns(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = "https://example.com/a.png" if "s:" in url.lower() else "http://example.com/a.png"
    b = branch()
    add_instruction(b, "old", images=[url])
    add_assistant(b, "seen")
    ins = _current(b, images=[url])
    before = fingerprint(b)
    with no_dns(monkeypatch):
        compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    assert _urls(compiled.messages[0].content) == [expected]
    assert _urls(compiled.messages[-1].content) == [expected]
    assert fingerprint(b) == before
    # the form sent is the form lionagi's validator checks for the string as written
    assert http_url(url) == expected


@pytest.mark.parametrize("url", ["Https://example.com/a.png", " https://example.com/a.png"])
def test_the_host_check_at_the_boundary_sees_mixed_case_and_padded_urls(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    messages = [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]
    with no_dns(monkeypatch), pytest.raises(DNSAttempted):
        check_image_hosts(messages)  # one http(s) rule: it goes to lionagi's validator


def test_check_image_hosts_refuses_a_private_host_written_with_a_mixed_case_scheme(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def resolve(host: str, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", 0))]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    messages = [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "HTTPS://in/x"}}]}
    ]
    with pytest.raises(ValueError) as info:
        check_image_hosts(messages)
    assert str(info.value).startswith("messages[0] image 'HTTPS://in/x' refused before invocation")


@pytest.mark.parametrize(
    "url", ["https://exa\tmple.com/a.png", "https://example.com/a\n.png", "ht\rtps://e.com/a"]
)
def test_an_http_url_the_parser_would_silently_change_is_refused(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = branch()
    ins = _current(b, images=[url])
    before = fingerprint(b)
    with no_dns(monkeypatch), pytest.raises(ValueError) as info:
        compile_chat_request(b, TurnRequest(instruction=ins))
    assert str(info.value) == (
        f"image URL {url!r} contains a tab or line break; URL parsers delete them, so the host "
        f"checked would not be the host written. Remove them. (current instruction, id {ins.id})"
    )
    assert fingerprint(b) == before


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("//host/x", _SLASH),
        ("/etc/passwd", _SLASH),
        ("../etc/passwd", "is not base64"),
        ("./a.png", "is not base64"),
        ("a.png", "is not base64"),
        ("", "is not base64"),
    ],
)
@pytest.mark.parametrize("where", ["history", "current"])
def test_strings_lionagi_would_wrap_into_a_garbage_data_uri_are_refused(
    url: str, why: str, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = branch()
    stored = add_instruction(b, "old", images=[url] if where == "history" else [PNG])
    add_assistant(b, "seen")
    ins = _current(b, images=[url] if where == "current" else [])
    record = (
        f"history position 0, instruction id {stored.id}"
        if where == "history"
        else f"current instruction, id {ins.id}"
    )
    before = fingerprint(b)
    with no_dns(monkeypatch), pytest.raises(ValueError) as info:
        compile_chat_request(b, TurnRequest(instruction=ins))
    assert str(info.value) == (
        f"image {url!r} {why}: lionagi would send it as data:image/jpeg;base64,<it>. Give an "
        "http(s) URL, a data:image/...;base64 URI or base64 image bytes. "
        f"({record})"
    )
    assert fingerprint(b) == before


def test_raw_base64_is_still_wrapped_as_lionagi_wraps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    b = branch()
    jpeg = "/9j/4AAQSkZJRgABAQ=="
    ins = _current(b, images=[jpeg, "QkFTRTY0"])
    with no_dns(monkeypatch):
        compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    assert compiled.messages[-1].content == ins.content.rendered  # lionagi: no http image
    assert _urls(compiled.messages[-1].content) == [
        f"data:image/jpeg;base64,{jpeg}",
        "data:image/jpeg;base64,QkFTRTY0",
    ]


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "FILE:///etc/passwd", " ftp://host/x", "gopher:x", "://x"]
)
def test_other_schemes_are_refused_by_lionagis_validator_before_any_lookup(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    b = branch()
    ins = _current(b, images=[url])
    with no_dns(monkeypatch), pytest.raises(ValueError) as info:
        compile_chat_request(b, TurnRequest(instruction=ins))
    with pytest.raises(ValueError) as lionagi:
        validate_image_url(url)
    assert str(info.value) == f"{lionagi.value} (current instruction, id {ins.id})"


def test_a_non_string_image_is_a_type_error() -> None:
    b = branch()
    ins = _current(b, images=["x"])
    list.__setitem__(ins.content.images, 0, 42)
    before = fingerprint(b)
    with pytest.raises(TypeError) as info:
        compile_chat_request(b, TurnRequest(instruction=ins))
    assert str(info.value).startswith("an image is a int, not a string")
    assert fingerprint(b) == before


# --------------------------------------------------------------------------- image_detail


@pytest.mark.parametrize("detail", ["ultra", "LOW", 3, ""])
def test_history_image_detail_outside_the_contract_is_refused_like_the_current_one(
    detail: Any,
) -> None:
    b = branch()
    stored = add_instruction(b, "old", images=[PNG])
    object.__setattr__(stored.content, "image_detail", detail)
    add_assistant(b, "seen")
    before = fingerprint(b)
    with pytest.raises(ValueError) as history:
        compile_chat_request(b, TurnRequest(instruction=_current(b)))
    assert str(history.value) == (
        f"image_detail must be one of ('low', 'high', 'auto') or None, got {detail!r} "
        f"(history position 0, instruction id {stored.id})"
    )
    assert fingerprint(b) == before

    c = branch()
    ins = _current(c, images=[PNG])
    object.__setattr__(ins.content, "image_detail", detail)
    with pytest.raises(ValueError) as current:
        compile_chat_request(c, TurnRequest(instruction=ins))
    assert str(current.value) == (
        f"image_detail must be one of ('low', 'high', 'auto') or None, got {detail!r} "
        f"(current instruction, id {ins.id})"
    )


@pytest.mark.parametrize("detail", ["low", "high", "auto", None])
def test_image_details_in_the_contract_render_as_lionagi_renders_them(detail: Any) -> None:
    b = branch()
    add_instruction(b, "old", images=[PNG], image_detail=detail)
    add_assistant(b, "seen")
    ins = _current(b, images=[PNG], image_detail=detail)
    compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    assert provider_messages(compiled)[-1]["content"] == ins.content.rendered
