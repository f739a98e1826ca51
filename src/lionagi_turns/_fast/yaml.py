"""A faster, byte-identical stand-in for lionagi's ``minimal_yaml`` and instruction text.

Contract:

- ``minimal_yaml(value)`` returns exactly what ``lionagi.libs.schema.minimal_yaml.minimal_yaml``
  returns (or raises what it raises) for every value.
- ``instruction_text(content)`` returns exactly ``content._format_text_content()`` for every
  lionagi ``InstructionContent``.

How: after lionagi's own empty-pruning (``_prune``), a value inside the *proven domain* is
emitted by PyYAML's C emitter (libyaml) configured with lionagi's ``MinimalDumper``
representers; everything else goes to lionagi's renderer unchanged. The proven domain is the
set of values for which the C and pure-Python emitters were shown to agree (tests/perf: the
characterization scenarios plus hypothesis over random nested values):

- the root is a ``dict`` or ``list`` (root scalars get an emitter-specific ``...`` marker);
- containers are exactly ``dict`` / ``list``; leaves are exactly ``str``, ``int``, ``float``,
  ``bool`` or ``None``; dict keys are non-empty ``str``;
- every string holds only TAB, LF, printable ASCII and BMP characters from U+00A0 up, except
  U+2028, U+2029, U+FEFF, surrogates and U+FFFE/U+FFFF (libyaml escapes or breaks on those
  differently); no string is ``"\\n"`` or ends with two LFs (libyaml then appends ``...``).
- every key is shorter than 123 characters and 128 UTF-8 bytes (the emitters measure key
  length differently: PyYAML counts characters plus the 5-character "!!str" tag).

Without libyaml, or with the fast path switched off (``LIONAGI_TURNS_NO_FAST_PATH=1`` or
``_cache.no_fast_path()``), every call goes to lionagi's renderer.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar

import yaml
from lionagi.libs.schema import minimal_yaml as _lionagi_yaml
from lionagi.protocols.messages.instruction import InstructionContent

from .switch import fast_path_enabled

__all__ = ("C_EMITTER_AVAILABLE", "in_domain", "instruction_text", "minimal_yaml")

C_EMITTER_AVAILABLE: bool = bool(getattr(yaml, "__with_libyaml__", False))

# Characters outside the proven domain (see the module docstring).
_OUTSIDE = re.compile("[^\t\n -~\u00a0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd]")
_LEAVES = (int, float, bool, type(None))

if C_EMITTER_AVAILABLE:

    class _CMinimalDumper(yaml.CSafeDumper):
        """libyaml emitter with lionagi MinimalDumper's representers and alias policy."""

        yaml_representers: ClassVar[dict[Any, Any]] = dict(
            _lionagi_yaml.MinimalDumper.yaml_representers
        )
        yaml_multi_representers: ClassVar[dict[Any, Any]] = dict(
            _lionagi_yaml.MinimalDumper.yaml_multi_representers
        )
        ignore_aliases = _lionagi_yaml.MinimalDumper.ignore_aliases


def _str_ok(text: str) -> bool:
    if _OUTSIDE.search(text) is not None:
        return False
    return not (text == "\n" or text.endswith("\n\n"))


def _key_short(key: str) -> bool:
    # PyYAML counts the key's characters plus its 5-character "!!str" tag and writes an
    # explicit "? key" from 128 on (so from 123 characters); libyaml counts UTF-8 bytes of
    # the key alone and allows up to 127. Below both limits both write a simple key.
    return len(key) < 123 and (key.isascii() or len(key.encode("utf-8")) < 128)


def in_domain(data: Any) -> bool:
    """Whether ``data`` (already pruned) is inside the proven domain; the root must be a
    dict or list. Iterative, so deep values cannot exhaust the stack."""
    if type(data) is not dict and type(data) is not list:
        return False
    stack: list[Any] = [data]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind is str:
            if not _str_ok(value):
                return False
        elif kind is dict:
            for key, item in value.items():
                if type(key) is not str or not key or not _str_ok(key) or not _key_short(key):
                    return False
                stack.append(item)
        elif kind is list:
            stack.extend(value)
        elif kind not in _LEAVES:
            return False
    return True


def minimal_yaml(value: Any) -> str:
    """Exactly ``lionagi...minimal_yaml(value)`` (default options)."""
    if not C_EMITTER_AVAILABLE or isinstance(value, str) or not fast_path_enabled():
        return _lionagi_yaml.minimal_yaml(value)
    data = _lionagi_yaml._prune(value)
    if not in_domain(data):
        return _lionagi_yaml.minimal_yaml(value)
    text: str = yaml.dump(
        data,
        Dumper=_CMinimalDumper,
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        indent=2,
        width=2**31 - 1,
    )
    return text


def instruction_text(content: InstructionContent) -> str:
    """Exactly ``content._format_text_content()``.

    Contents with a structure instance (a response format) are handed to lionagi as they are;
    only the section document of the others is built here, in lionagi's section order and with
    its rule for leaving out empty sections.
    """
    if not fast_path_enabled() or content._structure_instance is not None:
        return content._format_text_content()
    if content.plain_content:
        return content.plain_content
    sections: dict[str, Any] = {
        "Guidance": content.guidance,
        "Instruction": content.instruction,
        "Context": content.prompt_context,
        "Tools": content.tool_schemas,
    }
    doc = {k: v for k, v in sections.items() if v not in (None, "", [], {})}
    return minimal_yaml(doc).strip()
