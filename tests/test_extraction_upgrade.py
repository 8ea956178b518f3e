"""An index extracted by another knoxidx (the engine fingerprint in its meta differs) is read
again whole by the next update, through the ordinary incremental path: every file's facts,
resolution and chunks become what this knoxidx makes of them, and the vectors of chunks whose
text did not change are kept. "Another knoxidx" is played by this one without its Rust
item-macro hook (an older extractor missed the items inside ``cfg_rt! { }``)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import knoxidx.languages.rust.hooks as rust_hooks
from knoxidx.cli import main
from knoxidx.index import Index
from knoxidx.parse.engine import ENGINE_META_KEY, engine_fingerprint
from knoxidx.retrieval.lexical_rows import ChunkFilter
from knoxidx.retrieval.stores import chunk_store_for
from knoxidx.update import chunk_refresh, graph_update
from knoxidx.update.verify import verify_index
from tests.helpers import Backend, write_tree

FILES = {
    "src/lib.rs": (
        "macro_rules! cfg_rt { ($($item:item)*) => { $($item)* } }\n\n"
        "cfg_rt! {\n"
        "    pub fn spawn_blocking_task(n: u32) -> u32 {\n"
        "        n + 1\n"
        "    }\n"
        "}\n\n"
        "pub fn run() -> u32 {\n"
        "    spawn_blocking_task(1)\n"
        "}\n"
    ),
    "pkg/a.py": "def helper(x):\n    return x * 2\n",
    "pkg/b.py": "from pkg.a import helper\n\n\ndef main():\n    return helper(3)\n",
}


def _build_with_older_extractor(backend: Backend, root: Path,
                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The index an older knoxidx left: built without the item-macro hook (in this process:
    one job), under that knoxidx's own engine fingerprint."""
    with monkeypatch.context() as patched:
        patched.delattr(rust_hooks, "unwrap_item_macros")
        for module in (graph_update, chunk_refresh):
            patched.setattr(module, "engine_fingerprint", lambda: "an older knoxidx's")
        backend.build(root)
    with backend.open(root) as idx:
        assert not idx.find_symbols("spawn_blocking_task")["symbols"]  # the older one's miss
        assert idx.store.get_meta(ENGINE_META_KEY) == "an older knoxidx's"


def _stamp(idx: Index, engine: str) -> None:
    with idx.store.transaction():
        idx.store.set_meta(ENGINE_META_KEY, engine)


def _chunks(idx: Index) -> list[tuple[Any, ...]]:
    store = chunk_store_for(idx.store)
    stored = store.get(store.chunk_ids(ChunkFilter())).values()
    return sorted((s.chunk.path, s.chunk.start_line, s.chunk.end_line, s.chunk.symbols,
                   s.chunk.content_hash) for s in stored)


def test_an_older_extractors_index_is_read_again_whole_and_equals_a_clean_build(
        repo, backend: Backend, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    root = repo(FILES)
    _build_with_older_extractor(backend, root, monkeypatch)

    report = backend.build(root)
    assert report.extraction_changed and report.changed == len(FILES) and report.full_resolve
    with backend.open(root) as idx:
        assert idx.find_symbols("spawn_blocking_task")["symbols"]
        callers = idx.callers("spawn_blocking_task")["callers"]
        assert [c["name"] for c in callers] == ["run"]
        assert idx.store.get_meta(ENGINE_META_KEY) == engine_fingerprint()
        result = verify_index(idx)
        assert result["integrity"] == "ok" and result["equal"], result
        upgraded = _chunks(idx)
    # the chunks are cut along the definitions the new extractor found, as a clean build's
    clean = write_tree(tmp_path / "clean", FILES)
    with Index.open(clean, create=True) as idx:
        idx.update(jobs=1)
        assert _chunks(idx) == upgraded
    assert any(symbol.endswith("spawn_blocking_task") for c in upgraded for symbol in c[3])


def test_a_file_deleted_while_an_older_extractors_index_is_read_again_leaves_no_chunks(
        repo, backend: Backend, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # a checkout that removes files in the update that reads the index again: search must not
    # answer from the removed files (their chunks once outlived the forgotten chunk sources)
    root = repo(FILES)
    _build_with_older_extractor(backend, root, monkeypatch)
    (root / "pkg" / "a.py").unlink()

    report = backend.build(root)
    assert report.extraction_changed and report.removed == 1
    with backend.open(root) as idx:
        upgraded = _chunks(idx)
        assert not [c for c in upgraded if c[0] == "pkg/a.py"]
        assert not [r for r in idx.search("helper", k=10, mode="lexical")["results"]
                    if r["path"] == "pkg/a.py"]
    clean = write_tree(tmp_path / "clean", {p: t for p, t in FILES.items() if p != "pkg/a.py"})
    with Index.open(clean, create=True) as idx:
        idx.update(jobs=1)
        assert _chunks(idx) == upgraded


def test_verify_finds_chunks_searched_from_a_file_the_index_no_longer_holds(
        repo, backend: Backend) -> None:
    # what a broken update leaves: the graph let go of a deleted file, its chunks did not
    root = repo(FILES)
    backend.build(root)
    (root / "pkg" / "a.py").unlink()
    with backend.open(root) as idx:
        with idx.store.transaction():
            idx.store.delete_file(idx.store.file_states()["pkg/a.py"].id)
        result = verify_index(idx)
    assert result["orphan_chunk_paths"] == ["pkg/a.py"] and not result["equal"]


def test_an_index_of_this_extractor_reads_nothing_again(repo, backend: Backend) -> None:
    root = repo(FILES)
    for path in root.rglob("*"):  # written long before the build (no racy file read again)
        if path.is_file():
            os.utime(path, ns=(10**18, 10**18))
    backend.build(root)
    report = backend.build(root)
    assert not report.extraction_changed and report.read == 0 and report.changed == 0
    assert report.resolved == 0


def test_a_first_build_is_no_extraction_change(repo, backend: Backend) -> None:
    report = backend.build(repo(FILES))
    assert not report.extraction_changed and report.changed == len(FILES)


def test_the_index_command_says_why_it_reads_every_file_on_stderr_only(repo) -> None:
    root = repo(FILES)
    runner = CliRunner()
    assert runner.invoke(main, ["index", "--jobs", "1", str(root)]).exit_code == 0
    for as_json in (True, False):
        with Index.open(root) as idx:
            _stamp(idx, "an older knoxidx's")
        result = runner.invoke(main, ["index", "--jobs", "1", str(root),
                                      *(["--json"] if as_json else [])])
        assert result.exit_code == 0, result.output
        line = ("knoxidx's extraction changed since this index was built: "
                f"re-reading all {len(FILES)} files")
        assert line not in result.stdout
        if as_json:  # the report says it; the line is for a person
            assert json.loads(result.stdout)["extraction_changed"] is True
            assert line not in result.stderr
        else:
            assert line in result.stderr
    again = runner.invoke(main, ["index", "--jobs", "1", str(root)])
    assert "extraction changed" not in again.stderr


def test_stats_and_verify_show_a_stale_extraction_and_still_answer(repo) -> None:
    root = repo(FILES)
    runner = CliRunner()
    assert runner.invoke(main, ["index", "--jobs", "1", str(root)]).exit_code == 0
    stats = json.loads(runner.invoke(main, ["stats", "--json", str(root)]).stdout)
    assert stats["extraction"] == {"stored": engine_fingerprint(),
                                   "current": engine_fingerprint(), "stale": False,
                                   "files": len(FILES)}
    with Index.open(root) as idx:
        _stamp(idx, "an older knoxidx's")
    stats = json.loads(runner.invoke(main, ["stats", "--json", str(root)]).stdout)
    assert stats["extraction"]["stored"] == "an older knoxidx's"
    assert stats["extraction"]["stale"] is True
    human = runner.invoke(main, ["stats", str(root)]).stdout
    assert "stale" in human and "knoxidx index" in human
    # read-only questions keep answering from the stale facts
    callers = runner.invoke(main, ["callers", "helper", "--json", str(root)])
    assert callers.exit_code == 0 and "main" in callers.stdout
    verify = runner.invoke(main, ["verify", "--json", str(root)])
    assert json.loads(verify.stdout)["extraction"]["stale"] is True


def test_a_watcher_starting_on_an_older_extractors_index_says_so_and_reads_it_again(
        repo) -> None:
    from knoxidx.watch import Watcher
    from tests.agent.support import wait_for

    root = repo(FILES)
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1)
        _stamp(idx, "an older knoxidx's")
    events: list[tuple[str, dict[str, Any]]] = []
    watcher = Watcher(root, debounce_ms=50, jobs=1, reconcile_s=0,
                      emit=lambda event, data: events.append((event, data)))
    watcher.start()
    try:
        wait_for(lambda: watcher.snapshot()["phase"] == "idle", what="the initial update")
    finally:
        watcher.stop()
    notices = [d["message"] for e, d in events if e == "notice"]
    assert notices == ["knoxidx's extraction changed since this index was built: "
                       f"re-reading all {len(FILES)} files"]
    start = next(d for e, d in events if e == "batch" and d["reason"] == "start")
    assert start["changed"] == len(FILES)
    with Index.open(root) as idx:
        assert not idx.extraction()["stale"]


def test_the_vectors_of_chunks_whose_text_is_unchanged_survive_the_reading_again(
        repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the real local model: the new extractor's chunks of the same text keep their ids
    and vectors; only what the new definitions add (their declarations) is embedded."""
    import sqlite3

    monkeypatch.delenv("KNOXIDX_EMBED", raising=False)
    root = repo(FILES)
    backend = Backend(None)
    _build_with_older_extractor(backend, root, monkeypatch)
    with Index.open(root) as idx:
        idx.embed()
    db = root / ".knoxidx" / "index.db"

    def vectors() -> dict[str, tuple[int, bytes]]:
        conn = sqlite3.connect(db)
        try:
            return {h: (i, v) for h, i, v in conn.execute(
                "SELECT c.content_hash, c.id, v.vector FROM chunk c"
                " JOIN chunk_vector v ON v.chunk_id = c.id")}
        finally:
            conn.close()

    before = vectors()
    assert len(before) == 3  # one chunk a file, each embedded
    report = backend.build(root)
    assert report.extraction_changed and report.retrieval["kept"] == 3
    assert report.retrieval["added"] == 0
    assert vectors() == before
