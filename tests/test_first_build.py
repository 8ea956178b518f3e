"""A first build goes to a scratch database without a journal, renamed into place when done."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from knoxidx.graph import dbfile
from knoxidx.graph import store as store_module
from knoxidx.graph.workspace import NamedDefinitions
from knoxidx.index import Index
from tests.helpers import build

N = 60  # above the worker pool's threshold: the parallel parse runs too


def files(n: int = N) -> dict[str, str]:
    return {f"m{i}.py": f"from m{(i + 1) % n} import f{(i + 1) % n}\n\n"
                        f"def f{i}():\n    return f{(i + 1) % n}()\n" for i in range(n)}


def test_a_first_build_is_renamed_into_place_and_left_in_wal_mode(repo) -> None:
    root = repo(files())
    with Index.open(root, create=True) as idx:
        # a reader that opened the empty index before the build keeps a sound view of it
        reader = sqlite3.connect(root / ".knoxidx" / "index.db")
        assert reader.execute("SELECT count(*) FROM files").fetchone()[0] == 0
        old_inode = (root / ".knoxidx" / "index.db").stat().st_ino
        report = idx.update(jobs=2)
        assert report.changed == N
        assert (root / ".knoxidx" / "index.db").stat().st_ino != old_inode  # renamed over
        assert idx.callers("f1")["callers"]  # the Index reads the new database at once
        assert reader.execute("SELECT count(*) FROM files").fetchone()[0] == 0
        reader.close()
    left = sorted(p.name for p in (root / ".knoxidx").iterdir())
    assert not [name for name in left if ".new" in name], left
    conn = sqlite3.connect(root / ".knoxidx" / "index.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT count(*) FROM files").fetchone()[0] == N
    # an incremental update then writes through the WAL as usual
    (root / "m0.py").write_text("def f0():\n    return 0\n")
    assert build(root).changed == 1


def test_a_first_build_equals_one_made_in_place(repo, tmp_path: Path, monkeypatch) -> None:
    from knoxidx.graph import export

    root = repo(files())
    build(root, jobs=2)
    with Index.open(root) as idx:
        aside = export.canonical(idx.q)
    (root / ".knoxidx" / "index.db").unlink()
    monkeypatch.setattr(store_module.SQLiteStore, "is_empty", lambda self: False)
    build(root, jobs=2)
    with Index.open(root) as idx:
        assert export.canonical(idx.q) == aside


def test_a_failed_first_build_leaves_the_empty_index_and_no_scratch(repo, monkeypatch) -> None:
    from knoxidx.update import graph_update as pipeline

    root = repo(files())

    def fail(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(pipeline, "first_module_layer", fail)  # late in the update
    with Index.open(root, create=True) as idx, pytest.raises(RuntimeError, match="on fire"):
        idx.update(jobs=2)
    assert not list((root / ".knoxidx").glob("index.db.new*"))
    with Index.open(root) as idx:
        assert idx.stats()["files"] == {}
    monkeypatch.undo()
    assert build(root, jobs=2).changed == N


def test_a_killed_first_builds_leftover_scratch_is_replaced(repo) -> None:
    root = repo(files(5))
    with Index.open(root, create=True):
        pass
    scratch = root / ".knoxidx" / "index.db.new"
    scratch.write_bytes(b"half a database")
    (root / ".knoxidx" / "index.db.new-journal").write_bytes(b"junk")
    assert build(root).changed == 5
    assert not list((root / ".knoxidx").glob("index.db.new*"))
    with Index.open(root) as idx:
        assert idx.callers("f1")["callers"]


def test_an_index_killed_while_being_created_never_appears_half_made(repo) -> None:
    """Killed while SQLite set up the new file, an index made in place was left with a hot
    rollback journal that read-only connections cannot replay; now the file appears whole or
    not at all, and what the killed process left is cleared by the next one."""
    import subprocess
    import sys

    root = repo(files(3))
    killer = (
        "import os, sys\n"
        "from knoxidx.graph import store\n"
        "store.SQLiteStore._create_schema = lambda self: os._exit(9)\n"
        "from knoxidx.index import Index\n"
        f"Index.open({str(root)!r}, create=True)\n"
    )
    assert subprocess.run([sys.executable, "-c", killer]).returncode == 9
    index_dir = root / ".knoxidx"
    assert not (index_dir / "index.db").exists()
    assert list(index_dir.glob("index.db.*.init*"))  # what the killed process left
    assert build(root).changed == 3
    assert not list(index_dir.glob("index.db.*.init*"))
    conn = sqlite3.connect(f"file:{index_dir / 'index.db'}?mode=ro", uri=True)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_rebuild_drops_the_old_indexs_vector_matrices(repo) -> None:
    root = repo(files(3))
    build(root)
    kept = root / ".knoxidx" / "vectors-0123abcd.f32.npy"
    kept.write_bytes(b"\x93NUMPY stale copy of the old index's vectors")
    with Index.open(root) as idx:
        idx.update(rebuild=True)
    assert not kept.exists()


def test_an_index_is_created_where_hard_links_are_not_allowed(repo, monkeypatch) -> None:
    import os

    def no_links(src, dst):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "link", no_links)
    root = repo(files(3))
    assert build(root).changed == 3
    assert not list((root / ".knoxidx").glob("index.db.*.init*"))
    with Index.open(root) as idx:
        assert idx.callers("f1")["callers"]


@pytest.mark.parametrize("language", ["python", "typescript", "javascript", "go", "rust", "java"])
def test_a_first_builds_module_layer_equals_the_general_rebuild(language: str, tmp_path: Path) \
        -> None:
    """A first build aggregates DependsOn (and keeps the imported external modules) itself,
    from the Imports edges it wrote; the store's SQL does it on every other update. Both give
    the same module layer: module nodes, module -> file Contains, DependsOn, externals."""
    import shutil

    from knoxidx.graph import export
    from knoxidx.update import module_layer

    root = tmp_path / language
    shutil.copytree(Path(__file__).resolve().parents[1] / "fixtures" / language, root,
                    ignore=shutil.ignore_patterns(".knoxidx"))
    build(root)
    with Index.open(root) as idx:
        first = export.canonical(idx.q)
        layer = [e for e in first[1] if e[2] in ("DependsOn", "Contains") and e[4] is None]
        assert any(e[2] == "DependsOn" for e in layer)
        with idx.store.transaction():
            module_layer.rebuild_module_layer(idx.store)
        assert export.canonical(idx.q) == first


def test_a_first_build_gives_no_module_a_dependency_on_itself(repo) -> None:
    """A Java file importing a class of its own package imports a file of its own module:
    no DependsOn app -> app, from either path."""
    from knoxidx.graph import export
    from knoxidx.update import module_layer

    root = repo({
        "app/A.java": "package app;\nimport app.B;\nimport lib.C;\nimport java.util.List;\n"
                      "public class A { B b; C c; List<B> bs; }\n",
        "app/B.java": "package app;\npublic class B {}\n",
        "lib/C.java": "package lib;\npublic class C {}\n",
    })
    build(root)
    with Index.open(root) as idx:
        first = export.canonical(idx.q)
        imports = {(e[0], e[1]) for e in first[1] if e[2] == "Imports"}
        depends = {(e[0], e[1]) for e in first[1] if e[2] == "DependsOn"}
        assert len(imports) == 3 and len(depends) == 2, (imports, depends)
        assert all(source != target for source, target in depends)
        with idx.store.transaction():
            module_layer.rebuild_module_layer(idx.store)
        assert export.canonical(idx.q) == first


def test_definitions_gathered_file_by_file_in_any_order_answer_in_the_stores_order(repo) -> None:
    """A first build hands the resolver its definitions by name as the parse results came
    (in any order of files): they must be listed as the store lists them, by path and index,
    or the resolver's candidates would follow the workers' timing."""
    sources = {f"m{i}.py": "class C:\n    def f(self):\n        pass\n\ndef f():\n    pass\n"
               for i in range(4)}
    sources.update({f"g{i}.go": f"package p\n\nfunc (t *T) M{i}() {{}}\n" for i in range(3)})
    root = repo(sources)
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1)
        rows = idx.store.all_named_defs()
    by_path: dict[str, list[tuple]] = {}
    for row in rows:
        by_path.setdefault(row[3], []).append(row)
    gathered = NamedDefinitions()
    for path in sorted(by_path, reverse=True):
        gathered.add(by_path[path])
    expected = NamedDefinitions()
    expected.add(rows)
    assert gathered.tables() == expected.tables()
    named, owned = gathered.tables()
    assert [path for path, *_ in named[("python", "f")]] == [
        "m0.py", "m0.py", "m1.py", "m1.py", "m2.py", "m2.py", "m3.py", "m3.py"]
    assert [path for path, *_ in owned[("go", "T")]] == ["g0.go", "g1.go", "g2.go"]


def test_a_small_first_build_resolves_without_a_query_per_name(repo, monkeypatch) -> None:
    """A first build of few files (below the update's preload threshold) resolves from the
    definitions it gathered while writing the rows, as a large one does: asking the store for
    each name and module instead cost java's sample 5,000 queries."""
    asked: list[str] = []
    for method in ("defs_named", "methods_of", "module_paths"):
        real = getattr(store_module.SQLiteStore, method)

        def spy(self, *args, _real=real, _method=method):
            asked.append(_method)
            return _real(self, *args)

        monkeypatch.setattr(store_module.SQLiteStore, method, spy)
    root = repo(files(8))
    build(root, jobs=1)
    assert asked == []
    with Index.open(root) as idx:
        assert idx.callers("f1")["callers"]


def test_an_index_and_its_spool_have_large_pages_and_an_older_index_keeps_its_own(
        repo, tmp_path: Path, monkeypatch) -> None:
    """New indexes (made empty, or by a first build) and resolution spools are written in
    PAGE_BYTES pages; an index made with SQLite's default pages is updated as it is."""
    root = repo(files())
    with Index.open(root, create=True) as idx:
        empty = sqlite3.connect(root / ".knoxidx" / "index.db")
        assert empty.execute("PRAGMA page_size").fetchone()[0] == dbfile.PAGE_BYTES
        empty.close()
        idx.update(jobs=2)
    conn = sqlite3.connect(root / ".knoxidx" / "index.db")
    assert conn.execute("PRAGMA page_size").fetchone()[0] == dbfile.PAGE_BYTES
    conn.close()
    spool = dbfile.unjournaled_connection(tmp_path / "spool")  # a spool's connection
    spool.execute("CREATE TABLE t(x)")
    assert spool.execute("PRAGMA page_size").fetchone()[0] == dbfile.PAGE_BYTES
    spool.close()
    old = tmp_path / "old"
    old.mkdir()
    (old / "a.py").write_text("def f():\n    return g()\n\ndef g():\n    return 1\n")
    monkeypatch.setattr(store_module, "PAGE_BYTES", 4096)  # the index's own connection
    monkeypatch.setattr(dbfile, "PAGE_BYTES", 4096)  # a first build's scratch database
    build(old)
    monkeypatch.undo()
    (old / "a.py").write_text("def f():\n    return g() + 1\n\ndef g():\n    return 1\n")
    assert build(old).changed == 1
    conn = sqlite3.connect(old / ".knoxidx" / "index.db")
    assert conn.execute("PRAGMA page_size").fetchone()[0] == 4096
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    with Index.open(old) as idx:
        assert [c["name"] for c in idx.callers("g")["callers"]] == ["f"]


@pytest.mark.parametrize("n", [N, 210])  # 210: past PRELOAD_THRESHOLD, resolver workers too
def test_the_chunks_are_written_while_the_files_resolve(repo, monkeypatch, n: int) -> None:
    """The retrieval phase's writes need the files, not their edges: the update runs them
    before it resolves anything itself, beside its resolver workers, not alone after them."""
    from knoxidx.update import retrieval_steps

    seen: list[tuple[int, int]] = []
    refresh = retrieval_steps.refresh_retrieval

    def watched(index, **kwargs):
        conn = index.store.conn
        seen.append((conn.execute("SELECT count(*) FROM files").fetchone()[0],
                     conn.execute("SELECT count(*) FROM edges").fetchone()[0]))
        return refresh(index, **kwargs)

    monkeypatch.setattr(retrieval_steps, "refresh_retrieval", watched)
    root = repo(files(n))
    with Index.open(root, create=True) as idx:
        report = idx.update(jobs=2)
        assert seen == [(n, 0)]  # once, every file written, no edge yet
        assert report.retrieval["chunks"] >= n and idx.callers("f1")["callers"]


@pytest.mark.parametrize("emptied", ["never held a file", "every file deleted"])
def test_files_come_to_an_index_that_holds_none(repo, emptied: str) -> None:
    """An index with no file (an empty directory indexed, or every file deleted) still has
    its module layer's run of rows: the next build is a first one again and must not trip
    over it."""
    from knoxidx.update.verify import verify_index

    root = repo({} if emptied == "never held a file" else files(3))
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1)
        for path in root.glob("m*.py"):
            path.unlink()
        idx.update(jobs=1)
        for name, text in files(3).items():
            (root / name).write_text(text)
        report = idx.update(jobs=1)
        assert report.changed == 3 and idx.callers("f1")["callers"]
        assert verify_index(idx)["equal"]
