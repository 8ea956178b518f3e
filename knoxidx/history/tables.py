"""The history tables of a graph store, whichever store it is: the one place that knows both
(the SQLite tables' module and the PostgreSQL ones', which reads the former's helpers)."""

from __future__ import annotations

import sqlite3
from typing import Any

from knoxidx.history.pg_tables import PgHistoryTables
from knoxidx.history.store import HistoryRows, HistoryTables


def tables_of(store: Any) -> HistoryRows | None:
    """The history tables of a graph store: the SQLite index's, or one repository's in the
    PostgreSQL store; None for a PostgreSQL store read across every repository."""
    conn = getattr(store, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        return HistoryTables(conn)
    repo = getattr(store, "repo", None)
    if conn is None or repo is None:
        return None
    return PgHistoryTables(conn, repo)
