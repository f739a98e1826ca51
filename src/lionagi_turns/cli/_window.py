"""Which messages a view shows: all, ``--last N``, ``--around K``, or a page's default window.

Contracts of ``select(count, last, around, page)``:

- ``last`` and ``around`` are never both given (the command refuses that, exit 2).
- ``--last N``: the last ``min(N, count)`` messages. ``--around K`` (``0 <= K < count``; the
  command refuses any other K, exit 2): messages ``K - AROUND`` to ``K + AROUND``, clamped to
  the request. Neither: all messages, or, when ``page`` is given and ``count`` exceeds it, the
  last ``page`` (the HTML page's bounded default).
- The ``Window`` says how many messages it leaves out and how to show them; it is a pure
  function of its arguments.
"""

from __future__ import annotations

from dataclasses import dataclass

from lionagi_turns.cli._inputs import EXIT_BAD_INPUT, Fail

__all__ = ("AROUND", "PAGE", "Paging", "Window", "check_paging", "select")

#: Messages shown on each side of ``--around K``.
AROUND = 25
#: The HTML page's default window of a large request: its last ``PAGE`` messages.
PAGE = 200


@dataclass(frozen=True, slots=True)
class Paging:
    """What the options asked for: ``--last N`` or ``--around K`` (or neither)."""

    last: int | None = None
    around: int | None = None


@dataclass(frozen=True, slots=True)
class Window:
    """Messages ``start`` to ``stop - 1`` of ``count``, chosen by ``how``."""

    start: int
    stop: int
    count: int
    how: str

    @property
    def hidden(self) -> int:
        """How many of the ``count`` messages the window leaves out."""
        return self.count - (self.stop - self.start)

    def note(self) -> str:
        """What is not shown and how to show it (empty when nothing is left out)."""
        if not self.hidden:
            return ""
        return (f"{self.hidden:,} of {self.count:,} message(s) not shown ({self.how}): "
                f"messages[{self.start}] to messages[{self.stop - 1}] are; "
                "--last N or --around K shows others, --format json prints them all")


def check_paging(paging: Paging, count: int) -> None:
    """Refuse (exit 2) ``--last`` with ``--around``, or an ``--around K`` with no message K."""
    if paging.last is not None and paging.around is not None:
        raise Fail(EXIT_BAD_INPUT, "bad option: give --last or --around, not both")
    if paging.around is not None and not 0 <= paging.around < count:
        raise Fail(EXIT_BAD_INPUT, f"bad option: --around {paging.around}: the request has "
                   f"messages[0] to messages[{count - 1}]; give K in that range")


def select(count: int, paging: Paging, page: int | None = None) -> Window:
    """The window of ``count`` messages (see the module contract)."""
    if paging.around is not None:
        k = paging.around
        start, stop = max(k - AROUND, 0), min(k + AROUND + 1, count)
        return Window(start, stop, count, f"--around {k}")
    if paging.last is not None:
        return Window(max(count - paging.last, 0), count, count, f"--last {paging.last}")
    if page is not None and count > page:
        return Window(count - page, count, count, f"the page shows the last {page:,} by default")
    return Window(0, count, count, "")
