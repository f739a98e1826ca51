"""``_measure``: offline ``o200k_base`` token ids, checked three ways.

1. The encoding data ``bpe-openai`` ships is byte-identical to the file tiktoken pins for
   ``o200k_base`` (SHA-256 ``446a9538…`` in ``tiktoken_ext/openai_public.py``).
2. Published reference ids: "hello world" -> [24912, 2375] and "Hello world" -> [13225, 2375]
   are the o200k_base ids quoted by many independent tokenizer ports' tests (for example
   tiktoken ports in Go, Kotlin and Rust found with a public code search); the longer sentences
   are the same sources' examples.
3. tiktoken itself (the reference implementation, a lionagi dependency) built offline from that
   hash-checked file gives the same ids as ``_measure.encode`` on fixed and random text.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lionagi_turns.core import measure as _measure

TIKTOKEN_O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"

REFERENCE_IDS = [
    ("hello world", [24912, 2375]),
    ("Hello world", [13225, 2375]),
    ("Hello, world!", [13225, 11, 2375, 0]),
    ("Hello world! This is a test.", [13225, 2375, 0, 1328, 382, 261, 1746, 13]),
    ("こんにちは", [95839]),
    # A special-token marker is ordinary text: 7 tokens, never the id 199999.
    ("<|endoftext|>", [27, 91, 419, 1440, 919, 91, 29]),
]

FIXED_TEXTS = [
    "",
    " ",
    "\n\n\n",
    "today\n \n",
    "   leading and trailing   ",
    "tabs\tand\r\nCRLF\r\n",
    "数字 12345678901234567890 and 3.14159",
    "emoji 👍🏽 and ZWJ 👩‍👩‍👧",
    "I'm sure they've said it's John's",
    "a" * 5000,
    "<|endofprompt|> ok",
    "---\nsystem: |-\n  You are terse.\n  Answer in English.\n",
]


def _bundled_o200k() -> bytes:
    spec = importlib.util.find_spec("bpe_openai")  # found, not imported
    assert spec is not None and spec.submodule_search_locations
    folder = Path(next(iter(spec.submodule_search_locations)))
    return gzip.decompress((folder / "data" / "o200k_base.tiktoken.gz").read_bytes())


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """tiktoken's own ``o200k_base`` constructor, fed the bundled file instead of a download."""
    tiktoken = pytest.importorskip("tiktoken")
    from tiktoken import load
    from tiktoken_ext import openai_public

    path = tmp_path_factory.mktemp("o200k") / "o200k_base.tiktoken"
    path.write_bytes(_bundled_o200k())
    mp = pytest.MonkeyPatch()
    mp.setenv("TIKTOKEN_CACHE_DIR", "")
    mp.setattr(
        openai_public,
        "load_tiktoken_bpe",
        lambda _url, expected_hash=None: load.load_tiktoken_bpe(str(path), expected_hash),
    )
    try:
        spec = openai_public.o200k_base()  # tiktoken checks its pinned hash on our file
    finally:
        mp.undo()
    return tiktoken.Encoding(**spec)


def test_bundled_data_is_the_file_tiktoken_pins() -> None:
    assert hashlib.sha256(_bundled_o200k()).hexdigest() == TIKTOKEN_O200K_SHA256


@pytest.mark.parametrize(("text", "ids"), REFERENCE_IDS)
def test_published_reference_ids(text: str, ids: list[int]) -> None:
    assert _measure.encode(text) == ids
    assert _measure.count_tokens(text) == len(ids)


@pytest.mark.parametrize("text", [t for t, _ in REFERENCE_IDS] + FIXED_TEXTS)
def test_same_ids_as_tiktoken(reference: Any, text: str) -> None:
    assert _measure.encode(text) == reference.encode_ordinary(text)
    assert _measure.count_tokens(text) == len(reference.encode_ordinary(text))


@given(st.text())
def test_same_ids_as_tiktoken_on_random_text(reference: Any, text: str) -> None:
    # tiktoken replaces lone surrogates with U+FFFD; so does _measure.
    assert _measure.encode(text) == reference.encode_ordinary(text)


def test_lone_surrogate_counts_as_replacement_character() -> None:
    assert _measure.encode("a\udfffb") == _measure.encode("a\ufffdb")
    assert _measure.encode("\ud83d\udc4d") == _measure.encode("👍")


def test_no_length_limit() -> None:
    # bpe-openai's Python wrapper refuses >= 1,000,000 characters; the measure must not.
    assert _measure.count_tokens("word " * 250_000) == 250_001


def test_rejects_non_text() -> None:
    with pytest.raises(TypeError, match="takes a str"):
        _measure.count_tokens(b"bytes")  # type: ignore[arg-type]


def test_counts_with_no_network_and_no_subprocess() -> None:
    """A fresh interpreter whose audit hook refuses sockets and subprocesses still counts
    tokens, and never imports the ``bpe_openai`` package (its import parses files for half a
    second)."""
    program = """
import sys
from pathlib import Path
def refuse(event, args):
    if event.startswith(("socket.", "subprocess.", "os.system", "os.exec", "os.posix_spawn")):
        raise RuntimeError("refused: " + event)
sys.addaudithook(refuse)
from lionagi_turns.core import measure as _measure
assert _measure.encode("hello world") == [24912, 2375], _measure.encode("hello world")
assert "bpe_openai" not in sys.modules
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
