"""Offline ``o200k_base`` token counts (the encoding of OpenAI's GPT-4o/GPT-4.1/o-series models).

Contract:

- ``count_tokens(text)`` is ``len(encode(text))``; ``encode(text)`` is the token ids tiktoken's
  ``get_encoding("o200k_base").encode_ordinary(text)`` returns for the same text: special-token
  markers such as ``<|endoftext|>`` count as the literal text they are, and a lone surrogate is
  replaced by U+FFFD first, as tiktoken does.
- No network, no subprocess, no file outside the installed ``bpe-openai`` package: the encoding
  ships inside that package (its data is byte-identical to the file tiktoken pins by SHA-256;
  ``tests/unit/test_measure.py`` checks the hash, published reference ids and tiktoken itself).
- Linear in the length of ``text`` with no upper bound on it (the Rust backend of ``bpe-openai``
  is used directly; its Python wrapper refuses texts of a million characters or more).
- The encoding loads on first use (about 50 ms) and is then shared; thread-safe. Only the
  package's compiled backend is loaded: importing ``bpe_openai`` itself would first parse three
  encoding files in Python (about half a second) that the backend does not need.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import threading
from pathlib import Path
from types import ModuleType
from typing import Protocol

__all__ = ("ENCODING", "count_tokens", "encode")

ENCODING = "o200k_base"


class _Backend(Protocol):
    def encode(self, text: str) -> list[int]: ...

    def count(self, text: str) -> int: ...


_backend: _Backend | None = None
_lock = threading.Lock()


def _tokenizer() -> _Backend:
    global _backend
    if _backend is None:
        with _lock:
            if _backend is None:
                _backend = _bindings().tokenizer_for_encoding(ENCODING)
    return _backend


def _bindings() -> ModuleType:
    """``bpe_openai._bindings`` (the Rust extension) loaded without running the package's
    ``__init__``; ImportError names the package to install when it is missing."""
    spec = importlib.util.find_spec("bpe_openai")
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    for location in locations:
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = Path(location) / f"_bindings{suffix}"
            if path.is_file():
                name = "bpe_openai._bindings"
                loader = importlib.machinery.ExtensionFileLoader(name, str(path))
                module_spec = importlib.util.spec_from_file_location(name, path, loader=loader)
                if module_spec is None:  # pragma: no cover - a file location always has one
                    break
                module = importlib.util.module_from_spec(module_spec)
                loader.exec_module(module)
                return module
    raise ImportError(
        "token counts need the bpe-openai package (its compiled backend was not found): "
        "pip install 'bpe-openai>=0.1.4,<0.2'"
    )


def _encodable(text: str) -> str:
    """``text`` as UTF-8 can carry it: surrogate pairs joined, lone surrogates U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text


def encode(text: str) -> list[int]:
    """The ``o200k_base`` token ids of ``text`` (see the module contract)."""
    if not isinstance(text, str):
        raise TypeError(f"encode() takes a str, not {type(text).__name__}")
    return list(_tokenizer().encode(_encodable(text))) if text else []


def count_tokens(text: str) -> int:
    """The number of ``o200k_base`` tokens of ``text`` (see the module contract)."""
    if not isinstance(text, str):
        raise TypeError(f"count_tokens() takes a str, not {type(text).__name__}")
    return int(_tokenizer().count(_encodable(text))) if text else 0
