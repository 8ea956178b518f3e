"""A writer's session (knoxidx.update.session): what one Index remembers of the tables between
its own updates must never go stale. After any sequence of edits, foreign writers and failed
updates, the graph equals a clean rebuild and the chunks equal a clean chunking."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from knoxidx.index import Index
from knoxidx.update.session import WriterSession
from knoxidx.update.verify import verify_index
from tests.test_incremental import N_FILES, apply, seed, ts_module


def chunk_state(idx: Index) -> tuple[list, list]:
    conn = idx.store.conn
    chunks = sorted(conn.execute("SELECT path, start_line, end_line, content_hash FROM chunk"))
    sources = sorted(conn.execute("SELECT path, hash FROM chunk_source"))
    return chunks, sources


def clean_chunk_state(root: Path, scratch: Path) -> tuple[list, list]:
    copy = scratch / root.name
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".knoxidx"))
    try:
        with Index.open(copy, create=True) as idx:
            idx.update(jobs=1)
            return chunk_state(idx)
    finally:
        shutil.rmtree(copy)


operation = st.one_of(
    st.tuples(st.sampled_from(["write", "write", "delete", "rename"]), st.integers(0, N_FILES - 1),
              st.integers(0, 5), st.sampled_from(["py", "ts"])),
    # a package marker comes or goes (the layout changes), a tsconfig path alias changes, or
    # another connection writes the index between two of this writer's updates
    st.tuples(st.sampled_from(["init", "tsconfig", "foreign"]), st.integers(0, 3),
              st.just(0), st.just("")),
)


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(operation, min_size=1, max_size=7))
@pytest.mark.slow
def test_one_writer_updating_again_and_again_equals_a_rebuild(tmp_path_factory, ops) -> None:
    root = tmp_path_factory.mktemp("session")
    seed(root)
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1)
        assert idx._writer_session() is not None  # the session really is in play
        for op, i, variant, lang in ops:
            if op == "init":
                marker = root / "pkg" / "__init__.py"
                marker.unlink() if marker.exists() else marker.write_text("")
            elif op == "tsconfig":
                (root / "tsconfig.json").write_text(
                    '{"compilerOptions": {"baseUrl": ".", "paths": {"@w/*": ["%s/*"]}}}'
                    % ("web" if i % 2 else "pkg"))
            elif op == "foreign":
                (root / "web" / f"t{i}.ts").write_text(ts_module(i, i + 1))
                with Index.open(root) as other:
                    other.update(jobs=1)
            else:
                apply(root, op, i, variant, lang)
            idx.update(jobs=1)
        result = verify_index(idx)
        assert result["integrity"] == "ok"
        assert result["equal"], result
        assert chunk_state(idx) == clean_chunk_state(root, tmp_path_factory.mktemp("clean"))
    shutil.rmtree(root)


def indexed_paths(idx: Index) -> set[str]:
    return {p for p, s in idx.store.file_states().items() if s.status == "ok"}


def test_a_foreign_writer_between_two_updates_is_noticed(tmp_path: Path) -> None:
    """Another connection deletes a file from the index; the file comes back with the very same
    size and mtime. A writer trusting its remembered state would see nothing to do."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    (root / "b.py").write_text("from a import a\n\ndef b():\n    return a()\n")
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1)
        st_a = (root / "a.py").stat()
        data = (root / "a.py").read_bytes()
        (root / "a.py").unlink()
        with Index.open(root) as other:
            other.update(jobs=1)
            assert indexed_paths(other) == {"b.py"}
        (root / "a.py").write_bytes(data)
        os.utime(root / "a.py", ns=(st_a.st_atime_ns, st_a.st_mtime_ns))
        idx.update(jobs=1)
        assert indexed_paths(idx) == {"a.py", "b.py"}
        assert verify_index(idx)["equal"]


def test_a_failed_update_leaves_nothing_remembered(tmp_path: Path, monkeypatch) -> None:
    """The update's transaction rolls back; what the session noted during it must go too, or
    the next update would take the edited file for already indexed."""
    import knoxidx.update.retrieval_steps as retrieval_api

    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1)
        (root / "a.py").write_text("def a():\n    return 1\n\ndef added():\n    return 2\n")

        def failing(*args, **kwargs):
            raise OSError("disk trouble")

        with monkeypatch.context() as patch:
            patch.setattr(retrieval_api, "refresh_retrieval", failing)
            with pytest.raises(OSError):
                idx.update(jobs=1)
        idx.update(jobs=1)
        assert idx.symbols("added"), "the edit was lost after the failed update"
        assert verify_index(idx)["equal"]
        assert chunk_state(idx) == clean_chunk_state(root, tmp_path / "clean")


def test_the_layout_is_kept_only_while_what_it_is_made_of_is_unchanged(tmp_path: Path) -> None:
    root = tmp_path
    (root / "go.mod").write_text("module example.com/aa\n")
    session = WriterSession()
    paths = ["pkg/__init__.py", "pkg/m.py", "main.go"]
    first = session.layout(root, paths, ["go.mod"])
    assert session.layout(root, list(paths), ["go.mod"]) is first
    # the same size and mtime, other content: still noticed (the content is the key)
    st_mod = (root / "go.mod").stat()
    (root / "go.mod").write_text("module example.com/bb\n")
    os.utime(root / "go.mod", ns=(st_mod.st_atime_ns, st_mod.st_mtime_ns))
    second = session.layout(root, paths, ["go.mod"])
    assert second is not first and second.go_modules == {"": "example.com/bb"}
    third = session.layout(root, ["pkg/m.py", "main.go"], ["go.mod"])  # __init__.py gone
    assert third is not second and third.python_packages == frozenset()


def test_a_rebuild_through_the_same_index_forgets_the_session(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1)
        idx.update(jobs=1, rebuild=True)  # drops every table on this very connection
        assert indexed_paths(idx) == {"a.py"}
        assert verify_index(idx)["equal"]


def test_facts_remembered_for_resolution_follow_the_file_content(tmp_path: Path) -> None:
    """b.py's facts are remembered while a.py is re-resolved; b.py then gains h (no one looked
    h up: a.py is not re-resolved), and a.py later starts calling it: it must see b.py as it is
    now, not as it was remembered."""
    root = tmp_path / "repo"
    root.mkdir()
    a = root / "a.py"
    b = root / "b.py"
    b.write_text("def f():\n    return 1\n")
    a.write_text("from b import f\n\ndef main():\n    return f()\n")
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1)
        a.write_text("from b import f\n\n\ndef main():\n    return f()\n")  # b's facts loaded
        idx.update(jobs=1)
        b.write_text("def f():\n    return 1\n\n\ndef h():\n    return 2\n")
        assert idx.update(jobs=1).resolved == 1
        a.write_text("from b import h\n\n\ndef main():\n    return h()\n")
        idx.update(jobs=1)
        assert [c["qualified_name"] for c in idx.callees("main")["callees"]] == ["b.h"]
        assert verify_index(idx)["equal"]


def test_a_writer_that_waited_out_a_rebuild_writes_the_rebuilt_file(tmp_path: Path) -> None:
    """A rebuild renames a new database over the index while another writer (a `watch --wait`,
    an `index --wait`) waits for the lock on a connection to the old file. Once it has the
    lock it must write the file now at the path: writing on into the replaced one, its every
    update was lost and readers never saw them."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def a():\n    return 1\n")
    (root / "b.py").write_text("from a import a\n\ndef b():\n    return a()\n")
    with Index.open(root, create=True) as idx:
        idx.update(jobs=1)
    with Index.open(root) as waiting, Index.open(root) as waiting_too:
        with Index.open(root) as rebuilding:
            rebuilding.update(jobs=1, rebuild=True)
        (root / "a.py").write_text("def a():\n    return 1\n\ndef added():\n    return 2\n")
        with waiting.writer():  # the watcher's way
            report = waiting.update_held(jobs=1)
        assert (report.changed, report.added) == (1, 0)
        with Index.open_reader(root) as reader:
            assert reader.symbols("added"), "the update went into the replaced file"
        (root / "b.py").write_text("def b():\n    return 2\n")
        report = waiting_too.update(jobs=1)  # `index --wait`'s way: no second first build
        assert (report.changed, report.added) == (1, 0)
        assert verify_index(waiting_too)["equal"]
