"""ADR-0007 D4: provider translation after neutral compilation; compile does no I/O."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from lionagi.protocols.messages import MessageRole

from lionagi_turns import (
    CompiledChatRequest,
    TurnRequest,
    check_image_hosts,
    compile_chat_request,
    to_provider_messages,
)

from ._support import add_assistant, add_instruction, assert_same_state, branch, branch_state


def _compiled(images: list[str] | None = None) -> CompiledChatRequest:
    b = branch("policy")
    add_instruction(b, "q")
    add_assistant(b, "a")
    ins = b.msgs.create_instruction(instruction="now", images=images)
    return compile_chat_request(b, TurnRequest(instruction=ins))


def test_default_projection_is_role_value_and_content_in_order() -> None:
    compiled = _compiled()
    projected = to_provider_messages(compiled)
    assert projected == [{"role": m.role.value, "content": m.content} for m in compiled.messages]
    assert [p["role"] for p in projected] == ["user", "assistant", "user"]
    assert all(set(p) == {"role", "content"} for p in projected)


def test_projected_role_is_a_plain_str_not_the_enum() -> None:
    for message in to_provider_messages(_compiled()):
        assert type(message["role"]) is str
        assert not isinstance(message["role"], MessageRole)


def test_mutating_projected_messages_does_not_change_the_compiled_request() -> None:
    compiled = _compiled(images=["data:image/png;base64,AAAA"])
    before = [(m.role, m.content) for m in compiled.messages]
    projected = to_provider_messages(compiled)
    projected[-1]["content"][0]["text"] = "tampered"
    projected[-1]["content"].append({"type": "text", "text": "extra"})
    assert [(m.role, m.content) for m in compiled.messages] == before
    assert to_provider_messages(compiled)[-1]["content"][0]["text"] != "tampered"


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every DNS lookup or connection attempt fails loudly and is recorded."""
    calls: list[tuple[Any, ...]] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        raise AssertionError(f"network access during compile: {args!r}")

    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    monkeypatch.setattr(socket, "gethostbyname", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    return calls


def test_compile_with_http_images_does_no_dns(no_network: list[tuple[Any, ...]]) -> None:
    b = branch("policy")
    add_instruction(b, "look", images=["https://images.example.com/old.png"])
    add_assistant(b, "seen")
    ins = b.msgs.create_instruction(
        instruction="now", images=["http://cdn.example.org/a.png", "https://10.0.0.1/b.png"]
    )
    compiled = compile_chat_request(b, TurnRequest(instruction=ins))
    projected = to_provider_messages(compiled)
    assert no_network == []
    assert projected[0]["content"][1]["image_url"]["url"] == "https://images.example.com/old.png"
    assert [p["image_url"]["url"] for p in projected[-1]["content"][1:]] == [
        "http://cdn.example.org/a.png",
        "https://10.0.0.1/b.png",
    ]


def test_check_image_hosts_refuses_a_private_host_naming_message_and_url() -> None:
    projected = to_provider_messages(_compiled(images=["http://127.0.0.1/admin.png"]))
    with pytest.raises(ValueError) as raised:
        check_image_hosts(projected)
    text = str(raised.value)
    assert text.startswith("messages[2] image 'http://127.0.0.1/admin.png' refused")


def test_check_image_hosts_refuses_a_name_resolving_to_a_private_address(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def resolve(host: str, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", 0))]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    projected = to_provider_messages(_compiled(images=["https://internal.example/x.png"]))
    with pytest.raises(ValueError, match=r"messages\[2\] image 'https://internal\.example/x\.png'"):
        check_image_hosts(projected)


def test_check_image_hosts_accepts_a_public_host_and_ignores_other_content(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    looked_up: list[str] = []

    def resolve(host: str, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        looked_up.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 0))]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    projected = to_provider_messages(
        _compiled(images=["https://public.example/x.png", "data:image/png;base64,AAAA"])
    )
    check_image_hosts(projected)
    assert looked_up == ["public.example"]


@pytest.mark.parametrize(
    "image_url", [None, "https://public.example/x.png", {"detail": "low"}, {"url": 7}]
)
def test_check_image_hosts_refuses_an_image_part_without_a_url_string(
    image_url: Any, no_network: list[tuple[Any, ...]]
) -> None:
    messages = [
        {"role": "user", "content": "plain"},
        {"role": "user", "content": [{"type": "text", "text": "x"},
                                     {"type": "image_url", "image_url": image_url}]},
    ]
    with pytest.raises(TypeError) as raised:
        check_image_hosts(messages)
    assert str(raised.value) == (
        f"messages[1] has an image_url part whose URL is not a string (image_url is "
        f"{type(image_url).__name__}); give it "
        "{'image_url': {'url': <http(s) URL or data: URI>}}"
    )
    assert no_network == []


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("file:///etc/passwd", "scheme"),
        ("javascript:alert(1)", "scheme"),
        ("http://exa\x00mple.com/x.png", "NUL byte"),
        ("https://example.com/x%00.png", "NUL byte"),
        ("http:///no-host.png", "no host"),
        ("data:text/html;base64,PHNjcmlwdD4=", "data:"),
    ],
    ids=["file", "javascript", "nul", "pct-nul", "no-host", "non-image-data"],
)
def test_compile_still_rejects_image_urls_that_need_no_network(
    url: str, reason: str, no_network: list[tuple[Any, ...]]
) -> None:
    b = branch()
    before = branch_state(b)
    ins = b.msgs.create_instruction(instruction="now", images=[url])
    with pytest.raises(ValueError, match=reason):
        compile_chat_request(b, TurnRequest(instruction=ins))
    assert no_network == []
    assert_same_state(before, branch_state(b))


def test_compiled_request_is_provider_neutral() -> None:
    compiled = _compiled()
    assert type(compiled) is CompiledChatRequest
    assert all(type(m.content) in (str, list) for m in compiled.messages)
