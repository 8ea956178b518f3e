"""Forked resolvers write their rows into a spool that the parent copies in (graph/spool.py):
the graph is the one a serial build makes, each file's rows stay one run of rowids, and a
spool that cannot be written fails the update cleanly."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
from pathlib import Path

import pytest

from knoxidx.graph import export
from knoxidx.graph.spool import ResolutionSpool
from knoxidx.index import Index
from tests.helpers import build, write_tree

N = 260  # above PRELOAD_THRESHOLD: resolution forks, and the parent resolves a share


def _files(n: int = N, called: str = "f") -> dict[str, str]:
    files = {f"pkg/m{i}.py": f"from .m{(i + 1) % n} import {called}{(i + 1) % n}\n"
             f"import os\n\n"
             f"def {called}{i}():\n    return {called}{(i + 1) % n}() + missing{i}()\n"
             for i in range(n)}
    return {**files, "pkg/__init__.py": ""}


def _runs_hold_each_files_rows(db: Path) -> None:
    """Every file's rows in the edges, unresolved and lookups tables are exactly its run in
    file_rows (what an update deletes a file's rows by)."""
    conn = sqlite3.connect(db)
    try:
        runs = list(conn.execute("SELECT * FROM file_rows"))
        assert runs
        for file_id, *bounds in runs:
            for n, table in enumerate(("edges", "unresolved", "lookups")):
                lo, hi = bounds[2 * n : 2 * n + 2]
                in_run = conn.execute(
                    f"SELECT count(*), count(*) FILTER (WHERE coalesce(file_id, 0) = ?)"
                    f" FROM {table} WHERE rowid BETWEEN ? AND ?", (file_id, lo, hi)).fetchone()
                total = conn.execute(f"SELECT count(*) FROM {table} WHERE coalesce(file_id, 0)"
                                     " = ?", (file_id,)).fetchone()[0]
                assert in_run == (total, total), (table, file_id)
    finally:
        conn.close()


def _spooled_files(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many files each copy of a spool brought in, as the build runs."""
    copied: list[int] = []
    copy_in = ResolutionSpool.copy_in

    def counting(self):
        spool = sqlite3.connect(self.path)  # the children are done: the spool is whole
        copied.append(spool.execute("SELECT count(*) FROM file_rows").fetchone()[0])
        spool.close()
        copy_in(self)

    monkeypatch.setattr(ResolutionSpool, "copy_in", counting)
    return copied


@pytest.mark.parametrize("jobs", [2, 4])  # one child; three taking turns at the spool
@pytest.mark.heavy
def test_a_cold_build_copies_the_childs_rows_in_and_equals_a_serial_one(
        repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, jobs: int) -> None:
    root = repo(_files())
    copied = _spooled_files(monkeypatch)
    build(root, jobs=jobs)
    assert copied and 0 < copied[0] <= N + 1  # the child resolved files, through the spool
    index_dir = root / ".knoxidx"
    assert not list(index_dir.glob("*.spool.*"))  # removed after the copy
    _runs_hold_each_files_rows(index_dir / "index.db")
    with Index.open(root) as idx:
        parallel = export.canonical(idx.q)
    (index_dir / "index.db").unlink()
    build(root, jobs=1)
    with Index.open(root) as idx:
        assert export.canonical(idx.q) == parallel
    conn = sqlite3.connect(index_dir / "index.db")
    serial_rows = [list(conn.execute(f"SELECT count(*) FROM {t}"))
                   for t in ("unresolved", "lookups", "externals")]
    conn.close()
    build_again = write_tree(tmp_path / "again", _files())
    build(build_again, jobs=jobs)
    conn = sqlite3.connect(build_again / ".knoxidx" / "index.db")
    assert [list(conn.execute(f"SELECT count(*) FROM {t}"))
            for t in ("unresolved", "lookups", "externals")] == serial_rows
    conn.close()


@pytest.mark.heavy
def test_a_parallel_update_of_an_existing_index_keeps_each_files_rows_one_run(
        repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Into tables already holding rows and indexes (a full re-resolution after an engine
    change, then a one-file edit that deletes a copied file's rows by its run)."""
    tmp_path = repo({}).parent
    root = repo(_files())
    build(root, jobs=2)
    conn = sqlite3.connect(root / ".knoxidx" / "index.db")
    conn.execute("UPDATE meta SET value='older' WHERE key='engine'")
    conn.commit()
    conn.close()
    copied = _spooled_files(monkeypatch)
    report = build(root, jobs=2)
    assert report.full_resolve and copied and copied[0] > 0
    db = root / ".knoxidx" / "index.db"
    _runs_hold_each_files_rows(db)
    (root / "pkg" / "m7.py").write_text("def f7():\n    return 7\n")
    build(root, jobs=2)
    _runs_hold_each_files_rows(db)
    with Index.open(root) as idx:
        updated = export.canonical(idx.q)
        assert not [c for c in idx.callers("f8")["callers"] if c["name"] == "f7"]
    fresh = write_tree(tmp_path / "fresh", {**_files(), "pkg/m7.py": "def f7():\n    return 7\n"})
    build(fresh, jobs=1)
    with Index.open(fresh) as idx:
        assert export.canonical(idx.q) == updated


@pytest.mark.heavy
def test_a_spool_that_cannot_be_written_fails_the_update_and_loses_nothing(
        repo, monkeypatch: pytest.MonkeyPatch) -> None:
    from knoxidx.core.errors import KnoxidxError
    from knoxidx.graph.spool import SpoolWriter

    root = repo(_files())
    build(root, jobs=1)
    for i in range(N):
        (root / "pkg" / f"m{i}.py").write_text(f"def g{i}():\n    return {i}\n")

    def full_disk(self, files):
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(SpoolWriter, "write", full_disk)  # (the forked child inherits it)
    with Index.open(root) as idx, pytest.raises(KnoxidxError, match="disk is full"):
        idx.update(jobs=2, retrieval=False)
    assert not multiprocessing.active_children()
    assert not list((root / ".knoxidx").glob("*.spool.*"))
    with Index.open(root) as idx:  # rolled back: the old graph, whole
        assert idx.symbols("f0") and not idx.symbols("g0")
    monkeypatch.undo()
    build(root, jobs=2)
    with Index.open(root) as idx:
        assert idx.symbols("g0") and not idx.symbols("f0")


@pytest.mark.heavy
def test_a_spool_left_by_a_killed_build_is_removed_by_the_next(repo) -> None:
    root = repo(_files())
    build(root, jobs=1)
    index_dir = root / ".knoxidx"
    dead = index_dir / "index.db.new.spool.999999999"  # no such process
    dead.write_bytes(b"rows of a build killed half-way")
    live = index_dir / f"index.db.spool.{os.getppid()}"
    live.write_bytes(b"a live process's: another build's")
    (root / "pkg" / "m0.py").write_text("def f0():\n    return 0\n")
    conn = sqlite3.connect(index_dir / "index.db")
    conn.execute("UPDATE meta SET value='older' WHERE key='engine'")  # every file resolved
    conn.commit()
    conn.close()
    build(root, jobs=2)
    assert not dead.exists() and live.exists()
