"""The package's import layers and size limits, read from the source with ``ast``.

Every ``import`` and ``from ... import`` in every module under ``src/lionagi_turns`` counts,
including imports inside functions (lazy ones) and under ``TYPE_CHECKING``. The rule, lowest
layer first; a module may import its own layer or a lower one:

 1. ``core.errors``, ``core.kinds``, ``core.values``, ``core.consistent``, ``core.version``
 2. ``core.contracts``, ``core.parts``, ``core.merge``, ``core.envelope``, ``core.measure``,
    ``core.memo`` (the text primitives a compile's memo answers)
 3. ``core.history``, ``core.fold``, ``core.render``, ``core.react``, ``core.durable``,
    ``core.providers``, ``core.support``, ``core.sections`` (a request's sections); above them
    ``core.rendered`` (one rendered turn)
 4. ``core.profile`` (the ``Memo`` protocol, ``NO_MEMO``), ``core.plan`` (the value the
    passes hand on), ``core.rendering`` (the render pass)
 5. ``core.pipeline`` (the passes), ``core`` (the package)
 6. ``memo.*``, inside in the order ``switch < yaml_tables < direct < yaml < track < identity <
    history < renders < resume < fast``
 7. ``profiles`` (its ``__init__``, ``_registry``, ``_run``, ``seed``) below
    ``profiles.prompt_cache.*`` and ``profiles.amendment1.*``, siblings that never import each
    other except where Amendment 1 composes the prompt-cache layout
    (``profiles.composed``); above them the public path
    ``lionagi_turns.amendment1`` (a re-export of ``profiles.amendment1``)
 8. ``integration.*``, inside ``_originals, _warnings, _adapters, _handover, _unanswered,
    _react < _anthropic, _prepare_compat, _repair, _resume, _cache < _registry < _compile <
    _in_call < _estimate, _structure, _budget, _run < _patches < _install < __init__`` (the
    patch table names every replacement, so it sits above them)
 9. ``characterize.*``
10. ``cli.*``
11. ``lionagi_turns`` itself and ``__main__``

Besides the order: no import circle; ``core`` imports nothing from ``memo``, ``profiles``,
``integration``, ``characterize`` or ``cli``; ``memo.switch`` is imported only by ``memo.*``,
``profiles._run``, ``profiles.seed`` and the top-level facade ``lionagi_turns``, which may
import it only to re-export the public ``no_fast_path`` (every other module takes the fast-path
decision from its compile's ``Memo``). Every module is at most 400 lines, every function at
most 60 lines.

Each ``KNOWN_*`` list holds exactly the violations the tree has today. A list may only shrink:
a new violation fails, and so does a listed one that is gone (delete its line).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = "lionagi_turns"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60

Edge = tuple[str, str]
Rank = tuple[int, int]

_CORE_LEVELS: tuple[tuple[str, ...], ...] = (
    ("errors", "kinds", "values", "consistent", "version", "_rich_view"),
    ("contracts", "parts", "merge", "envelope", "measure", "memo"),
    ("history", "fold", "render", "react", "durable", "providers", "support", "sections"),
    ("rendered",),
    ("profile", "plan", "rendering"),
    ("stage", "trace", "pipeline", "__init__"),
)
_MEMO_ORDER = (
    "switch", "yaml_tables", "direct", "yaml", "track", "identity", "branch_memory", "history",
    "renders", "resume", "fast",
)  # fmt: skip
_INTEGRATION_ORDER: tuple[tuple[str, ...], ...] = (
    ("_originals", "_warnings", "_adapters", "_handover", "_unanswered", "_react"),
    ("_anthropic", "_prepare_compat", "_repair", "_resume", "_cache"),
    ("_registry",),
    ("_compile",),
    ("_in_call",),
    ("_estimate", "_structure", "_budget", "_run"),
    ("_patches",),
    ("_install",),
    ("__init__",),
)  # fmt: skip
_PROFILES_BASE = ("__init__", "_registry", "_run", "seed")
_TOP = ("__init__", "__main__")
_NEVER_FROM_CORE = ("memo", "profiles", "integration", "characterize", "cli")
# the facade (``lionagi_turns`` itself) re-exports the public ``no_fast_path``
_SWITCH_USERS = ("lionagi_turns.profiles._run", "lionagi_turns.profiles.seed", "lionagi_turns")
_SIBLING_JOIN = "lionagi_turns.profiles.composed"  # Amendment 1 over the layout

# -- the violations of today; each list may only shrink ---------------------------------------

KNOWN_LAYER_VIOLATIONS: frozenset[str] = frozenset()
KNOWN_CIRCLE_EDGES: frozenset[str] = frozenset()
KNOWN_CORE_IMPORTS: frozenset[str] = frozenset()
KNOWN_SWITCH_IMPORTS: frozenset[str] = frozenset()
KNOWN_SIBLING_IMPORTS: frozenset[str] = frozenset()
KNOWN_LONG_MODULES: frozenset[str] = frozenset()
KNOWN_LONG_FUNCTIONS: frozenset[str] = frozenset()


# -- reading the source ---------------------------------------------------------------------


@cache
def modules() -> dict[str, Path]:
    """Every module of the package by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _is_package(name: str) -> bool:
    return modules()[name].name == "__init__.py"


def _target(name: str) -> str | None:
    """The package's module that an import of ``name`` loads last, if it is ours."""
    while name and name not in modules():
        name = name.rpartition(".")[0]
    return name or None


def _imported(importer: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
        return
    base = node.module or ""
    if node.level:
        anchor = importer.split(".")
        anchor = anchor if _is_package(importer) else anchor[:-1]
        anchor = anchor[: len(anchor) - (node.level - 1)]
        base = ".".join([*anchor, base] if base else anchor)
    for alias in node.names:
        yield f"{base}.{alias.name}"


@cache
def edges() -> frozenset[Edge]:
    """(importer, imported) for every import of one of the package's modules by another."""
    found: set[Edge] = set()
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for dotted in _imported(name, node):
                    target = _target(dotted)
                    if target is not None and target != name:
                        found.add((name, target))
    return frozenset(found)


# -- the rule -----------------------------------------------------------------------------


def _leaf(name: str, package: str) -> str:
    rest = name.removeprefix(package).lstrip(".")
    return rest.split(".")[0] if rest else "__init__"


def _position(leaf: str, order: tuple[tuple[str, ...], ...]) -> int:
    for index, group in enumerate(order):
        if leaf in group:
            return index
    raise AssertionError(f"{leaf!r} has no place in the layer order {order}; give it one")


def rank(name: str) -> Rank:
    """(layer, place inside the layer) of a module; a lower rank never imports a higher one."""
    relative = name.removeprefix(PACKAGE).lstrip(".")
    head = relative.split(".")[0] if relative else "__init__"
    if head == "core":
        return (_position(_leaf(name, f"{PACKAGE}.core"), _CORE_LEVELS) + 1, 0)
    if head == "memo":
        leaf = _leaf(name, f"{PACKAGE}.memo")
        return (6, _MEMO_ORDER.index(leaf) if leaf in _MEMO_ORDER else -1)
    if head == "profiles":
        return (7, 0 if _leaf(name, f"{PACKAGE}.profiles") in _PROFILES_BASE else 1)
    if head == "amendment1":
        return (7, 2)  # the public path of profiles.amendment1
    if head == "integration":
        leaf = _leaf(name, f"{PACKAGE}.integration")
        known = any(leaf in group for group in _INTEGRATION_ORDER)
        return (8, _position(leaf, _INTEGRATION_ORDER) if known else -1)
    if head == "characterize":
        return (9, 0)
    if head == "cli":
        return (10, 0)
    if head in _TOP or modules()[name].parent == SRC / PACKAGE:
        return (11, 0)  # the facade
    raise AssertionError(f"{name} belongs to no layer; add it to the rule in this test")


def climbs(importer: str, imported: str) -> bool:
    """Whether an import goes to a higher layer (or a higher place inside its layer)."""
    (layer, place), (to_layer, to_place) = rank(importer), rank(imported)
    if layer != to_layer:
        return to_layer > layer
    return place >= 0 and to_place >= 0 and to_place > place


def _profile_of(name: str) -> str | None:
    for profile in ("prompt_cache", "amendment1"):
        if name.startswith(f"{PACKAGE}.profiles.{profile}"):
            return profile
    return None


def circles(graph: frozenset[Edge]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    successors: dict[str, list[str]] = {}
    for source, target in sorted(graph):
        successors.setdefault(source, []).append(target)
        successors.setdefault(target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in successors:
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(successors[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(frozenset(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(successors[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def _in_a_circle(edge: Edge, graph: frozenset[Edge]) -> bool:
    return any(edge[0] in c and edge[1] in c for c in circles(graph))


# -- the checks ---------------------------------------------------------------------------


def _short(edge: Edge) -> str:
    return " -> ".join(part.removeprefix(f"{PACKAGE}.") for part in edge)


def _assert_only_shrinks(kind: str, now: set[str], known: frozenset[str]) -> None:
    new, gone = sorted(now - known), sorted(known - now)
    assert not new, f"new {kind}: {new}"
    assert not gone, f"{kind} no longer found, delete from the known list: {gone}"


def test_the_source_is_read() -> None:
    assert len(modules()) > 50
    assert (f"{PACKAGE}.core.pipeline", f"{PACKAGE}.core.history") in edges()


def test_every_module_has_a_layer() -> None:
    for name in modules():
        rank(name)


def test_no_import_circle_but_the_known_ones() -> None:
    graph = edges()
    left = circles(frozenset(e for e in graph if _short(e) not in KNOWN_CIRCLE_EDGES))
    assert not left, "import circles: " + "; ".join(" ".join(sorted(c)) for c in left)
    closing = {_short(e) for e in graph if _in_a_circle(e, graph)}
    stale = sorted(KNOWN_CIRCLE_EDGES - closing)
    assert not stale, f"no longer in a circle, delete from the known list: {stale}"


def test_imports_go_down_the_layers() -> None:
    now = {_short(edge) for edge in edges() if climbs(*edge)}
    _assert_only_shrinks("imports up the layers", now, KNOWN_LAYER_VIOLATIONS)


def test_core_imports_nothing_above_it() -> None:
    above = tuple(f"{PACKAGE}.{package}" for package in _NEVER_FROM_CORE)
    now = {
        _short((source, target))
        for source, target in edges()
        if source.startswith(f"{PACKAGE}.core") and target.startswith(above)
    }
    _assert_only_shrinks("core imports from above core", now, KNOWN_CORE_IMPORTS)


def test_the_switch_is_read_only_by_memo_and_the_profile_runner() -> None:
    switch = f"{PACKAGE}.memo.switch"
    now = {
        _short((source, target))
        for source, target in edges()
        if target == switch
        and not source.startswith(f"{PACKAGE}.memo")
        and source not in _SWITCH_USERS
    }
    _assert_only_shrinks("imports of memo.switch", now, KNOWN_SWITCH_IMPORTS)


def test_the_two_profiles_meet_only_where_amendment1_composes_the_layout() -> None:
    now = {
        _short((source, target))
        for source, target in edges()
        if source != _SIBLING_JOIN
        and _profile_of(source) is not None
        and _profile_of(target) is not None
        and _profile_of(source) != _profile_of(target)
    }
    _assert_only_shrinks("imports between the two profiles", now, KNOWN_SIBLING_IMPORTS)


def _relative(path: Path) -> str:
    return path.relative_to(SRC / PACKAGE).as_posix()


def test_modules_are_at_most_400_lines() -> None:
    now = {
        _relative(path)
        for path in modules().values()
        if len(path.read_text(encoding="utf-8").splitlines()) > MAX_MODULE_LINES
    }
    _assert_only_shrinks("modules over 400 lines", now, KNOWN_LONG_MODULES)


def _long_functions(path: Path) -> Iterator[str]:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            assert node.end_lineno is not None
            if node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
                yield f"{_relative(path)}::{node.name}"


def test_functions_are_at_most_60_lines() -> None:
    now = {name for path in modules().values() for name in _long_functions(path)}
    _assert_only_shrinks("functions over 60 lines", now, KNOWN_LONG_FUNCTIONS)


@pytest.mark.parametrize(
    ("importer", "imported", "expected"),
    [
        ("core.pipeline", "core.history", False),
        ("core.errors", "core.pipeline", True),
        ("core.pipeline", "memo.renders", True),
        ("memo.direct", "memo.yaml", True),
        ("memo.yaml", "memo.direct", False),
        ("profiles.prompt_cache._compile", "profiles._run", False),
        ("profiles._run", "profiles.prompt_cache._compile", True),
        ("integration._install", "integration._adapters", False),
        ("integration._adapters", "integration._install", True),
        ("cli._diff", "characterize.legacy", False),
        ("characterize.legacy", "cli._app", True),
        ("integration", "cli", True),
    ],
)
def test_the_rule_itself(importer: str, imported: str, expected: bool) -> None:
    assert climbs(f"{PACKAGE}.{importer}", f"{PACKAGE}.{imported}") is expected
