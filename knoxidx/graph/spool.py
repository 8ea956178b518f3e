"""Resolution rows that resolver children write straight into SQLite, for the parent to copy.

A forked resolver child used to pickle every edge, unresolved reference and lookup key of the
files it resolved back to the parent, which unpickled them and inserted them from Python. Now
it inserts them itself into a spool: a SQLite file beside the index whose edges, unresolved,
lookups and externals tables are the index's own, column for column, so that the parent copies
each in with one ``INSERT INTO t SELECT * FROM spool.t``, which SQLite runs as a transfer of
the stored records, neither decoded nor re-encoded. On the benchmark corpus (session 30): the
child resolved 84 % of the files, whose rows cost 0.27 CPU-s to pickle and 0.30 s to unpickle
besides their inserts in the parent; now the parent, with none of the child's rows to write,
resolves two thirds of the files itself, and copying the child's in (a 17 MB spool) takes
0.05 s at the end of the build (a copy that renumbered the rowids, decoding each row, took
0.27-0.35 s for every row). Cold builds side by side, five interleaved pairs: 9.16 -> 9.01 s
(median).

The children take turns at the one spool (a lock around each batch of files), so the parent
attaches one file whatever their number (SQLite attaches ten at most); a batch's files get the
runs of rowids that follow the spool's last, read inside the batch's write transaction. Nobody
reads the spool until every child has closed it, so it is written without a journal; it is
removed after the copy, and one left by a killed build is removed by the next.
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from knoxidx.graph.sqlite_schema import table_statement
from knoxidx.indexer.heap import process_alive

SPOOL_SUFFIX = ".spool."
TABLES = ("edges", "unresolved", "lookups")  # and externals, copied apart (OR IGNORE)
# A file's runs of rowids in the spool's edges, unresolved and lookups tables: (first, last)
# each, (0, -1) for none (graph_rows' file_rows).
Runs = tuple[int, int, int, int, int, int]


class ResolutionSpool:
    """One update's spool, made by the parent before it forks the children; ``rows`` is the
    store's :class:`~knoxidx.graph.graph_rows.GraphRows`, which copies the rows in."""

    def __init__(self, rows: Any) -> None:
        self.rows = rows
        db_path: Path = rows.path
        # left by a killed update, of this index or of a first build of it (index.db.new)
        for stale in db_path.parent.glob(f"*{SPOOL_SUFFIX}*"):
            pid = stale.name.rsplit(".", 1)[-1]
            if pid.isdigit() and not process_alive(int(pid)):
                stale.unlink(missing_ok=True)
        self.path = db_path.with_name(f"{db_path.name}{SPOOL_SUFFIX}{os.getpid()}")
        self.path.unlink(missing_ok=True)
        conn = _connect(self.path)
        try:
            for table in (*TABLES, "externals"):
                conn.execute(table_statement(table))
        finally:
            conn.close()
        self.lock = multiprocessing.get_context("fork").Lock()

    def copy_in(self, placed: Sequence[tuple[int, tuple[int, ...]]]) -> None:
        """The children's rows into the store, once every child is done: ``placed`` holds each
        spooled file's id and runs (``FileResolution.spooled``)."""
        self.rows.insert_spooled(self, placed)

    def writer(self) -> SpoolWriter:
        """A child's connection to the spool."""
        return SpoolWriter(self.path, self.lock)

    def remove(self) -> None:
        with suppress(OSError):
            self.path.unlink(missing_ok=True)


class SpoolWriter:
    def __init__(self, path: Path, lock: Any) -> None:
        self.lock = lock
        self.conn = _connect(path)

    def write(self, files: Sequence[tuple[int, Any]]) -> list[Runs]:
        """Insert the rows of ``files`` ((file_id, FileResolution) each) in one transaction;
        each file's runs of rowids, in order."""
        edges: list[tuple] = []
        unresolved: list[tuple] = []
        keys: list[tuple[int, str]] = []
        externals: dict[int, tuple[str, str]] = {}
        counts = []
        for file_id, res in files:
            edges.extend([(e[0], e[1], e[2], e[3], file_id, e[4]) for e in res.edges])
            unresolved.extend([(file_id, *u) for u in res.unresolved])
            keys.extend([(file_id, k) for k in res.keys])
            externals.update(res.externals)
            counts.append((len(res.edges), len(res.unresolved), len(res.keys)))
        conn = self.conn
        with self.lock:
            conn.execute("BEGIN IMMEDIATE")
            last = conn.execute(
                "SELECT (SELECT max(rowid) FROM edges), (SELECT max(rowid) FROM unresolved),"
                " (SELECT max(rowid) FROM lookups)").fetchone()
            conn.executemany("INSERT INTO edges VALUES (?,?,?,?,?,?)", edges)
            conn.executemany("INSERT INTO unresolved VALUES (?,?,?,?,?,?,?)", unresolved)
            conn.executemany("INSERT INTO lookups VALUES (?,?)", keys)
            if externals:
                conn.executemany("INSERT OR IGNORE INTO externals VALUES (?,?,?)",
                                 [(i, f, n) for i, (f, n) in externals.items()])
            conn.execute("COMMIT")
        runs: list[Runs] = []
        following = [(n or 0) + 1 for n in last]
        for count in counts:
            run: list[int] = []
            for table, n in enumerate(count):
                run += (following[table], following[table] + n - 1) if n else (0, -1)
                following[table] += n
            runs.append(tuple(run))  # type: ignore[arg-type]
        return runs

    def close(self) -> None:
        self.conn.close()


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, timeout=60, isolation_level=None)
    conn.execute("PRAGMA journal_mode=OFF")  # discarded on any failure: nothing to roll back
    conn.execute("PRAGMA synchronous=OFF")  # read back long before a crash could lose it
    conn.execute("PRAGMA cache_size=-16384")
    return conn
