"""prepare_messages_for_chat: delegation to the compiler, and one DeprecationWarning per option
the compiler cannot express (those calls keep lionagi's original behaviour)."""

from __future__ import annotations

import warnings
from typing import Any

import lionagi.protocols.messages as messages_pkg
import pytest
from lionagi import Branch
from lionagi._errors import NotFoundError
from lionagi.protocols.messages import AssistantResponse, Instruction
from lionagi.protocols.messages import prepare as lionagi_prepare
from lionagi.protocols.messages.instruction import InstructionContent
from pydantic import BaseModel

import lionagi_turns
from lionagi_turns import TurnRequest, compile_chat_request, to_provider_messages
from lionagi_turns.integration._prepare_compat import UNSUPPORTED_OPTIONS, prepare_messages_for_chat

LEGACY = lionagi_prepare.prepare_messages_for_chat


class Answer(BaseModel):
    value: int


def _branch() -> Branch:
    """system, instruction, action request/response, assistant, assistant."""
    branch = Branch(system="Be exact.")
    branch.msgs.add_message(instruction=branch.msgs.create_instruction(instruction="add 1 and 2"))
    branch.msgs.add_message(
        action_request=branch.msgs.create_action_request(function="add", arguments={"a": 1, "b": 2})
    )
    request = branch.messages[-1]
    branch.msgs.add_message(action_request=request, action_output=3)
    branch.msgs.add_message(assistant_response="it is 3", sender=branch.id)
    branch.msgs.add_message(assistant_response="done", sender=branch.id)
    return branch


def _new(text: str = "and now?") -> Instruction:
    return Instruction(content=InstructionContent(instruction=text))  # type: ignore[call-arg]


def _snapshot(branch: Branch, *extra: Any) -> list[Any]:
    return [m.to_dict() for m in branch.messages] + [list(branch.progression)] + [
        e.to_dict() for e in extra
    ]


def _no_deprecations(fn: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = fn(*args, **kwargs)
    assert [w for w in record if w.category is DeprecationWarning] == []
    return out


def test_delegates_to_the_compiler() -> None:
    branch = _branch()
    new = _new()
    before = _snapshot(branch, new)
    out = _no_deprecations(prepare_messages_for_chat, branch.messages, branch.progression, new)
    expected = to_provider_messages(
        compile_chat_request(branch, TurnRequest(instruction=new, progression=None))
    )
    assert out == expected
    assert _snapshot(branch, new) == before
    # ADR shape: system folded into guidance, action result as a dict in context, merged
    # assistant run
    assert out[0]["content"].startswith("Guidance: Be exact.\n")
    assert len(out) == 3 and "function: add" in out[2]["content"]
    assert out[1] == {"role": "assistant", "content": "it is 3\n\ndone"}


def test_action_results_land_on_the_new_instruction() -> None:
    branch = _branch()
    out = prepare_messages_for_chat(branch.messages, branch.progression, _new())
    assert "output: 3" in out[-1]["content"]
    assert out[-1]["role"] == "user"


def test_none_progression_selects_the_whole_pile_in_order() -> None:
    branch = _branch()
    assert prepare_messages_for_chat(branch.messages, None, _new()) == prepare_messages_for_chat(
        branch.messages, branch.progression, _new()
    )


def test_explicit_sub_progression_and_system_autodetect() -> None:
    branch = _branch()
    ids = list(branch.progression)
    # without the leading System record there is no system to fold
    out = prepare_messages_for_chat(branch.messages, ids[1:2], _new())
    assert "Be exact." not in str(out)
    assert [m["role"] for m in out] == ["user", "user"]  # history ending in an instruction


def test_instruction_content_is_accepted_and_its_options_render() -> None:
    branch = Branch()
    content = InstructionContent(instruction="q", response_format=Answer)  # type: ignore[call-arg]
    before = content.to_dict()
    out = _no_deprecations(prepare_messages_for_chat, branch.messages, None, content)
    assert "ResponseFormat" in out[-1]["content"]
    assert content.to_dict() == before


def test_compiler_errors_apply() -> None:
    branch = Branch()
    for text in ("a", "b"):
        branch.msgs.add_message(instruction=branch.msgs.create_instruction(instruction=text))
    with pytest.raises(ValueError, match="Consecutive instructions"):
        prepare_messages_for_chat(branch.messages, None, _new())


def test_private_image_hosts_are_refused() -> None:
    new = Instruction(  # type: ignore[call-arg]
        content=InstructionContent(instruction="see", images=["http://127.0.0.1/a.png"])  # type: ignore[call-arg]
    )
    with pytest.raises(ValueError, match="refused before invocation"):
        prepare_messages_for_chat(Branch().messages, None, new)


def test_install_rebinds_lionagis_exported_name() -> None:
    branch = _branch()
    with lionagi_turns.installed():
        assert messages_pkg.prepare_messages_for_chat is prepare_messages_for_chat
        assert lionagi_prepare.prepare_messages_for_chat is prepare_messages_for_chat
        out = messages_pkg.prepare_messages_for_chat(branch.messages, None, _new())
        # the legacy fallback still reaches lionagi's original, not ourselves
        with pytest.warns(DeprecationWarning):
            legacy = messages_pkg.prepare_messages_for_chat(
                branch.messages, None, _new(), to_chat=False
            )
    assert out == prepare_messages_for_chat(branch.messages, None, _new())
    assert isinstance(legacy, list) and not isinstance(legacy[0], dict)
    assert messages_pkg.prepare_messages_for_chat is LEGACY


@pytest.fixture
def frozen_time(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lionagi_prepare.time, "time", lambda: 1_700_000_000.0)


UNSUPPORTED_CASES: list[tuple[str, dict[str, Any]]] = [
    ("to_chat", {"to_chat": False}),
    ("system_prefix", {"system_prefix": "LNDL rules"}),
    ("aggregate_actions", {"aggregate_actions": True}),
    ("round_notifications", {"round_notifications": True}),
    ("scratchpad", {"scratchpad": {"plan": "x"}}),
    ("new_instruction", {"new_instruction": None}),
    (
        "new_instruction",
        {"new_instruction": AssistantResponse(content={"assistant_response": "x"})},
    ),
]


def test_lionagis_helper_fails_on_a_progression_object_ours_does_not() -> None:
    branch = _branch()
    with pytest.raises(NotFoundError):
        LEGACY(branch.messages, branch.progression, _new(), to_chat=False)
    with pytest.warns(DeprecationWarning):
        out = prepare_messages_for_chat(branch.messages, branch.progression, _new(), to_chat=False)
    assert len(out) == 3


def test_every_unsupported_option_has_a_case() -> None:
    assert {name for name, _ in UNSUPPORTED_CASES} == set(UNSUPPORTED_OPTIONS)


def _normalize(out: list[Any]) -> list[Any]:
    return [m if isinstance(m, dict) else m.to_dict() for m in out]


@pytest.mark.usefixtures("frozen_time")
@pytest.mark.parametrize(("option", "kwargs"), UNSUPPORTED_CASES, ids=lambda v: str(v)[:30])
def test_unsupported_option_warns_once_and_keeps_lionagis_behaviour(
    option: str, kwargs: dict[str, Any]
) -> None:
    branch = _branch()
    call = {"new_instruction": _new(), **kwargs}
    with pytest.warns(DeprecationWarning) as record:
        out = prepare_messages_for_chat(branch.messages, branch.progression, **call)
    deprecations = [w for w in record if w.category is DeprecationWarning]
    assert len(deprecations) == 1
    message = str(deprecations[0].message)
    assert f"prepare_messages_for_chat({option}=...)" in message
    assert "compile_chat_request" in message
    assert deprecations[0].filename == __file__, "warning must point at the caller"
    expected = LEGACY(branch.messages, list(branch.progression), **call)
    assert _normalize(out) == _normalize(expected)


@pytest.mark.usefixtures("frozen_time")
def test_several_unsupported_options_warn_once_each() -> None:
    branch = _branch()
    with pytest.warns(DeprecationWarning) as record:
        prepare_messages_for_chat(
            branch.messages,
            branch.progression,
            _new(),
            aggregate_actions=True,
            round_notifications=True,
            scratchpad={"k": "v"},
        )
    names = sorted(str(w.message).split("(")[1].split("=")[0] for w in record)
    assert names == ["aggregate_actions", "round_notifications", "scratchpad"]
