"""bench/peers.py: the function-pair measure and the reading of a peer's graph, on tiny
hand-written inputs (the peers themselves are installed by whoever runs the benchmark)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bench.accuracy import Export, Oracle
from bench.peers import codegraph_export, oracle_rows, pair_accuracy


def node(id: str, kind: str, name: str, path: str, start: int, end: int) -> dict[str, Any]:
    return {"id": id, "kind": kind, "name": name, "path": path, "start_line": start,
            "end_line": end}


def call(path: str, line: int, target_path: str, target_line: int, name: str) -> dict[str, Any]:
    return {"kind": "call", "path": path, "line": line, "col": 0, "name": name,
            "target_path": target_path, "target_line": target_line, "target_name": name}


NODES = [
    node("fa", "File", "a.py", "a.py", 1, 30),
    node("f", "Function", "f", "a.py", 3, 8),
    node("inner", "Function", "inner", "a.py", 5, 6),
    node("g", "Function", "g", "b.py", 1, 2),
    node("h", "Function", "h", "b.py", 4, 5),
    node("C", "Class", "C", "b.py", 7, 9),
]
ORACLE = Oracle.from_rows([
    {"kind": "file", "path": "a.py"},
    call("a.py", 4, "b.py", 1, "g"),   # f -> g
    call("a.py", 7, "b.py", 1, "g"),   # f -> g again: one pair
    call("a.py", 5, "b.py", 4, "h"),   # inner -> h (the innermost function is the caller)
    call("a.py", 20, "b.py", 7, "C"),  # at the top level: the file calls C
    call("a.py", 7, "b.py", 40, "gone"),  # a target the tool lacks: never matched
])


def edge(source: str, target: str, line: int | None) -> dict[str, Any]:
    return {"source": source, "target": target, "type": "Calls", "confidence": "exact",
            "path": "a.py", "line": line}


def test_pairs_are_judged_whatever_the_line() -> None:
    graph = Export({"nodes": NODES, "edges": [
        edge("f", "g", None),      # no call site recorded (as gitnexus): still the pair f -> g
        edge("f", "h", 4),         # wrong: inner calls h, not f
        edge("inner", "h", 5),
        edge("fa", "C", 20),
    ]})
    score = pair_accuracy(ORACLE, graph)
    assert score == {"precision": 3 / 4, "recall": 3 / 4, "pairs": 4, "rows": 4}


def test_a_tool_crediting_the_outer_function_loses_the_pair() -> None:
    graph = Export({"nodes": NODES, "edges": [edge("f", "h", 5)]})
    score = pair_accuracy(ORACLE, graph)
    assert score["precision"] == 0.0
    assert score["recall"] == 0.0


def test_codegraph_graph_reads_as_an_export(tmp_path: Path) -> None:
    db_dir = tmp_path / ".codegraph"
    db_dir.mkdir()
    db = sqlite3.connect(db_dir / "codegraph.db")
    db.executescript("""
        create table nodes (id text primary key, kind text, name text, file_path text,
                            start_line integer, end_line integer);
        create table edges (id integer primary key, source text, target text, kind text,
                            line integer);
        insert into nodes values ('m:run', 'method', 'run', 'a.py', 3, 8),
                                 ('c:Job', 'class', 'Job', 'b.py', 1, 9),
                                 ('i:os', 'import', 'os', 'a.py', 1, 1);
        insert into edges values (1, 'm:run', 'c:Job', 'instantiates', 5),
                                 (2, 'm:run', 'm:run', 'calls', 7),
                                 (3, 'm:run', 'i:os', 'references', 4),
                                 (4, 'm:run', 'c:Job', 'calls', null);
    """)
    db.commit()
    db.close()
    data = codegraph_export(tmp_path)
    kinds = {n["id"]: n["kind"] for n in data["nodes"]}
    assert kinds == {"m:run": "Function", "c:Job": "Class", "i:os": "Import"}
    assert sorted((e["source"], e["target"], e["line"], e["path"]) for e in data["edges"]) == [
        ("m:run", "c:Job", 5, "a.py"), ("m:run", "m:run", 7, "a.py")]


@pytest.mark.parametrize("missing", ["nodes", "edges"])
def test_an_empty_side_scores_none(missing: str) -> None:
    data: dict[str, Any] = {"nodes": NODES, "edges": [edge("f", "g", 4)]}
    data["edges" if missing == "edges" else "nodes"] = []
    score = pair_accuracy(ORACLE, Export(data))
    assert score["pairs"] == 0
    assert score["precision"] is None


def test_a_missing_oracle_file_is_built_not_skipped(tmp_path: Path) -> None:
    """``bench.peers`` read the oracle rows from files the accuracy suite no longer writes, and
    with them missing left every tool's accuracy columns empty without a word; now the rows are
    made on first use (and reused after)."""
    pytest.importorskip("jedi")
    corpus = tmp_path / "django"
    corpus.mkdir()
    (corpus / "a.py").write_text("def helper():\n    return 1\n\n\ndef main():\n    return helper()\n")
    path = oracle_rows("django", corpus, cache_dir=tmp_path / "cache")
    rows = Oracle.load(path)
    assert [(c.path, c.line) for c in rows.calls] == [("a.py", 6)]
    made = path.stat().st_mtime_ns
    assert oracle_rows("django", corpus, cache_dir=tmp_path / "cache") == path
    assert path.stat().st_mtime_ns == made
