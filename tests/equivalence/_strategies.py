"""Hypothesis strategies for the fast-path tests: nested values, in and out of the proven
domain of ``lionagi_turns.memo.yaml``."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

# Characters YAML emitters treat specially, plus characters either side of the domain's edges.
TRICKY = (
    " \t\n\r-:#'\"|>!&*%@`{}[],?~.=<0123abcXYZ"
    "\x00\x07\x1b\x7f\x85\xa0\xe9\u2028\u2029\u3000\u4e2d\ud7ff\ue000\ufeff\ufffd\ufffe"
    "\U0001f600"
)
# Inside the domain only (see _fastyaml's docstring).
SAFE = " \t\n-:#'\"|>!&*%@`{}[],?~.=<0123abcXYZ\xa0\xe9\u2014\u3000\u4e2d\ud7ff\ue000\ufffd"

SPECIAL = [
    "yes", "No", "null", "~", "true", "1e3", "0x1F", "1_000", "-.inf", ".nan", "2001-12-14",
    "=", "<<", " a", "a ", "a\n", "a\n ", " \na", "\ta", "a\t\nb", "a  \nb", "\n\na", "- a",
    "a: b", "#x", "a #b", "---", "...", "a\n...\nb", "a\n---\nb", "x" * 130, "k" * 129,
]


def texts(alphabet: str) -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(st.sampled_from(alphabet), max_size=14),
        st.text(st.sampled_from(alphabet), min_size=120, max_size=140),
        st.text(st.sampled_from(alphabet), min_size=40, max_size=70),
        st.sampled_from(SPECIAL),
    )


def nested(keys: st.SearchStrategy[Any], strings: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), strings)
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=4)
        ),
        max_leaves=16,
    )


def _domain_text() -> st.SearchStrategy[str]:
    return texts(SAFE).filter(lambda s: s != "\n" and not s.endswith("\n\n"))


def _domain_key() -> st.SearchStrategy[str]:
    return _domain_text().filter(lambda s: bool(s) and len(s.encode("utf-8")) < 128)


# Anything: odd keys (empty, numbers, None, bools), any unicode, root scalars.
ANY_VALUE = nested(
    st.one_of(texts(TRICKY), st.text(max_size=6), st.integers(), st.booleans(), st.none(),
              st.floats()),
    st.one_of(texts(TRICKY), st.text(max_size=10)),
)

# Dict/list roots whose every string, key and leaf is inside the proven domain.
DOMAIN_VALUE = st.one_of(
    st.lists(nested(_domain_key(), _domain_text()), min_size=1, max_size=4),
    st.dictionaries(
        _domain_key(), nested(_domain_key(), _domain_text()), min_size=1, max_size=4
    ),
)


def outcome(render: Any, value: Any) -> tuple[str, str]:
    """``("ok", text)`` or ``("error", exception type)``: what the differential tests compare,
    so both renderers must succeed alike or fail alike."""
    try:
        return ("ok", render(value))
    except Exception as exc:
        return ("error", type(exc).__name__)
