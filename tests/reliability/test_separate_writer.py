"""Readers in one process, ``knoxidx index`` writing from another: every answer is a whole
committed state, never "database disk image is malformed" (quick form: a few seconds;
``python -m bench.reliability`` runs 60 s on a real corpus)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.reliability.common import run_cli
from bench.reliability.separate_writer import separate_writer
from knoxidx.graph.store import SQLiteStore
from tests.test_crash import make_repo


def counts(store: SQLiteStore) -> tuple[int, ...]:
    """Rows counted through the tables and through their indexes: equal in any one state."""
    with store.read_snapshot():
        row = store.conn.execute(
            "SELECT (SELECT count(*) FROM nodes),"
            " (SELECT count(*) FROM nodes INDEXED BY nodes_name WHERE name >= ''),"
            " (SELECT count(*) FROM edges),"
            " (SELECT count(*) FROM edges INDEXED BY edges_target WHERE target >= -9e18)"
        ).fetchone()
    return tuple(row)


@pytest.mark.heavy
def test_a_reader_opened_beside_others_leaves_their_locks_alone(tmp_path: Path) -> None:
    """Opening an index used to read its header with open() and close(), and closing any
    descriptor of a file drops every POSIX lock the process holds on it: the readers already
    open lost theirs, so the next writer's close checkpointed past their snapshots and
    deleted the WAL under them. They went on answering from a stale WAL index: wrong counts
    or "malformed" (the false corrupt_index answers of a server beside `knoxidx index`)."""
    root = tmp_path / "repo"
    make_repo(root, 30)
    assert run_cli("index", "--jobs", "1", str(root)).returncode == 0
    first = SQLiteStore.open(root, readonly=True)
    counts(first)  # its connection reads, so it holds the database's shared lock from now on
    second = SQLiteStore.open(root, readonly=True)
    try:
        for generation in range(1, 4):
            for i in range(0, 30, 3):
                body = "".join(f"\nclass G{generation}_{k}:\n    def run(self):\n"
                               f"        return f{i}()\n" for k in range(4 * generation))
                (root / "pkg" / f"m{i}.py").write_text(f"def f{i}():\n    return {i}\n{body}")
            written = run_cli("index", "--jobs", "1", str(root))
            assert written.returncode == 0, written.stderr
            fresh = SQLiteStore.open(root, readonly=True)
            try:
                expected = counts(fresh)
            finally:
                fresh.close()
            assert expected[0] == expected[1] and expected[2] == expected[3]
            assert counts(first) == expected, generation
            assert counts(second) == expected, generation
    finally:
        first.close()
        second.close()


@pytest.mark.heavy
def test_http_readers_beside_a_separate_writer_never_fail(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    make_repo(corpus, 40)
    outcome = separate_writer(corpus, seconds=3, workdir=tmp_path, min_updates=3)
    assert outcome.ok, (outcome.failures, outcome.figures)
    assert outcome.figures["pair_checks"] > 0
