"""Coverage of the fixture projects: each one makes knoxidx produce every node kind its language
has and every edge type, and its deliberately broken file is still indexed.

This guards the fixtures as much as the tool: a fixture edited so that it no longer exercises,
say, Implements would leave the golden test green but prove less. What each edge *says* is the
golden test's business (tests/test_golden.py).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.test_golden import FIXTURE_NAMES, Graph, index_fixture

ALL_KINDS = frozenset(
    {"Function", "Class", "Interface", "Type", "Variable", "Constant", "Module", "File"}
)
# Exactly the kinds each language has: Python has no interfaces (a Protocol is a class), plain
# JavaScript neither interfaces nor type aliases, Java no type aliases.
NODE_KINDS: dict[str, frozenset[str]] = {
    "python": ALL_KINDS - {"Interface"},
    "typescript": ALL_KINDS,
    "javascript": ALL_KINDS - {"Interface", "Type"},
    "go": ALL_KINDS,
    "rust": ALL_KINDS,
    "java": ALL_KINDS - {"Type"},
}
EDGE_TYPES = frozenset(
    {"Calls", "Imports", "Uses", "References", "Defines", "Contains", "DependsOn"}
)
INHERITANCE = frozenset({"Extends", "Implements"})
# The file in each fixture with a syntax error, and definitions tree-sitter still recovers
# from it (including ones after the error).
BROKEN: dict[str, tuple[str, tuple[str, ...]]] = {
    "python": ("shop/legacy.py", ("parse_row", "parse_price", "import_rows")),
    "typescript": ("src/broken.ts", ("count", "summary", "first")),
    "javascript": ("lib/broken.js", ("migrate", "rollback")),
    "go": ("internal/api/stats.go", ("Stats", "Routes")),
    "rust": ("src/broken.rs", ("parse_line", "parse_all")),
    "java": ("src/main/java/com/acme/library/service/Reports.java",
             ("count", "overdue", "header")),
}
CONFIDENCES = frozenset({"exact", "inferred", "name"})

_graphs: dict[str, Graph] = {}


@pytest.fixture
def graph(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Graph:
    """Each fixture is indexed once per session (the three tests below only read it)."""
    name = request.param
    if name not in _graphs:
        _graphs[name] = index_fixture(name, tmp_path_factory.mktemp(f"smoke-{name}"))
    return _graphs[name]


def _kinds(graph: Graph) -> Counter[str]:
    return Counter(n["kind"] for n in graph.nodes)


def _types(graph: Graph) -> Counter[str]:
    return Counter(e["type"] for e in graph.edges)


@pytest.mark.parametrize("graph", FIXTURE_NAMES, indirect=True)
def test_every_node_kind_of_the_language(graph: Graph, request: pytest.FixtureRequest) -> None:
    fixture = request.node.callspec.params["graph"]
    assert set(_kinds(graph)) == NODE_KINDS[fixture], _kinds(graph)


@pytest.mark.parametrize("graph", FIXTURE_NAMES, indirect=True)
def test_every_edge_type(graph: Graph) -> None:
    types = _types(graph)
    missing = sorted(EDGE_TYPES - set(types))
    assert not missing, f"no {missing} edge in {dict(types)}"
    assert INHERITANCE & set(types), f"neither Extends nor Implements in {dict(types)}"
    assert {e["confidence"] for e in graph.edges} <= CONFIDENCES


@pytest.mark.parametrize("graph", FIXTURE_NAMES, indirect=True)
def test_broken_file_is_indexed_as_far_as_it_parses(
    graph: Graph, request: pytest.FixtureRequest
) -> None:
    fixture = request.node.callspec.params["graph"]
    path, expected = BROKEN[fixture]
    assert (Path(__file__).parent.parent / "fixtures" / fixture / path).is_file()
    assert any(w.startswith(f"{path}:") and "syntax error" in w for w in graph.warnings), (
        graph.warnings
    )
    functions = {n["name"] for n in graph.nodes if n["path"] == path and n["kind"] == "Function"}
    assert set(expected) <= functions, functions
