"""The proven tables and scalar rules of the fast YAML path, read by ``yaml`` (the event
emitter) and ``direct`` (the direct writer); see ``yaml``'s docstring for the proven domain.

Everything here is computed once at import from lionagi's ``MinimalDumper`` as it is then;
``yaml.tables_unchanged`` compares the live tables with these.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from lionagi.libs.schema import minimal_yaml as _lionagi_yaml
from lionagi.protocols.messages.message import _TrackedDict, _TrackedList

__all__ = (
    "BY_FIRST",
    "DICTS",
    "DOMAIN_TYPES",
    "DUMPER",
    "IGNORE_ALIASES",
    "INT_BITS",
    "LISTS",
    "MAP_TAG",
    "MAX_DEPTH",
    "MAX_ITEMS",
    "OUTSIDE",
    "PROBE",
    "REPRESENTERS",
    "RESOLVERS",
    "RESOLVER_COUNT",
    "RESOLVER_SNAPSHOT",
    "SEQ_TAG",
    "SHARED_EVENTS",
    "SHARED_TEXT",
    "STR_TAG",
    "WILDCARD",
    "Probe",
    "key_short",
    "plain_implicit",
    "proven_at_import",
    "resolvers_by_first",
)

MAX_DEPTH = 50
MAX_ITEMS = 500_000

# Characters outside the proven domain (see the module docstring).
OUTSIDE = re.compile("[^\t\n -~\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
DICTS: tuple[type, ...] = (dict, _TrackedDict)
LISTS: tuple[type, ...] = (list, _TrackedList)
INT_BITS = 1000  # about 301 digits: far below any digit limit str(int) may have (>= 640)

STR_TAG = "tag:yaml.org,2002:str"
MAP_TAG = "tag:yaml.org,2002:map"
SEQ_TAG = "tag:yaml.org,2002:seq"

DUMPER = _lionagi_yaml.MinimalDumper
DOMAIN_TYPES: tuple[type, ...] = (str, int, float, bool, type(None), dict, list)
# What lionagi's tables held at import: the fast path is proven for exactly these.
REPRESENTERS: dict[type, Any] = {t: DUMPER.yaml_representers.get(t) for t in DOMAIN_TYPES}
#: One implicit resolver: the tag a plain scalar matching the pattern resolves to.
Resolver = tuple[str, re.Pattern[str]]
#: lionagi's implicit resolvers by a plain scalar's first character (None: any character).
RESOLVERS: dict[str | None, list[Resolver]] = DUMPER.yaml_implicit_resolvers
RESOLVER_SNAPSHOT = {k: list(v) for k, v in RESOLVERS.items()}
RESOLVER_COUNT = sum(len(v) for v in RESOLVERS.values())
IGNORE_ALIASES = DUMPER.ignore_aliases


def proven_at_import() -> bool:
    """lionagi's str representer must be the one ``yaml`` inlines (block style exactly for
    text with a line feed); verified once by calling it."""
    probe = Probe()
    represent_str = REPRESENTERS[str]
    if represent_str is None:
        return False
    return bool(
        represent_str(probe, "a") == (STR_TAG, "a", None)
        and represent_str(probe, "a\nb") == (STR_TAG, "a\nb", "|")
    )


class Probe:
    """Stands in for a dumper when calling a registered scalar representer: records the
    ``(tag, value, style)`` it asks for instead of building a node."""

    inf_value = yaml.representer.SafeRepresenter.inf_value

    @staticmethod
    def represent_scalar(
        tag: str, value: str, style: str | None = None
    ) -> tuple[str, str, str | None]:
        return (tag, value, style)


PROBE = Probe()


# Implicit resolvers by first character (wildcards appended), as PyYAML's resolve() reads them.
def resolvers_by_first() -> tuple[dict[str, tuple[Resolver, ...]], tuple[Resolver, ...]]:
    wildcard = tuple(RESOLVER_SNAPSHOT.get(None, ()))
    table = {k: tuple(v) + wildcard for k, v in RESOLVER_SNAPSHOT.items() if k is not None}
    return table, wildcard


BY_FIRST, WILDCARD = resolvers_by_first()


def plain_implicit(value: str, tag: str) -> bool:
    """Whether ``value`` read back as a plain scalar resolves to ``tag`` (PyYAML's rule)."""
    for resolved, regexp in BY_FIRST.get(value[0] if value else "", WILDCARD):
        if regexp.match(value):
            return bool(resolved == tag)
    return tag == STR_TAG


# Events are read, never changed, by the emitter: short texts (keys above all) share theirs.
# Bounded: a full table is emptied and refilled.
SHARED_TEXT = 64
SHARED_EVENTS = 4096


def key_short(key: str) -> bool:
    """Whether both emitters write ``key`` as a simple key (below both length limits)."""
    # PyYAML counts the key's characters plus its 5-character "!!str" tag and writes an
    # explicit "? key" from 128 on (so from 123 characters); libyaml counts UTF-8 bytes of
    # the key alone and allows up to 127. Below both limits both write a simple key.
    return len(key) < 123 and (key.isascii() or len(key.encode("utf-8")) < 128)
