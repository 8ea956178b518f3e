"""Indexing end to end: bad input never crashes and loses nothing; the graph is resolved."""

from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

import pytest

from knoxidx.core.errors import CorruptIndexError, IndexLockedError, IndexNotFoundError
from knoxidx.graph import export
from knoxidx.graph.write_lock import WriteLock
from knoxidx.index import Index
from knoxidx.parse.discovery import SourceFile
from knoxidx.parse.reader import read_and_extract
from tests.helpers import build


def test_bad_input_is_counted_not_fatal(repo) -> None:
    root = repo({
        "good.py": "def ok():\n    return helper()\n\ndef helper():\n    return 1\n",
        "binary.py": b"\x00\x01\x02binary",
        "latin1.py": "# caf\xe9 cr\xe8me\ndef latin():\n    return 'd\xe9j\xe0'\n".encode("latin-1"),
        "broken.py": "def fine():\n    pass\n\ndef broken(:\n",
        "big.py": "x = 1\n" * 400_000,
    })
    report = build(root)
    assert report.skipped["binary"] == 1
    assert report.skipped["too_large"] == 1
    assert any("latin1.py" in w and "UTF-8" in w for w in report.warnings)
    assert any("broken.py" in w and "syntax error" in w for w in report.warnings)
    with Index.open(root) as idx:
        assert idx.callers("helper")["callers"][0]["name"] == "ok"
        assert idx.symbols("fine")[0]["path"] == "broken.py"
        assert idx.symbols("latin")[0]["path"] == "latin1.py"  # still indexed


def test_invalid_utf8_where_a_query_predicate_reads_it_loses_nothing(repo) -> None:
    """The JS query's `#eq?`/`#match?` predicates decode what they test strictly: an invalid
    byte in a node one tests failed the whole file with a UnicodeDecodeError, and with a second
    one in a `require()` argument py-tree-sitter 0.26 crashed the parse worker (SIGSEGV; both
    found by bench.fuzz). Each invalid byte now reads as one `?`, so lines and spans stay the
    file's."""
    root = repo({
        "util.js": "function helper() { return 1; }\nmodule.exports = { helper };\n",
        # a comment that lost a slash: `exports` is then a member of a regex's expression
        "main.js": b'const { helper } = require("./util");\nconst x = require("./\xcf\xff");\n'
                   b"/\xcf One line per note; util/text.js has an unrelated `format` here.\n"
                   b"exports.format = function () {};\n"
                   b"function run() {\n  return helper();\n}\nmodule.exports = { run };\n",
    })
    report = build(root)
    assert not report.errors, report.errors
    assert any("main.js" in w and "invalid UTF-8 at byte 59" in w for w in report.warnings)
    with Index.open(root) as idx:
        run = idx.symbols("run")[0]
        assert (run["path"], run["start_line"], run["end_line"]) == ("main.js", 5, 7)
        assert [c["name"] for c in idx.callers("helper")["callers"]] == ["run"]


def test_unreadable_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "gone.py").mkdir()  # reading a directory fails like a vanished/unreadable file
    job = (str(tmp_path), SourceFile("gone.py", 0, 0, "python"), None, None, True)
    result = read_and_extract(job)
    assert result.status == "unreadable"
    assert result.message


def test_empty_repo_and_no_supported_files(repo, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert build(empty).files == 0
    root = repo({"README.md": "# hi\n", "data.csv": "a,b\n"})
    report = build(root)
    assert report.files == 0 and report.changed == 0
    with Index.open(root) as idx:
        assert idx.stats()["lines"] == 0


def test_cross_file_resolution_python(repo) -> None:
    root = repo({
        "app/__init__.py": "from .core import Engine\n",
        "app/core.py": """\
            from .util import parse as p

            class Base:
                def run(self):
                    return self.step()

                def step(self):
                    return p("x")

            class Engine(Base):
                def step(self):
                    return super().step()
            """,
        "app/util.py": "def parse(x):\n    return x\n\ndef step():\n    pass\n",
        "main.py": "from app import Engine\n\ndef main():\n    Engine().run()\n",
    })
    build(root)
    with Index.open(root) as idx:
        callers = {(c["qualified_name"], c["confidence"])
                   for c in idx.callers("app.util.parse")["callers"]}
        assert callers == {("app.core.Base.step", "exact")}
        run_callers = {c["qualified_name"] for c in idx.callers("Base.run")["callers"]}
        assert run_callers == {"main.main"}
        # the module-level `step` in util is a different symbol: never linked by name
        assert idx.callers("app.util.step")["callers"] == []
        engine = idx.refs("Engine")["incoming"]
        assert {h["qualified_name"] for h in engine["CalledBy"]} == {"main.main"}
        assert idx.deps("main.py")["dependencies"][0]["path"] == "app/__init__.py"


def test_missing_index_and_corrupt_index(tmp_path: Path) -> None:
    with pytest.raises(IndexNotFoundError):
        Index.open(tmp_path)
    (tmp_path / ".knoxidx").mkdir()
    (tmp_path / ".knoxidx" / "index.db").write_bytes(b"this is not a database" * 100)
    with pytest.raises(CorruptIndexError, match="--rebuild"):
        Index.open(tmp_path)


def test_schema_mismatch_rebuilds_with_message(repo) -> None:
    root = repo({"a.py": "def f():\n    pass\n"})
    build(root)
    conn = sqlite3.connect(root / ".knoxidx" / "index.db")
    conn.execute("UPDATE meta SET value='0' WHERE key='schema_version'")
    conn.commit()
    conn.close()
    with pytest.raises(CorruptIndexError, match="schema 0"):
        Index.open(root)
    with Index.open(root, create=True) as idx:
        assert "rebuilding" in (idx.store.rebuilt_reason or "")
        idx.update(jobs=1)
        assert idx.symbols("f")


def test_second_writer_gets_clear_error(repo) -> None:
    root = repo({"a.py": "x = 1\n"})
    build(root)
    lock = WriteLock(root / ".knoxidx")
    lock.acquire()
    try:
        with Index.open(root) as idx, pytest.raises(IndexLockedError, match="--wait"):
            idx.update(jobs=1)
        with Index.open(root) as idx:  # readers are never blocked
            assert idx.stats()["files"]["ok"] == 1
    finally:
        lock.release()
    with Index.open(root) as idx:
        idx.update(jobs=1)


def test_parallel_build_equals_serial(repo, tmp_path: Path) -> None:
    from knoxidx.graph import export

    n = 260  # above PRELOAD_THRESHOLD: resolution forks, and the parent resolves a share
    files = {f"pkg/m{i}.py": f"from .m{(i + 1) % n} import f{(i + 1) % n}\n\n"
             f"def f{i}():\n    return f{(i + 1) % n}()\n" for i in range(n)}
    files["pkg/__init__.py"] = ""
    root = repo(files)
    build(root, jobs=2)
    with Index.open(root) as idx:
        parallel = export.canonical(idx.q)
    (root / ".knoxidx" / "index.db").unlink()
    build(root, jobs=1)
    with Index.open(root) as idx:
        serial = export.canonical(idx.q)
        assert len(idx.callers("f0")["callers"]) == 1
    assert parallel == serial


def test_a_resolver_worker_that_dies_fails_the_update_and_loses_nothing(
        repo, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from knoxidx.core.errors import KnoxidxError
    from knoxidx.update import resolve_workers

    n = 260  # above PRELOAD_THRESHOLD: resolution forks
    files = {f"m{i}.py": f"def f{i}():\n    return {i}\n" for i in range(n)}
    root = repo(files)
    build(root, jobs=1)
    for i in range(n):
        (root / f"m{i}.py").write_text(f"def g{i}():\n    return {i}\n")
    monkeypatch.setattr(resolve_workers, "_child", lambda results: os._exit(3))
    with Index.open(root) as idx, pytest.raises(KnoxidxError, match="worker process died"):
        idx.update(jobs=2)
    with Index.open(root) as idx:  # the update rolled back: the old graph, whole
        assert idx.symbols("f0") and not idx.symbols("g0")
        assert idx.stats()["files"]["ok"] == n


def test_a_cold_parallel_build_ends_with_every_index(repo) -> None:
    """A cold build drops the secondary indexes while it inserts: it must end with every one
    of them built again, and a sound database."""
    from knoxidx.graph.sqlite_schema import SCHEMA

    n = 260  # above PRELOAD_THRESHOLD: resolution forks
    root = repo({f"m{i}.py": f"def f{i}():\n    return f{(i + 1) % n}()\n" for i in range(n)})
    build(root, jobs=2)
    conn = sqlite3.connect(root / ".knoxidx" / "index.db")
    have = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    want = {s.split()[2] for s in SCHEMA.split(";") if s.strip().startswith("CREATE INDEX")}
    assert want <= have and conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_an_update_leaves_the_collector_as_it_found_it(repo) -> None:
    """An update collects rarely and freezes the heap it starts with (its forked resolvers
    too): afterwards the thresholds are back, and only a freeze made further out remains."""
    import gc

    n = 260  # above PRELOAD_THRESHOLD: the resolver fan-out freezes as well
    root = repo({f"m{i}.py": f"def f{i}():\n    return f{(i + 1) % n}()\n" for i in range(n)})
    threshold = gc.get_threshold()
    assert gc.get_freeze_count() == 0
    build(root, jobs=2)
    assert gc.get_threshold() == threshold and gc.get_freeze_count() == 0
    gc.freeze()
    try:
        (root / "m0.py").write_text("def g():\n    return 0\n")
        build(root, jobs=2)
        assert gc.get_threshold() == threshold and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_totals_match_the_per_kind_counts(tmp_path: Path, backend) -> None:
    import shutil

    root = tmp_path / "py"
    shutil.copytree(Path(__file__).parent.parent / "fixtures" / "python", root)
    backend.build(root)
    with backend.open(root) as idx:
        counts = idx.q.counts()
        assert idx.q.totals() == (sum(counts["nodes"].values()), sum(counts["edges"].values()))


def test_ok_file_hashes_are_the_indexed_files_states(tmp_path: Path, backend) -> None:
    root = tmp_path / "r"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    pass\n")
    (root / "b.py").write_bytes(b"\0binary")
    backend.build(root)
    with backend.open(root) as idx:
        states = idx.store.file_states()
        assert idx.store.ok_file_hashes() == {
            p: s.hash for p, s in states.items() if s.status == "ok"} == {"a.py": states["a.py"].hash}


def test_a_cold_build_whose_nodes_table_fails_to_index_stops_its_resolvers(
        repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cold parallel build indexes its nodes table once the resolver workers have started: a
    failure there ends the update cleanly (workers stopped, nothing installed)."""
    import multiprocessing

    from knoxidx.core.errors import KnoxidxError
    from knoxidx.graph.store import SQLiteStore

    n = 260  # above PRELOAD_THRESHOLD: resolution forks
    files = {f"pkg/m{i}.py": f"from .m{(i + 1) % n} import f{(i + 1) % n}\n\n"
             f"def f{i}():\n    return f{(i + 1) % n}()\n" for i in range(n)}
    root = repo({**files, "pkg/__init__.py": ""})

    def full_disk(self):
        assert multiprocessing.active_children(), "the workers start before the table is indexed"
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(SQLiteStore, "flush_nodes", full_disk)
    with Index.open(root, create=True) as idx, pytest.raises(KnoxidxError, match="full"):
        idx.update(jobs=2, retrieval=False)
    assert not multiprocessing.active_children()
    monkeypatch.undo()
    with Index.open(root) as idx:
        assert not idx.symbols("f0")
        idx.update(jobs=2, retrieval=False)
        assert len(idx.callers("f1")["callers"]) == 1


def test_guided_slices_cover_every_path_once_in_order_and_shrink() -> None:
    from knoxidx.update.resolve_workers import MIN_SLICE, guided_slices

    for n in (0, 1, MIN_SLICE, 261, 5422):
        paths = [f"p{i:05}" for i in range(n)]
        slices = guided_slices(paths, 2)
        assert [p for s in slices for p in s] == paths
        sizes = [len(s) for s in slices]
        assert sizes == sorted(sizes, reverse=True)
        assert all(size >= MIN_SLICE for size in sizes[:-1])
    assert len(guided_slices([f"p{i}" for i in range(5422)], 2)[-2]) == MIN_SLICE


def test_sized_chunks_keep_order_alone_large_items_and_bound_small_ones() -> None:
    from knoxidx.parse.parse_pool import sized_chunks

    sizes = [900, 300, 120, 100, 90, 40, 10, 5, 5, 5, 5, 5]
    chunks = sized_chunks(sizes, lambda n: n, 256, 4)
    assert [n for c in chunks for n in c] == sizes
    assert chunks[:3] == [[900], [300], [120, 100, 90]]
    assert all(len(c) <= 4 for c in chunks)
    assert all(sum(c) >= 256 or len(c) == 4 for c in chunks[:-1])  # closed by one bound
    assert sized_chunks([], lambda n: n, 256, 4) == []


def test_a_forked_pool_compiles_queries_in_its_workers_not_before_it_forks(
    tmp_path: Path,
) -> None:
    """The parent compiled every language's queries before the pool forked (0.35 s on one
    core on the benchmark corpus); the workers now compile those of the chunks they claim."""
    from knoxidx.graph.layout import build_layout
    from knoxidx.parse.discovery import discover
    from knoxidx.parse.extract import COMPILED
    from knoxidx.parse.parse_pool import POOL_THRESHOLD, read_all

    for i in range(POOL_THRESHOLD):
        (tmp_path / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
        (tmp_path / f"m{i}.go").write_text(f"package m\n\nfunc G{i}() int {{ return {i} }}\n")
    found = discover(tmp_path)
    layout = build_layout(tmp_path, [f.path for f in found.files], found.config_paths)
    COMPILED.clear()
    results = list(read_all(tmp_path, found.files, {}, layout, 2, None))
    assert sorted(r.status for r in results) == ["ok"] * (2 * POOL_THRESHOLD)
    assert sorted(r.path for r in results) == sorted(f.path for f in found.files)
    assert not COMPILED


def test_without_file_locks_a_forked_pool_takes_chunks_in_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
) -> None:
    """The workers claim chunks under ``flock`` on a temporary file; where the temporary
    directory refuses locks, the chunks are handed out in turn instead, and every file is
    still read."""
    import fcntl

    from knoxidx.graph.layout import build_layout
    from knoxidx.parse.discovery import discover
    from knoxidx.parse.parse_pool import POOL_THRESHOLD, read_all

    def refuse(fd: int, operation: int) -> None:
        raise OSError(38, "Function not implemented")

    for i in range(POOL_THRESHOLD):
        (tmp_path / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n")
    found = discover(tmp_path)
    layout = build_layout(tmp_path, [f.path for f in found.files], found.config_paths)
    monkeypatch.setattr(fcntl, "flock", refuse)  # the forked workers inherit it too
    results = list(read_all(tmp_path, found.files, {}, layout, 2, None))
    assert sorted(r.path for r in results) == sorted(f.path for f in found.files)
    assert {r.status for r in results} == {"ok"}
    assert "refuses file locks" in caplog.text


def test_a_worker_claims_chunks_of_its_compiled_languages_first(tmp_path: Path) -> None:
    """``read_claimed``'s choice: the first unclaimed chunk in a language this process has
    compiled, else in one no worker has taken, else any; each chunk once."""
    from knoxidx.parse.compiled_queries import compiled_query
    from knoxidx.parse.discovery import SourceFile
    from knoxidx.parse.extract import COMPILED
    from knoxidx.parse.parse_worker import _claim

    def chunk(language: str) -> list[tuple]:
        return [(str(tmp_path), SourceFile("x", 1, 0, language), None, None, False)]

    chunks = [chunk("python"), chunk("go"), chunk("python"), chunk("go"), chunk("java")]
    table = tmp_path / "claims"

    def claims(compiled: list[str]) -> list[int]:
        table.write_bytes(bytes(4 * len(chunks) + len(chunks) + 3))
        COMPILED.clear()
        for language in compiled:
            compiled_query(language)
        fd = os.open(table, os.O_RDWR)
        try:
            return [_claim(fd, chunks) for _ in range(len(chunks) + 1)]
        finally:
            os.close(fd)

    assert claims(["go"]) == [1, 3, 0, 4, 2, -1]  # go; then untaken python, java; then any
    # nothing compiled (this process never compiles while claiming): each untaken language
    # first, as a second worker starting beside the first would
    assert claims([]) == [0, 1, 4, 2, 3, -1]


def test_a_file_that_grew_since_discovery_is_not_read_whole(tmp_path: Path) -> None:
    """Discovery checks a file's size, but the read came later and took everything there was
    then: a file being appended to (a log that ends in ``.js``) could be read at any size. It
    is read up to what discovery saw plus GROWTH_BYTES, and past that left for the next update
    (whose discovery sees the new size)."""
    from knoxidx.parse.discovery import SourceFile
    from knoxidx.parse.reader import GROWTH_BYTES, read_and_extract

    path = tmp_path / "log.js"
    path.write_text("var x = 1;\n")
    seen = SourceFile("log.js", path.stat().st_size, path.stat().st_mtime_ns, "javascript")
    assert read_and_extract((str(tmp_path), seen, None, None, True)).status != "unreadable"
    with open(path, "a") as fh:  # written on after discovery's stat
        fh.write("// more\n" * (GROWTH_BYTES // 8 + 10))
    result = read_and_extract((str(tmp_path), seen, None, None, True))
    assert result.status == "unreadable" and "grew by over 1 MiB" in result.message


def test_definition_names_are_made_only_for_updates_that_use_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A parse worker's definition names serve only to invalidate other files' resolutions:
    an update that re-resolves every file (a first build, a new layout) asks for none, and
    one that re-resolves selectively still gets them for what it reads."""
    import knoxidx.update.graph_update as pipeline

    asked: list[bool] = []
    real = pipeline.read_all

    def spy(*args, **kwargs):
        asked.append(kwargs["names"])
        yield from real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "read_all", spy)
    (tmp_path / "a.py").write_text("from b import helper\n\ndef main():\n    return helper()\n")
    (tmp_path / "b.py").write_text("def other():\n    return 1\n")
    with Index.open(tmp_path, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
        (tmp_path / "b.py").write_text("def other():\n    return 1\n\ndef helper():\n    return 2\n")
        idx.update(jobs=1, retrieval=False)
        callers = idx.callers("helper")
    assert asked == [False, True]
    assert [c["name"] for c in callers["callers"]] == ["main"]  # found through b's new name

    from knoxidx.graph.layout import build_layout

    layout = build_layout(tmp_path, ["a.py", "b.py"], [])
    job = (str(tmp_path), SourceFile("b.py", 1, 0, "python"), None, layout, False)
    assert read_and_extract(job).status == "ok"
    assert read_and_extract(job).names == frozenset()
    assert {n[0] for n in read_and_extract(job[:4] + (True,)).names} == {"other", "helper"}


def test_a_first_build_sorts_its_indexes_in_a_small_cache_and_restores_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite's sorter works in the page cache's size: the indexes of a bulk load are built
    with SORT_CACHE_KIB (faster than in 16 MiB), and the cache is as before afterwards. Those
    built at the end, when no resolver works beside, sort with SORT_THREADS helper threads;
    those built while the resolvers run, with none; the connection keeps none afterwards."""
    from knoxidx.graph import store as store_module
    from knoxidx.graph.sqlite_schema import INDEX_STATEMENTS, index_name, index_table
    from knoxidx.graph.store import SORT_CACHE_KIB, SQLiteStore

    monkeypatch.setattr(store_module, "SORT_THREADS", 2)
    store = SQLiteStore.open(tmp_path, create=True).open_scratch()
    try:
        before = store.conn.execute("PRAGMA cache_size").fetchone()[0]
        seen: list[tuple[str, int, int]] = []

        def trace(statement: str) -> None:
            made = re.match(r"CREATE (?:UNIQUE )?INDEX IF NOT EXISTS (\w+)", statement)
            if made:
                seen.append((made.group(1),
                             store.conn.execute("PRAGMA cache_size").fetchone()[0],
                             store.conn.execute("PRAGMA threads").fetchone()[0]))

        with store.bulk_load(enabled=True):
            store.conn.set_trace_callback(trace)
            store.flush_nodes()
        store.conn.set_trace_callback(None)
        assert {name for name, _, _ in seen} == {index_name(s) for s in INDEX_STATEMENTS}
        assert {cache for _, cache, _ in seen} == {-SORT_CACHE_KIB}
        early = {index_name(s) for s in INDEX_STATEMENTS
                 if index_table(s) in ("nodes", "files", "modules")}
        first: dict[str, int] = {}  # (the end asks for every index again: IF NOT EXISTS)
        for name, _, threads in seen:
            first.setdefault(name, threads)
        assert first == {
            index_name(s): 0 if index_name(s) in early else 2 for s in INDEX_STATEMENTS}
        assert store.conn.execute("PRAGMA cache_size").fetchone()[0] == before != -SORT_CACHE_KIB
        assert store.conn.execute("PRAGMA threads").fetchone()[0] == 0
        names = {r[0] for r in store.conn.execute(
            "SELECT name FROM sqlite_master WHERE type='index'")}
        assert {index_name(s) for s in INDEX_STATEMENTS} <= names
    finally:
        store.discard()


def test_a_bulk_load_keeps_the_later_row_of_an_id_written_twice(tmp_path: Path) -> None:
    """Nodes are appended unindexed in a bulk load, and their unique index on id is built
    afterwards: two rows of one id (two 63-bit ids colliding) leave the later one, as INSERT OR
    REPLACE does once the index is there, rather than failing the build."""
    from knoxidx.graph.sqlite_schema import NODE_COLUMNS
    from knoxidx.graph.store import SQLiteStore

    def row(node_id: int, name: str) -> tuple:
        values = dict.fromkeys(NODE_COLUMNS, None)
        values.update(id=node_id, kind="Function", name=name, qualified_name=name, file_id=1)
        return tuple(values[c] for c in NODE_COLUMNS)

    store = SQLiteStore.open(tmp_path, create=True).open_scratch()
    try:
        with store.bulk_load(enabled=True):
            store.insert_nodes([row(7, "first"), row(8, "other")])
            store.insert_nodes([row(7, "second")])
            store.flush_nodes()
            assert sorted(store.conn.execute("SELECT id, name FROM nodes")) == [
                (7, "second"), (8, "other")]
            store.replace_nodes(2, [row(8, "moved")[:-1]])  # the index is in place now
        assert sorted(store.conn.execute("SELECT id, name, file_id FROM nodes")) == [
            (7, "second", 1), (8, "moved", 2)]
    finally:
        store.discard()


def test_a_first_build_whose_install_fails_removes_its_scratch_database(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first build whose flush to disk fails (a full disk, an I/O error) says so, leaves the
    empty index as it was, and removes the scratch database it built, which held the disk's
    space until the next build."""
    import knoxidx.graph.store as store_module
    from knoxidx.core.errors import KnoxidxError
    from knoxidx.index import Index

    root = tmp_path / "repo"
    root.mkdir()
    (root / "m.py").write_text("def f():\n    return g()\n\ndef g():\n    pass\n")
    with Index.open(root, create=True):
        pass  # an empty index

    def failing(path: Path) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store_module, "_fsync", failing)
    with Index.open(root) as idx, pytest.raises(KnoxidxError, match="disk is full"):
        idx.update(retrieval=False)
    monkeypatch.undo()
    assert not [p.name for p in (root / ".knoxidx").iterdir() if ".new" in p.name]
    with Index.open(root) as idx:
        assert not idx.symbols("f")  # the empty index, as it was
        idx.update(retrieval=False)
        assert idx.symbols("f")


def test_a_first_build_flushes_behind_and_a_failed_flush_fails_its_install(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A first build flushes its scratch database to disk in threads while it goes on (after
    the parse phase, before the last indexes), and waits for them before its graph update
    ends (the chunking after it forks). When one failed, the install fails as its own flush
    would (a later fsync of the file can succeed after the pages the failed one could not
    write were dropped): the empty index stays."""
    import threading
    import time
    from typing import Any

    import knoxidx.graph.store as store_module
    from knoxidx.core.errors import KnoxidxError
    from knoxidx.index import Index
    from knoxidx.update import graph_update as pipeline

    root = tmp_path / "repo"
    root.mkdir()
    for i in range(3):
        (root / f"m{i}.py").write_text(f"def f{i}():\n    return g()\n\ndef g():\n    pass\n")
    real_fsync = store_module._fsync
    flushed: list[tuple[str, str]] = []

    def fsync(path: Path) -> None:
        flushed.append((threading.current_thread().name, Path(path).name))
        if threading.current_thread().name == "knoxidx-flush":
            time.sleep(0.3)  # a slow disk
        real_fsync(path)

    def graph_update(*args: Any, **kwargs: Any) -> Any:
        report = update_index(*args, **kwargs)
        # none left running when the graph's update ends: the chunking after it forks
        assert not [t for t in threading.enumerate() if t.name == "knoxidx-flush"]
        return report

    update_index = pipeline.update_index
    monkeypatch.setattr(store_module, "_fsync", fsync)
    monkeypatch.setattr(pipeline, "update_index", graph_update)
    with Index.open(root, create=True) as idx:
        idx.update()
        assert idx.symbols("f1")
    assert flushed[:2] == [("knoxidx-flush", "index.db.new")] * 2
    assert flushed[2] == (threading.main_thread().name, "index.db.new")  # install's own

    (root / ".knoxidx").rename(tmp_path / "built")
    with Index.open(root, create=True):
        pass  # an empty index

    def failing(path: Path) -> None:
        if threading.current_thread().name == "knoxidx-flush":
            raise OSError(5, "Input/output error")
        real_fsync(path)

    monkeypatch.setattr(store_module, "_fsync", failing)
    with Index.open(root) as idx, pytest.raises(KnoxidxError, match="Input/output error"):
        idx.update(retrieval=False)
    monkeypatch.undo()
    with Index.open(root) as idx:
        assert not idx.symbols("f0")  # the empty index, as it was


def test_a_file_s_resolution_rows_are_one_run_and_go_by_it(repo) -> None:
    """Each file's edges, unresolved references and lookup keys are one run of rowids per
    table (``file_rows``), by which an update deletes them: after edits, removals and a module
    layer rebuilt, every run holds exactly its file's rows; the runs can also be made anew
    from rows written in file order (a pulled index) and refuse rows that are not."""
    from knoxidx.index import Index
    from tests.helpers import assert_row_runs

    root = repo({
        "pkg/__init__.py": "",
        "pkg/a.py": "import os\nfrom pkg.b import g\n\ndef f():\n    return g() + missing()\n",
        "pkg/b.py": "def g():\n    return os.getcwd()\n",
        "pkg/c.py": "from pkg.a import f\n\ndef h():\n    return f()\n",
    })
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1, retrieval=False)
        assert_row_runs(idx.store.conn)
        (root / "pkg" / "a.py").write_text("from pkg.b import g\n\ndef f():\n    return g()\n")
        (root / "pkg" / "c.py").unlink()
        (root / "pkg" / "d.py").write_text("from pkg.a import f\n\nf()\n")
        idx.update(jobs=1, retrieval=False)
        conn = idx.store.conn
        assert_row_runs(conn)
        assert conn.execute("SELECT count(*) FROM file_rows").fetchone()[0] == 5  # + modules
        before = sorted(conn.execute("SELECT * FROM file_rows"))
        idx.store.index_file_rows()
        assert sorted(conn.execute("SELECT * FROM file_rows")) == before
        # a row of the first file written after the others: its run is no run
        conn.execute("INSERT INTO lookups SELECT file_id, key || '!' FROM lookups"
                     " WHERE rowid = (SELECT min(rowid) FROM lookups)")
        with pytest.raises(ValueError, match="lookups rows of file .* are not one run"):
            idx.store.index_file_rows()


def test_a_python_module_variable_assigned_in_a_top_level_block_is_found_and_used(repo) -> None:
    root = repo({
        "pkg/__init__.py": "",
        "pkg/utils.py": ("try:\n    import docutils\nexcept ImportError:\n"
                         "    docutils_is_available = False\nelse:\n"
                         "    docutils_is_available = True\n"),
        "pkg/views.py": ("from pkg import utils\n\n\ndef render():\n"
                         "    if utils.docutils_is_available:\n        return 1\n"),
    })
    build(root)
    with Index.open(root) as idx:
        nodes = {n["id"]: n for n in export.nodes(idx.q)}
        found = [n for n in nodes.values() if n["name"] == "docutils_is_available"]
        assert [(n["kind"], n["path"], n["start_line"]) for n in found] == [
            ("Variable", "pkg/utils.py", 4)]
        assert ("render", "Uses", "docutils_is_available") in {
            (nodes[e["source"]]["name"], e["type"], nodes[e["target"]]["name"])
            for e in export.edges(idx.q)}


def test_a_java_name_left_to_the_package_consults_its_class_only(tmp_path: Path) -> None:
    """A name a Java file leaves to its package (then its wildcard imports) is a top-level
    class of the package or nothing: a miss consults `type:<package>.<name>` alone, not each
    shorter prefix of the package as an enclosing class (a class named like a package does
    not compile), which it used to keep as dependencies of the file; and a name nothing in
    the index defines consults no class at all, only the name (what a definition of it, added
    later, invalidates)."""
    from knoxidx.graph.layout import build_layout
    from knoxidx.graph.resolve import Resolver
    from knoxidx.graph.store import SQLiteStore
    from knoxidx.graph.workspace import StoreWorkspace
    from knoxidx.parse.discovery import discover
    from tests.helpers import write_tree

    root = write_tree(tmp_path, {
        "src/com/acme/app/Main.java": (
            "package com.acme.app;\n\n"
            "class Main {\n"
            "    void run() {\n"
            "        Helper h = new Helper();\n"
            "        h.go();\n"
            "        Other.make();\n"
            "        Unknown.call();\n"
            "    }\n"
            "}\n"),
        "src/com/acme/app/Helper.java": (
            "package com.acme.app;\n\npublic class Helper {\n    void go() {}\n}\n"),
        # defined, but in a package Main does not import
        "src/com/acme/lib/Other.java": (
            "package com.acme.lib;\n\npublic class Other {\n    static void make() {}\n}\n"),
    })
    build(root)
    found = discover(root, 1 << 20)
    store = SQLiteStore.open(root, readonly=True)
    try:
        layout = build_layout(root, [f.path for f in found.files], found.config_paths)
        resolver = Resolver(StoreWorkspace(store, layout, {}))
        res = resolver.resolve_file("src/com/acme/app/Main.java")
    finally:
        store.close()
    assert any(e[2] == "Calls" for e in res.edges)  # new Helper(), h.go()
    type_keys = {k for k in res.keys if ":type:" in k}
    assert {"mod:java:type:com.acme.app.Helper", "mod:java:type:com.acme.app.Other"} <= type_keys
    assert not {"mod:java:type:com.acme.app", "mod:java:type:com.acme"} & type_keys, type_keys
    assert not any(k.endswith(".Unknown") for k in type_keys), type_keys
    assert "name:Unknown" in res.keys
