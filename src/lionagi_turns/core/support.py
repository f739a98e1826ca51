"""Which lionagi this package supports, checked before anything imports lionagi's internals.

Contracts:

- ``unsupported_lionagi()`` is None when the installed lionagi is 0.36.x (both
  ``lionagi.__version__`` and the installed distribution's version), otherwise one line naming
  the installed version, the supported one and the command that installs it. It never raises.
- ``unsupported_module(problem, public, lazy)`` is the ``__getattr__`` a public module uses
  instead of its imports when lionagi is unsupported: a name in ``lazy`` is a function raising
  ``IntegrationError(problem)`` when called (so ``install()`` raises as documented); any other
  name of ``public`` raises ``IntegrationError(problem)`` on access; any other name is an
  ``AttributeError``, as for any module.
- ``IntegrationError`` is defined here (``integration`` re-exports it), so it exists whatever
  lionagi is installed.
"""

from __future__ import annotations

import functools
import importlib.metadata
from collections.abc import Callable, Collection
from typing import NoReturn

__all__ = (
    "REQUIREMENT",
    "SUPPORTED_LIONAGI",
    "IntegrationError",
    "supports",
    "unsupported_lionagi",
    "unsupported_module",
)

SUPPORTED_LIONAGI = "0.36"
REQUIREMENT = "lionagi>=0.36,<0.37"


class IntegrationError(RuntimeError):
    """lionagi is not the version, or not in the state, that ``install()`` can patch."""


def supports(version: str) -> bool:
    """Whether ``version`` is a lionagi 0.36.x version string."""
    return version == SUPPORTED_LIONAGI or version.startswith(SUPPORTED_LIONAGI + ".")


def _distribution_version() -> str | None:
    try:
        return importlib.metadata.version("lionagi")
    except importlib.metadata.PackageNotFoundError:
        return None


@functools.cache
def unsupported_lionagi() -> str | None:
    """None for a supported lionagi, else the one-line problem (see the module contract)."""
    from lionagi_turns.core.version import __version__

    wanted = (
        f"lionagi-turns {__version__} supports lionagi {SUPPORTED_LIONAGI}.x only; "
        f"install it with: pip install '{REQUIREMENT}'"
    )
    dist = _distribution_version()
    if dist is not None and not supports(dist):
        return f"lionagi {dist} is installed, but {wanted}"
    try:
        import lionagi
    except Exception as exc:  # any failure to import lionagi is reported the same way
        return f"lionagi cannot be imported ({type(exc).__name__}: {exc}); {wanted}"
    module = str(getattr(lionagi, "__version__", ""))
    if not supports(module):
        return f"lionagi {module or '(no __version__)'} is imported, but {wanted}"
    return None


def unsupported_module(
    problem: str, public: Collection[str], lazy: Collection[str]
) -> Callable[[str], object]:
    """A module ``__getattr__`` for an unsupported lionagi (see the module contract)."""

    def refuse(*_args: object, **_kwargs: object) -> NoReturn:
        raise IntegrationError(problem)

    def __getattr__(name: str) -> object:
        if name in lazy:
            return refuse
        if name in public:
            raise IntegrationError(problem)
        raise AttributeError(f"module has no attribute {name!r}")

    return __getattr__
