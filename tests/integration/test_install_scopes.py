"""installed() scopes are reference-counted (issue 11): nested and overlapping scopes, in any
threads, keep the compiler installed until the last one exits."""

from __future__ import annotations

import threading

from lionagi.operations.chat import chat as chat_mod
from lionagi.operations.chat._prepare import _prepare_run_kwargs as lionagi_prepare

import lionagi_turns
from lionagi_turns.integration import _install as integration
from lionagi_turns.integration._state import STATE


def _compiler_active() -> bool:
    return chat_mod._prepare_run_kwargs is integration.prepare_run_kwargs


def test_overlapping_scopes_in_two_threads_keep_the_compiler_until_the_last_exit() -> None:
    a_entered, b_entered, a_exited, b_checked = (threading.Event() for _ in range(4))
    seen: dict[str, bool] = {}

    def thread_a() -> None:
        with lionagi_turns.installed():
            a_entered.set()
            assert b_entered.wait(5)
        a_exited.set()

    def thread_b() -> None:
        assert a_entered.wait(5)
        with lionagi_turns.installed():
            b_entered.set()
            assert a_exited.wait(5)
            seen["after_a_exit"] = _compiler_active()
        b_checked.set()

    threads = [threading.Thread(target=thread_a), threading.Thread(target=thread_b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert b_checked.is_set()
    assert seen == {"after_a_exit": True}, "B ran on lionagi's originals after A exited"
    assert not integration.is_installed()
    assert chat_mod._prepare_run_kwargs is lionagi_prepare


def test_interleaved_exit_order_on_one_thread() -> None:
    a = lionagi_turns.installed()
    b = lionagi_turns.installed()
    a.__enter__()
    b.__enter__()
    a.__exit__(None, None, None)
    assert _compiler_active()
    b.__exit__(None, None, None)
    assert not integration.is_installed()


def test_scopes_restore_the_state_they_found_despite_explicit_calls_inside() -> None:
    with lionagi_turns.installed():
        lionagi_turns.install()  # a no-op here
        lionagi_turns.uninstall()
        lionagi_turns.install()  # reinstalled inside the scope
    assert not integration.is_installed()


def test_a_preexisting_install_is_left_in_place_by_scopes() -> None:
    lionagi_turns.install()
    with lionagi_turns.installed(), lionagi_turns.installed():
        pass
    assert integration.is_installed()


def test_an_explicit_uninstall_inside_a_scope_takes_effect_at_once() -> None:
    with lionagi_turns.installed():
        lionagi_turns.uninstall()
        assert not _compiler_active()
        with lionagi_turns.installed():
            assert _compiler_active()
        assert _compiler_active(), "an inner scope exiting is not the last exit"
    assert not integration.is_installed()


def test_a_scope_body_that_raises_still_counts_down() -> None:
    try:
        with lionagi_turns.installed():
            raise KeyError("boom")
    except KeyError:
        pass
    assert not integration.is_installed()
    assert STATE.scopes == 0
