"""The prompt-cache profile's memos (``_cache_memo``) never change what it compiles.

Every compile here runs twice on the same real Branch state: with the fast path on (memos read
and written) and inside ``no_fast_path()`` (every record read and every digest computed afresh,
the profile as it was before the memos); the two outcomes must be equal, across growth, every
in-place edit the fast-path mutation tests cover, edits of the durable record itself, and edits
of the view and the pile.
"""

import copy
import gc
import hashlib
import threading
import weakref
from collections.abc import Callable
from typing import Any

import pytest
from equivalence._support import PNG, Convo  # type: ignore[import-not-found]
from equivalence.test_mutation_purity import MUTATIONS  # type: ignore[import-not-found]
from hypothesis import given
from hypothesis import strategies as st
from lionagi import Branch
from lionagi.ln.concurrency.utils import _is_coro_func_cached
from lionagi.protocols.messages import Instruction, MessageRole
from pydantic import BaseModel

from lionagi_turns import (
    ContextBlock,
    TurnRequest,
    compile_chat_request,
    to_provider_messages,
)
from lionagi_turns.core.contracts import CompiledMessage
from lionagi_turns.core.history import action_result
from lionagi_turns.core.profile import SEED_PROFILE
from lionagi_turns.core.render import render_view
from lionagi_turns.integration._cache import compile_for_prompt_cache
from lionagi_turns.memo import resume as _resume
from lionagi_turns.memo.fast import FAST
from lionagi_turns.memo.switch import no_fast_path
from lionagi_turns.profiles.prompt_cache._compile import RECORD_KEY, compile_cached, tool_section
from lionagi_turns.profiles.prompt_cache._memo import _slots, prefix_digests, slot_count
from lionagi_turns.profiles.prompt_cache._record import SegmentChanges, SentRecord, digest
from lionagi_turns.profiles.prompt_cache._record import prefix_digests as plain_prefix_digests

from ._tools import convert, lookup


class Answer(BaseModel):
    answer: str


def lookup_schema() -> dict[str, Any]:
    return Branch(tools=[lookup]).acts.schema_list[0]  # type: ignore[no-any-return]


def outcome(
    branch: Branch,
    request: TurnRequest,
    tools: list[Any] | None = None,
    react: list[Any] | None = None,
) -> tuple[Any, ...]:
    """Everything one prompt-cache compile produced, or the error's type and text."""
    try:
        result = compile_cached(branch, request, tools, react_context=react)
    except Exception as exc:
        return ("error", type(exc).__name__, str(exc))
    return (
        "ok",
        to_provider_messages(result.compiled),
        result.layout,
        result.record,
        result.compiled.instruction.to_dict(),
    )


def both(
    branch: Branch,
    request: TurnRequest,
    tools: list[Any] | None = None,
    react: list[Any] | None = None,
) -> Any:
    """The memo-on outcome, after checking it equals the memo-off one."""
    fast = outcome(branch, request, tools, react)
    with no_fast_path():
        slow = outcome(branch, request, tools, react)
    assert fast == slow
    return fast


def request(branch: Branch, text: str = "What next?", **kwargs: Any) -> TurnRequest:
    return TurnRequest(instruction=branch.msgs.create_instruction(instruction=text), **kwargs)


def sent_as(
    message: Instruction, text: str, *, first: bool = False, results: list[Any] | None = None
) -> Any:
    """Give a stored instruction the record of having been sent with ``text`` as its response
    format (its durable rendering, with ``results``, is the basis, so the profile sends the
    recorded text while that rendering holds); returns the recorded text."""
    rendered, _ = render_view(message.content, results=results or [])
    sent: Any = f"{rendered}\nResponseFormat: {text}" if isinstance(rendered, str) else [
        {"type": "text", "text": f"{rendered[0]['text']}\nResponseFormat: {text}"},
        *rendered[1:],
    ]
    record = SentRecord(
        text=sent,
        basis=digest(rendered),
        stable=digest(("Be careful.",)),
        conversation=digest(()),
        blocks=() if first else None,
        messages=2,
        prefix="0" * 64,
        changes=SegmentChanges(),
        stable_blocks=("Be careful.",) if first else None,
    )
    message.metadata[RECORD_KEY] = record.to_metadata()
    return sent


SENT: dict[str, Any] = {}


def recorded_convo() -> Convo:
    convo = Convo()
    SENT["first"] = sent_as(convo.i1, "first, as sent", first=True)
    SENT["second"] = sent_as(convo.i2, "second, as sent")
    SENT["third"] = sent_as(convo.i3, "third, as sent", results=[action_result(convo.resp)])
    # i3's request: the five messages before it and itself, as the profile compiles them now
    with no_fast_path():  # no memo written yet
        sent = compile_cached(convo.branch, request(convo.branch), None).compiled.messages[:5]
    convo.i3.metadata[RECORD_KEY].update(messages=5, prefix=_chain(sent))
    return convo


# --------------------------------------------------------------------------- growth


def test_growth_equals_reading_everything_afresh() -> None:
    branch = Branch(system="You are terse.", tools=[lookup])
    tools = list(branch.acts.schema_list)
    for i in range(12):
        req = request(
            branch,
            f"q{i}",
            tool_schemas=tuple(tools) if i % 3 == 0 else (),
            response_format=Answer if i % 4 == 1 else None,
            context_blocks=(ContextBlock("notes", f"block {i % 2}"),) if i % 5 < 2 else (),
        )
        first = both(branch, req, tools)
        assert both(branch, req, tools) == first  # again, nothing new: the memo as it is
        assert first[0] == "ok"
        branch.msgs.add_message(instruction=compile_cached(branch, req, tools).compiled.instruction)
        if i % 2:
            call = branch.msgs.add_message(action_function="lookup",
                                           action_arguments={"term": str(i)})
            branch.msgs.add_message(action_request=call, action_output=f"out {i}")
        branch.msgs.add_message(assistant_response=f"answer {i}")
        if i % 3 == 2:
            branch.msgs.add_message(assistant_response=f"and more {i}")  # an assistant run


def test_a_recorded_history_sends_what_was_sent() -> None:
    convo = recorded_convo()
    outcome_ = both(convo.branch, request(convo.branch))
    texts = [m["content"] for m in outcome_[1]]
    assert SENT["second"] in texts and SENT["first"] in texts and SENT["third"] in texts


def test_the_next_turn_resumes_and_a_record_edit_walks_in_full(full_walks: list[int]) -> None:
    walks = full_walks
    convo = recorded_convo()
    req = request(convo.branch)
    compile_cached(convo.branch, req, None)
    compile_cached(convo.branch, req, None)
    convo.branch.msgs.add_message(instruction=compile_cached(convo.branch, req, None)
                                  .compiled.instruction)
    convo.branch.msgs.add_message(assistant_response="four")
    walks.clear()
    both(convo.branch, request(convo.branch))  # grown only: resumed (the slow compile walks)
    assert len(walks) == 1
    convo.i2.metadata[RECORD_KEY]["text"] = "edited"
    walks.clear()
    both(convo.branch, request(convo.branch))  # a record changed: both walk in full
    assert len(walks) == 2


def test_react_calls_between_plain_compiles() -> None:
    item = {"task": "shared"}
    branch = Branch(system="S.")
    for n in range(3):
        ins = branch.msgs.add_message(instruction=f"q{n}", context=[item, f"own {n}"])
        sent_as(ins, f"q{n}, as sent", first=n == 0)
        branch.msgs.add_message(assistant_response=f"a{n}")
    req = TurnRequest(
        instruction=branch.msgs.create_instruction(instruction="now", context=[item])
    )
    for items in (None, [item], None, [item], [item], None):
        both(branch, req, None, items)


def test_the_call_surface_compile_under_growth() -> None:
    branch = Branch(system="You are terse.", tools=[lookup])
    for i in range(6):
        req = request(branch, f"q{i}", context_blocks=(ContextBlock("notes", f"n{i % 2}"),))
        fast = compile_for_prompt_cache(branch, req)
        with no_fast_path():
            slow = compile_for_prompt_cache(branch, req)
        assert to_provider_messages(fast[0]) == to_provider_messages(slow[0])
        assert fast[1] == slow[1] and fast[1].previous_end == slow[1].previous_end
        assert fast[0].instruction.to_dict() == slow[0].instruction.to_dict()
        branch.msgs.add_message(instruction=fast[0].instruction)
        branch.msgs.add_message(assistant_response=f"a{i}")
        if i == 2:
            branch.register_tools(convert)  # the stable segment changes


def _schema(branch: Branch) -> dict[str, Any]:
    return branch.acts.registry["lookup"].tool_schema  # type: ignore[no-any-return]


TOOL_EDITS: dict[str, Callable[[Branch], None]] = {
    "description": lambda b: _schema(b)["function"].__setitem__("description", "Other."),
    "key-order": lambda b: _schema(b)["function"].__setitem__(
        "description", _schema(b)["function"].pop("description")
    ),
    "int-to-float": lambda b: _schema(b)["function"].__setitem__("order", 1.0),
    "negative-zero": lambda b: _schema(b)["function"].__setitem__("order", -0.0),
    "list-to-tuple": lambda b: _schema(b)["function"]["parameters"].__setitem__(
        "required", tuple(_schema(b)["function"]["parameters"]["required"])
    ),
    "nested-append": lambda b: _schema(b)["function"]["parameters"]["required"].append("x"),
    "tool-added": lambda b: b.register_tools(convert),
}


@pytest.mark.parametrize("name", list(TOOL_EDITS))
def test_in_place_edits_of_the_tool_set(name: str) -> None:
    branch = Branch(system="You are terse.", tools=[lookup])
    if name in ("int-to-float", "negative-zero"):
        _schema(branch)["function"]["order"] = 1 if name == "int-to-float" else 0.0
    req = request(branch)
    both(branch, req, branch.acts.schema_list)
    before = both(branch, req, branch.acts.schema_list)
    TOOL_EDITS[name](branch)
    after = both(branch, req, branch.acts.schema_list)
    if name != "list-to-tuple":  # lionagi renders a tuple as it renders the list
        assert after[2].stable != before[2].stable


def test_the_current_instruction_with_and_without_call_options() -> None:
    branch = Branch(system="You are terse.", tools=[lookup])
    tools = list(branch.acts.schema_list)
    plain = {"instruction": "q"}
    variants = [
        {},
        {"tool_schemas": tuple(tools)},
        {"tool_schemas": ({"type": "function", "function": {"name": "unregistered"}},)},
        {"response_format": Answer},
        {"context_blocks": (ContextBlock("notes", "first"),)},
        {"context_blocks": (ContextBlock("notes", "later"),)},  # a later block: a fold
    ]
    for i, kwargs in enumerate(variants):
        ins = branch.msgs.create_instruction(**plain, images=[PNG] if i % 2 else None)
        req = TurnRequest(instruction=ins, **kwargs)  # type: ignore[arg-type]
        result = both(branch, req, tools)
        branch.msgs.add_message(instruction=compile_cached(branch, req, tools)
                                .compiled.instruction)
        branch.msgs.add_message(assistant_response=f"a{i}")
        assert result[0] == "ok"


# --------------------------------------------------------------------------- in-place edits


@pytest.mark.parametrize("name", list(MUTATIONS))
def test_in_place_edits_of_records(name: str) -> None:
    convo = recorded_convo()
    req = request(convo.branch)
    tools: list[Any] = []  # the stable segment from the live system text
    both(convo.branch, req, tools)
    before = both(convo.branch, req, tools)
    MUTATIONS[name](convo)
    after = both(convo.branch, req, tools)
    assert after != before


def _edit_text(c: Convo) -> None:
    c.i2.metadata[RECORD_KEY]["text"] = "edited in place"


def _edit_nested(c: Convo) -> None:  # a recorded tool section, appended in place
    c.i1.metadata[RECORD_KEY]["stable_blocks"].append(tool_section([lookup_schema()]))


def _edit_blocks(c: Convo) -> None:
    c.i1.metadata[RECORD_KEY]["blocks"] = [["notes", "a block"]]


def _edit_messages(c: Convo) -> None:
    c.i3.metadata[RECORD_KEY]["messages"] = 4


def _remove(c: Convo) -> None:
    del c.i2.metadata[RECORD_KEY]


def _replace_equal(c: Convo) -> None:
    c.i2.metadata[RECORD_KEY] = copy.deepcopy(c.i2.metadata[RECORD_KEY])


def _replace_other(c: Convo) -> None:
    c.i2.metadata[RECORD_KEY] = dict(c.i3.metadata[RECORD_KEY])


def _bad_version(c: Convo) -> None:
    c.i3.metadata[RECORD_KEY]["v"] = 2


def _metadata_replaced(c: Convo) -> None:
    c.i2.metadata = {}


def _not_json(c: Convo) -> None:
    c.i2.metadata[RECORD_KEY]["text"] = ("a", "tuple")


def _record_added(c: Convo) -> None:
    sent_as(c.i2, "second, sent again")


RECORD_EDITS: dict[str, Callable[[Convo], None]] = {
    "text-in-place": _edit_text,
    "stable-blocks-nested": _edit_nested,
    "blocks-in-place": _edit_blocks,
    "messages-in-place": _edit_messages,
    "removed": _remove,
    "replaced-equal": _replace_equal,
    "replaced-other": _replace_other,
    "bad-version": _bad_version,
    "metadata-replaced": _metadata_replaced,
    "not-json": _not_json,
    "record-replaced": _record_added,
}


@pytest.mark.parametrize("name", list(RECORD_EDITS))
def test_edits_of_the_durable_record(name: str) -> None:
    convo = recorded_convo()
    req = request(convo.branch)
    both(convo.branch, req)
    before = both(convo.branch, req)
    RECORD_EDITS[name](convo)
    after = both(convo.branch, req)
    again = both(convo.branch, req)
    assert again == after
    if name != "replaced-equal":
        assert after != before


def test_a_record_that_is_not_json_is_read_afresh_every_time() -> None:
    convo = recorded_convo()
    convo.i2.metadata[RECORD_KEY]["extra"] = ("a", "tuple")  # not JSON; the record still reads
    req = request(convo.branch)
    first = both(convo.branch, req)
    extra = convo.i2.metadata[RECORD_KEY]["extra"]
    sent_as(convo.i2, "second, sent again")
    convo.i2.metadata[RECORD_KEY]["extra"] = extra
    assert both(convo.branch, req) != first


# --------------------------------------------------------------------------- view and pile


def _drop_from_progression(c: Convo) -> None:
    c.branch.msgs.progression.remove(c.a1.id)


def _reorder(c: Convo) -> None:
    order = c.branch.msgs.progression
    order.remove(c.i3.id)
    order.insert(0, c.i3.id)


def _current_progression(c: Convo) -> None:
    c.branch.metadata["current_progression"] = [c.i3.id, c.a3.id]


def _remove_record(c: Convo) -> None:
    c.branch.msgs.messages.pop(c.a3.id)


def _pile_entry_replaced(c: Convo) -> None:
    twin = c.i2.model_copy(deep=True)
    twin.metadata[RECORD_KEY]["text"] = "the twin"
    c.branch.msgs.messages.collections[c.i2.id] = twin


def _pile_last_replaced(c: Convo) -> None:
    twin = c.i3.model_copy(deep=True)
    twin.metadata[RECORD_KEY]["messages"] = 4  # the last record: no longer a kept prefix
    c.branch.msgs.messages.collections[c.i3.id] = twin


def _pile_entry_readded(c: Convo) -> None:
    pile = c.branch.msgs.messages.collections
    message = pile.pop(c.i3.id)
    pile[c.i3.id] = message


VIEW_EDITS: dict[str, Callable[[Convo], None]] = {
    "drop-from-progression": _drop_from_progression,
    "reorder": _reorder,
    "current-progression": _current_progression,
    "remove-record": _remove_record,
    "pile-entry-replaced": _pile_entry_replaced,
    "pile-last-replaced": _pile_last_replaced,
    "pile-entry-readded": _pile_entry_readded,
}


@pytest.mark.parametrize("name", list(VIEW_EDITS))
def test_edits_of_the_view_and_the_pile(name: str) -> None:
    convo = recorded_convo()
    req = request(convo.branch)
    both(convo.branch, req)
    before = both(convo.branch, req)
    VIEW_EDITS[name](convo)
    after = both(convo.branch, req)
    assert both(convo.branch, req) == after
    assert (after == before) == (name == "pile-entry-readded")
    if name == "current-progression":
        del convo.branch.metadata["current_progression"]
        both(convo.branch, req)


def test_pile_keys_swapped_under_the_same_values() -> None:
    branch = Branch(system="Be careful.")
    m = branch.msgs
    a1, a2 = m.add_message(assistant_response="one"), m.add_message(assistant_response="two")
    i1, i2 = m.add_message(instruction="first"), m.add_message(instruction="second")
    branch.metadata["current_progression"] = [i1.id, a1.id, i2.id, a2.id]
    sent_as(i1, "first, as sent", first=True)
    sent_as(i2, "second, as sent")
    with no_fast_path():
        sent = compile_cached(branch, request(branch), None).compiled.messages[:3]
    i2.metadata[RECORD_KEY].update(messages=3, prefix=_chain(sent))
    i1.metadata[RECORD_KEY]["stable"] = "another stable segment"  # which record is last shows
    req = request(branch)
    both(branch, req)
    before = both(branch, req)
    pile = m.messages.collections
    first, second = pile.pop(i1.id), pile.pop(i2.id)
    pile[i2.id], pile[i1.id] = first, second  # the same values, in the same order
    assert list(pile.values())[-2:] == [first, second]
    assert both(branch, req) != before


def test_explicit_views_alternating() -> None:
    convo = recorded_convo()
    ids = list(convo.branch.msgs.progression)
    for view in (tuple(ids), tuple(ids[:3]), tuple(ids), (), tuple(ids[2:]), tuple(ids)):
        both(convo.branch, request(convo.branch, progression=view))


def test_a_missing_id_is_refused_alike() -> None:
    convo = recorded_convo()
    req = request(convo.branch)
    both(convo.branch, req)
    missing = convo.branch.msgs.create_instruction(instruction="never stored").id
    convo.branch.msgs.progression.append(missing)
    assert both(convo.branch, req)[0] == "error"
    convo.branch.msgs.progression.remove(missing)
    both(convo.branch, req)


# --------------------------------------------------------------------------- prefix digests


def _m(role: MessageRole, content: Any) -> CompiledMessage:
    return CompiledMessage(role=role, content=content)


def test_prefix_digests_resume_only_where_the_messages_are_the_same() -> None:
    branch = Branch()
    user, assistant = MessageRole.USER, MessageRole.ASSISTANT
    parts = [{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": PNG}}]
    base = [_m(user, "a"), _m(assistant, "b"), _m(user, parts), _m(assistant, "c")]
    sequences = [
        base,
        [*base, _m(user, "d")],  # grown: the same objects
        [*base[:2], _m(user, copy.deepcopy(parts)), base[3], _m(user, "d")],  # equal copies
        [*base[:2], _m(user, [{"type": "text", "text": "other"}]), base[3]],  # a rewrite
        [base[0], _m(user, "b"), *base[2:]],  # the same text, another role
        [_m(user, "a"), _m(assistant, "b")],  # shorter
        [],
        [*base, _m(user, "e"), _m(assistant, "f"), _m(user, "g")],
    ]
    for messages in sequences:
        total = len(messages)
        for marks in ({total}, {0, total}, {min(2, total), total}, set(range(total + 1))):
            assert prefix_digests(branch, tuple(messages), marks, FAST) == plain_prefix_digests(
                messages, marks
            )


def test_prefix_digests_never_change_a_kept_chain_state() -> None:
    branch = Branch()
    messages = tuple(_m(MessageRole.USER, str(i)) for i in range(6))
    prefix_digests(branch, messages, {6}, FAST)
    slot = _slots.get(branch)
    assert slot is not None
    held = slot.chain
    assert held is not None
    before = [(n, s.hexdigest()) for n, s in held.states]
    prefix_digests(branch, (*messages, _m(MessageRole.ASSISTANT, "x")), {6, 7}, FAST)
    assert [(n, s.hexdigest()) for n, s in held.states] == before
    assert before[-1] == (6, _chain(messages))


def _chain(messages: tuple[CompiledMessage, ...]) -> str:
    return plain_prefix_digests(messages, {len(messages)})[len(messages)]


def test_a_chain_state_is_a_real_hashlib_state() -> None:
    assert _chain(()) == hashlib.sha256().hexdigest()


# --------------------------------------------------------------------------- switch, lifetime


def test_no_fast_path_reads_and_writes_no_memo() -> None:
    convo = recorded_convo()
    gc.collect()  # a slot of an earlier test's branch is not dropped mid-test
    before = slot_count()
    with no_fast_path():
        outcome(convo.branch, request(convo.branch))
    assert slot_count() == before
    assert id(convo.branch) not in _slots


def test_env_switch_reads_and_writes_no_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIONAGI_TURNS_NO_FAST_PATH", "1")
    convo = recorded_convo()
    outcome(convo.branch, request(convo.branch))
    assert id(convo.branch) not in _slots


def test_a_dropped_branch_leaves_no_slot_and_no_record_behind() -> None:
    _is_coro_func_cached.cache_clear()
    gc.collect()
    gc.collect()  # a slot of an earlier test's branch is not dropped mid-test
    before = slot_count()
    convo = recorded_convo()
    both(convo.branch, request(convo.branch))
    assert slot_count() == before + 1
    message = weakref.ref(convo.i2)
    branch = weakref.ref(convo.branch)
    del convo
    _is_coro_func_cached.cache_clear()  # lionagi 0.36 keeps every Branch alive through it
    gc.collect()  # then one collection frees the branch, its slot and its messages
    assert branch() is None and message() is None
    assert slot_count() == before


def test_a_slot_is_per_branch_object_not_per_id(full_walks: list[int]) -> None:
    convo = recorded_convo()
    req = request(convo.branch)
    first = both(convo.branch, req)
    gc.collect()  # a slot of an earlier test's branch is not dropped mid-test
    before = slot_count()
    twin = Branch.from_dict(convo.branch.to_dict())  # the same ids, other objects
    assert twin.id == convo.branch.id
    assert both(twin, request(twin))[0] == "ok"
    assert slot_count() == before + 1
    twin_slot, own_slot = _slots.get(twin), _slots.get(convo.branch)
    assert twin_slot is not None and own_slot is not None and twin_slot is not own_slot
    walked = len(full_walks)
    assert outcome(convo.branch, req) == first
    assert len(full_walks) == walked  # the original's walk survived the twin's: resumed


def test_a_changed_record_drops_the_walk_its_old_key_reached(full_walks: list[int]) -> None:
    convo = recorded_convo()
    req = request(convo.branch)
    for n in range(6):
        fast = both(convo.branch, req)
        walked = len(full_walks)
        assert outcome(convo.branch, req) == fast
        assert len(full_walks) == walked  # resumed
        convo.i2.metadata[RECORD_KEY]["text"] = f"edit {n}"
        walks = _resume._walks_of(convo.branch)
        assert walks is not None and len(walks) == 1


def test_the_default_profiles_walk_stays() -> None:
    convo = recorded_convo()
    req = request(convo.branch)
    compile_chat_request(convo.branch, req)
    both(convo.branch, req)
    convo.i2.metadata[RECORD_KEY]["text"] = "edited"
    both(convo.branch, req)
    walks = _resume._walks_of(convo.branch)
    assert walks is not None and SEED_PROFILE.reuse in walks


def test_concurrent_compiles_of_one_branch() -> None:
    convo = recorded_convo()
    req = request(convo.branch)
    expected = both(convo.branch, req)
    results: list[Any] = []
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                results.append(outcome(convo.branch, req))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all(r == expected for r in results)


# --------------------------------------------------------------------------- property


def _grow(c: Convo, i: int) -> None:
    req = request(c.branch, f"q{i}")
    c.branch.msgs.add_message(instruction=compile_cached(c.branch, req, None).compiled.instruction)
    c.branch.msgs.add_message(assistant_response=f"a{i}")


def _older_instruction(c: Convo, i: int) -> Instruction:
    instructions = [m for m in c.branch.msgs.messages if isinstance(m, Instruction)]
    return instructions[i % len(instructions)]


def _record_text(c: Convo, i: int) -> None:
    record = _older_instruction(c, i).metadata.get(RECORD_KEY)
    if record is not None:
        record["text"] = f"edited {i}"


def _record_drop(c: Convo, i: int) -> None:
    _older_instruction(c, i).metadata.pop(RECORD_KEY, None)


def _record_copy(c: Convo, i: int) -> None:
    source = _older_instruction(c, i + 1).metadata.get(RECORD_KEY)
    if source is not None:
        _older_instruction(c, i).metadata[RECORD_KEY] = copy.deepcopy(source)


def _content_edit(c: Convo, i: int) -> None:
    _older_instruction(c, i).content.prompt_context.append({"edit": i})


def _view_toggle(c: Convo, i: int) -> None:
    if "current_progression" in c.branch.metadata:
        del c.branch.metadata["current_progression"]
    else:
        ids = list(c.branch.msgs.progression)
        c.branch.metadata["current_progression"] = ids[: max(2, len(ids) - 2)]


def _pile_replace(c: Convo, i: int) -> None:
    old = _older_instruction(c, i)
    twin = old.model_copy(deep=True)
    if RECORD_KEY in twin.metadata:
        twin.metadata[RECORD_KEY]["text"] = f"twin {i}"
        twin.metadata[RECORD_KEY]["messages"] = i
    c.branch.msgs.messages.collections[old.id] = twin


STEPS: dict[str, Callable[[Convo, int], None]] = {
    "pile-replace": _pile_replace,
    "grow": _grow,
    "record-text": _record_text,
    "record-drop": _record_drop,
    "record-copy": _record_copy,
    "content-edit": _content_edit,
    "view-toggle": _view_toggle,
}


@pytest.mark.slow
@given(st.lists(st.tuples(st.sampled_from(list(STEPS)), st.integers(0, 9)), max_size=6))
def test_any_sequence_of_growth_and_edits(steps: list[tuple[str, int]]) -> None:
    convo = recorded_convo()
    req = request(convo.branch)
    both(convo.branch, req)
    for name, i in steps:
        STEPS[name](convo, i)
        both(convo.branch, req)
