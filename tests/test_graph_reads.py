"""The seam between the graph and what reads it (retrieval, answers): both stores' queries answer
every question of :class:`GraphReads` with the same parameters, and an open index is an
:class:`IndexedGraph`."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from knoxidx.graph.pg_queries import PgGraphQueries
from knoxidx.graph.protocol import GraphReads, IndexedGraph
from knoxidx.graph.queries import GraphQueries
from knoxidx.index import Index

READS = sorted(name for name, value in vars(GraphReads).items()
               if callable(value) and not name.startswith("_"))


def test_the_seam_names_the_questions_retrieval_asks() -> None:
    assert {"nodes_named", "node_at", "edges", "edges_of_types", "scoped"} <= set(READS)


@pytest.mark.parametrize("queries", [GraphQueries, PgGraphQueries])
@pytest.mark.parametrize("name", READS)
def test_both_stores_queries_answer_it(queries: type, name: str) -> None:
    method = getattr(queries, name, None)
    assert callable(method), f"{queries.__name__} lacks {name}"
    wanted = list(inspect.signature(getattr(GraphReads, name)).parameters)
    assert list(inspect.signature(method).parameters) == wanted


def test_an_open_index_is_an_indexed_graph(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    return 1\n")
    with Index.open(tmp_path, create=True) as idx:
        idx.update()
        for attribute in IndexedGraph.__annotations__:
            assert hasattr(idx, attribute), attribute
        assert idx.q.scoped("any") is idx.q
        assert idx.q.nodes_named("f")[0]["name"] == "f"
