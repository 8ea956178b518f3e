"""Resolution rows that resolver children write straight into SQLite, for the parent to copy.

A forked resolver child inserts its rows itself into a spool: a SQLite file beside the index
whose edges, unresolved, lookups and externals tables are the index's own, column for column,
so that the parent copies each in with one ``INSERT INTO t SELECT * FROM spool.t``, which
SQLite runs as a transfer of the stored records, neither decoded nor re-encoded: cheaper than
pickling the rows to the parent, which then has its own share of files to resolve instead.

A child writes its files' rows as the parent writes its own (``GraphRows.insert_resolution``),
runs of rowids in ``file_rows`` included, which the parent moves by each table's offset. The
children take turns at the one spool (a lock around each batch of files), so the parent
attaches one file whatever their number (SQLite attaches ten at most). Nobody
reads the spool until every child has closed it, so it is written without a journal; it is
removed after the copy, and one left by a killed build is removed by the next.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from knoxidx.core.heap import process_alive
from knoxidx.graph.dbfile import unjournaled_connection
from knoxidx.graph.graph_rows import GraphRows
from knoxidx.graph.sqlite_schema import table_statement

SPOOL_SUFFIX = ".spool."
# What a spool holds: the tables GraphRows.insert_resolution writes, each the index's own.
TABLES = ("edges", "unresolved", "lookups", "externals", "file_rows")


class ResolutionSpool:
    """One update's spool, made by the parent before it forks the children; ``rows`` is the
    store's :class:`~knoxidx.graph.graph_rows.GraphRows`, which copies the rows in."""

    def __init__(self, rows: GraphRows) -> None:
        import multiprocessing  # (off the import path of the query commands)

        self.rows = rows
        db_path = rows.path
        # left by a killed update, of this index or of a first build of it (index.db.new)
        for stale in db_path.parent.glob(f"*{SPOOL_SUFFIX}*"):
            pid = stale.name.rsplit(".", 1)[-1]
            if pid.isdigit() and not process_alive(int(pid)):
                stale.unlink(missing_ok=True)
        self.path = db_path.with_name(f"{db_path.name}{SPOOL_SUFFIX}{os.getpid()}")
        self.path.unlink(missing_ok=True)
        conn = unjournaled_connection(self.path)
        try:
            for table in TABLES:
                conn.execute(table_statement(table))
        finally:
            conn.close()
        self.lock = multiprocessing.get_context("fork").Lock()

    def copy_in(self) -> None:
        """The children's rows into the store, once every child is done."""
        self.rows.insert_spooled(self.path)

    def writer(self) -> SpoolWriter:
        """A child's connection to the spool."""
        return SpoolWriter(self.path, self.lock)

    def remove(self) -> None:
        with suppress(OSError):
            self.path.unlink(missing_ok=True)


class SpoolWriter:
    def __init__(self, path: Path, lock: Any) -> None:
        self.lock = lock
        self.rows = GraphRows()
        self.rows.conn = unjournaled_connection(path)

    def write(self, files: Sequence[tuple[int, Any]]) -> None:
        """The rows of ``files`` ((file_id, FileResolution) each), in one transaction, as the
        index's own are written (``GraphRows.insert_resolution``: each file's rows one run of
        rowids per table, recorded in ``file_rows``)."""
        rows = self.rows
        with self.lock:
            rows.conn.execute("BEGIN IMMEDIATE")
            for file_id, res in files:
                rows.insert_resolution(file_id, res.edges, res.unresolved, res.keys,
                                       res.externals)
            rows.conn.execute("COMMIT")

    def close(self) -> None:
        self.rows.conn.close()

