"""``python -m bench.native_query``: its native matches are checked against py-tree-sitter's
before anything is timed, and that check fails when they differ. Slow: it downloads the
tree-sitter source distribution once (the package registry) and compiles it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.native_query.__main__ import build, same_matches

pytestmark = pytest.mark.slow
FIXTURES = Path(__file__).parents[2] / "fixtures"


def _python_trees() -> tuple[Any, list[Any]]:
    from tree_sitter import Parser, Query

    from knoxidx.indexer.languages import query_source, ts_language

    lang = ts_language("python")
    parser = Parser(lang)
    trees = [parser.parse(p.read_bytes()) for p in sorted((FIXTURES / "python").rglob("*.py"))]
    return Query(lang, query_source("python")), trees


def test_native_matches_are_py_tree_sitters() -> None:
    query, trees = _python_trees()
    assert same_matches(build(), query, trees, 1000) > 100


def test_a_lost_match_fails_the_check() -> None:
    native = build()
    query, trees = _python_trees()

    class Lossy:
        predicate_steps = staticmethod(native.predicate_steps)

        @staticmethod
        def matches(*args: Any) -> list[Any]:
            return native.matches(*args)[:-1]

    with pytest.raises(AssertionError, match="differ"):
        same_matches(Lossy(), query, trees, 1000)
