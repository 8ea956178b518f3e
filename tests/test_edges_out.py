"""The edges out of a node are read from its file's run of rowids, not through an index by
source (``sqlite_schema.OUTSIDE_RUNS``): they must be every edge whose source it is, for every
fixture language, after edits, and for the edges whose source lies in another file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from knoxidx.index import Index
from tests.helpers import assert_edges_out_by_runs
from tests.test_golden import FIXTURE_NAMES, FIXTURES


@pytest.mark.parametrize("language", FIXTURE_NAMES)
def test_every_nodes_edges_out_are_read_from_its_files_run(language: str, tmp_path: Path) -> None:
    root = tmp_path / language
    shutil.copytree(FIXTURES / language, root, ignore=shutil.ignore_patterns(".knoxidx"))
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
        assert idx.store.conn.execute("SELECT count(*) FROM edges").fetchone()[0] > 20
        assert_edges_out_by_runs(idx.store)
        # an edited file's rows move to a new run at the end; a removed one's go
        files = sorted(p for p in root.rglob("*") if p.is_file() and ".knoxidx" not in p.parts
                       and p.suffix in (".py", ".ts", ".js", ".go", ".rs", ".java"))
        files[0].write_text("\n\n" + files[0].read_text(errors="replace"))
        files[-1].unlink()
        idx.update(jobs=1, retrieval=False)
        assert_edges_out_by_runs(idx.store)


def test_an_impl_in_another_file_than_its_type_is_an_edge_out_of_the_type(repo) -> None:
    """Rust's `impl Trait for T` in another file than T: the Implements edge's site is the
    impl's file, its source T's node, so it is not in the run of T's file."""
    root = repo({
        "Cargo.toml": '[package]\nname = "shelf"\nversion = "0.1.0"\n',
        "src/lib.rs": "pub mod book;\npub mod show;\n",
        "src/book.rs": "pub struct Book { pub title: String }\n",
        "src/show.rs": ("use crate::book::Book;\n\npub trait Show { fn show(&self) -> String; }\n\n"
                        "impl Show for Book {\n    fn show(&self) -> String { self.title.clone() }\n}\n"),
    })
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
        book = idx.q.nodes_named("Book", "Class")[0]
        out = idx.q.edges([book["id"]], "out")
        assert [(e["type"], e["path"]) for e in out] == [("Implements", "src/show.rs")]
        assert_edges_out_by_runs(idx.store)
        (root / "src" / "book.rs").write_text("\n" + (root / "src" / "book.rs").read_text())
        idx.update(jobs=1, retrieval=False)
        book = idx.q.nodes_named("Book", "Class")[0]
        assert [e["type"] for e in idx.q.edges([book["id"]], "out")] == ["Implements"]
        assert_edges_out_by_runs(idx.store)


def test_edges_of_types_are_the_edges_out_of_every_node(repo, backend) -> None:
    """What centrality reads (every edge of some types, at once) against the edges out of
    every node, on both stores."""
    root = repo({
        "pkg/__init__.py": "",
        "pkg/a.py": "from pkg.b import g\n\nclass A:\n    def f(self):\n        return g()\n",
        "pkg/b.py": "import os\n\ndef g():\n    return os.getcwd()\n",
    })
    backend.build(root)
    with backend.open(root) as idx:
        ids = [node["id"] for node in idx.q.all_nodes()]
        types = ("Calls", "Imports", "DependsOn")
        want = sorted((e["source"], e["target"], e["type"])
                      for e in idx.q.edges(ids, "out", types))
        assert {t for _, _, t in want} == set(types)
        assert sorted(idx.q.edges_of_types(types)) == want


@pytest.mark.parametrize("types", [0, 2])
def test_the_edges_out_query_seeks_and_scans_no_table(repo, types: int) -> None:
    """Its plan: the nodes by id, their files' runs by rowid, the others through
    edges_outside (a whole-table scan of the edges would still answer right, slowly)."""
    from knoxidx.graph.queries import edges_out_sql

    root = repo({"a.py": "def f():\n    return g()\n\ndef g():\n    return 1\n"})
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
        plan = [row[-1] for row in idx.store.conn.execute(
            "EXPLAIN QUERY PLAN " + edges_out_sql(3, types),
            [1, 2, 3, 1, 2, 3, *["Calls", "Uses"][:types], 1, 2, 3, *["Calls", "Uses"][:types]])]
    assert not [step for step in plan if step.startswith("SCAN")], plan
    assert any("USING INDEX edges_outside" in step for step in plan), plan
    assert any(step.startswith("SEARCH e USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)")
               for step in plan), plan
