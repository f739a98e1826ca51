"""The registry entries for hostile input: each explains exactly its difference from lionagi
0.36, and without it the comparison reports the difference."""

from __future__ import annotations

import socket
from typing import Any

import pytest
from lionagi import Branch

from lionagi_turns import TurnRequest
from lionagi_turns.characterize import REGISTRY, compare, registry_entry

from ._support import add_action_pair, add_assistant, add_instruction, branch

PNG = "data:image/png;base64,iVBORw0KGgo="


def _without(entry_id: str) -> tuple[Any, ...]:
    return tuple(e for e in REGISTRY if e.id != entry_id)


def _public_dns(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    looked_up: list[str] = []

    def resolve(host: str, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        looked_up.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", 0))]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    return looked_up


def test_mixed_case_scheme_is_explained_as_normalised(monkeypatch: pytest.MonkeyPatch) -> None:
    looked_up = _public_dns(monkeypatch)
    b = Branch()
    url = "Https://public.example/a.png"
    request = TurnRequest(instruction=b.msgs.create_instruction(instruction="see", images=[url]))
    result = compare(b, request)
    assert result.ok, result.unexplained
    assert result.entries == ("image-url-normalised",)
    assert result.legacy is not None and result.compiled is not None
    assert result.legacy[0]["content"][1]["image_url"]["url"] == url
    assert result.compiled[0]["content"][1]["image_url"]["url"] == "https://public.example/a.png"
    assert looked_up == ["public.example"]  # lionagi's renderer resolves; compile did not add any
    assert not compare(b, request, registry=_without("image-url-normalised")).ok


def test_refused_mixed_case_host_is_explained_by_the_deferred_check() -> None:
    b = Branch()
    url = " HTTP://127.0.0.1/pixel.png"  # an address literal: no lookup on either side
    request = TurnRequest(instruction=b.msgs.create_instruction(instruction="see", images=[url]))
    result = compare(b, request)
    assert result.ok, result.unexplained
    assert result.entries == ("image-host-check-deferred",)


@pytest.mark.parametrize(
    ("context", "legacy_error"),
    [
        ([{"tags": {"b", "a", "c"}}], None),
        ([object()], "RepresenterError"),
    ],
    ids=["set", "object"],
)
def test_refused_values_are_explained(context: list[Any], legacy_error: str | None) -> None:
    b = Branch()
    ins = b.msgs.create_instruction(instruction="now", context=context)
    result = compare(b, TurnRequest(instruction=ins))
    assert result.ok, result.unexplained
    assert result.entries == ("refused-values",)
    assert result.compiled_error is not None and result.compiled_error.startswith("TypeError: ")
    if legacy_error is None:
        assert result.legacy is not None  # lionagi sends the set, in hash order
    else:
        assert result.legacy_error is not None and result.legacy_error.startswith(legacy_error)
    assert not compare(b, TurnRequest(instruction=ins), registry=_without("refused-values")).ok


def test_path_like_image_and_history_image_detail_are_explained() -> None:
    b = branch()
    stored = add_instruction(b, "old", images=[PNG])
    object.__setattr__(stored.content, "image_detail", "ultra")
    add_assistant(b, "seen")
    result = compare(b, TurnRequest(instruction=b.msgs.create_instruction(instruction="now")))
    assert result.ok, result.unexplained
    assert result.legacy is not None  # lionagi sends detail "ultra"
    assert result.entries == ("refused-values",)

    c = Branch()
    ins = c.msgs.create_instruction(instruction="now", images=["../etc/passwd"])
    result = compare(c, TurnRequest(instruction=ins))
    assert result.ok, result.unexplained
    assert result.legacy is not None
    sent = result.legacy[0]["content"][1]["image_url"]["url"]
    assert sent == "data:image/jpeg;base64,../etc/passwd"


def test_refused_values_does_not_absorb_another_error() -> None:
    b = Branch()
    ins = b.msgs.create_instruction(instruction="now", images=["file:///etc/passwd"])
    result = compare(b, TurnRequest(instruction=ins))
    assert result.ok  # equivalent errors: lionagi refuses the scheme with the same text
    assert "refused-values" not in result.entries
    assert registry_entry("refused-values").adr_clause == "D2.5"


class _EqRaises(dict):  # type: ignore[type-arg]
    def __eq__(self, other: object) -> bool:
        raise RuntimeError("eq")

    __hash__ = None  # type: ignore[assignment]


def test_refused_folded_results_are_explained() -> None:
    b = branch()
    add_instruction(b, "q")
    add_assistant(b, "a")
    add_action_pair(b, "lookup", {"term": "x"}, output={"rows": {"b", "a"}})
    result = compare(b, TurnRequest(instruction=b.msgs.create_instruction(instruction="now")))
    assert result.ok, result.unexplained
    assert result.entries == ("refused-values",)
    assert result.compiled_error is not None
    assert result.compiled_error.startswith("TypeError: folded action result 0['output']['rows']")

    c = branch()
    add_instruction(c, "q")
    add_assistant(c, "a")
    add_action_pair(c, "lookup", {"term": "x"}, output=1)
    ins = c.msgs.create_instruction(instruction="now", context=["seed"])
    list.clear(ins.content.prompt_context)
    list.append(ins.content.prompt_context, _EqRaises(a=1))
    result = compare(c, TurnRequest(instruction=ins))
    assert result.ok, result.unexplained
    assert result.entries == ("refused-values",)
    assert result.compiled_error is not None and "raised RuntimeError when compared" in (
        result.compiled_error
    )
