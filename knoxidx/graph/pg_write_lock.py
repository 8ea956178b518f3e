"""The single writer of one repository in a PostgreSQL store: a session advisory lock on a
connection of its own. PostgreSQL drops it when the holder's connection dies, so a killed
indexer never leaves a stale lock, and writers of different repositories never wait for each
other (the SQLite store's is :mod:`knoxidx.graph.write_lock`)."""

from __future__ import annotations

import time
from typing import Any

from knoxidx.core.errors import IndexLockedError
from knoxidx.core.store_url import redact
from knoxidx.graph import pg_schema


class PgWriteLock:
    """One writer per repository: ``pg_try_advisory_lock`` keyed by the repository id, held on
    a connection of its own for as long as the writer runs."""

    def __init__(self, url: str, repo: str) -> None:
        self.url = url
        self.repo = repo
        self._conn: Any = None

    def acquire(self, wait: bool = False, timeout: float | None = None) -> None:
        conn = pg_schema.connect(self.url, role=f"writer {self.repo}")
        key = self._key
        deadline = None if timeout is None else time.monotonic() + timeout
        while not conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (key,)).fetchone()[0]:
            if not wait or (deadline is not None and time.monotonic() > deadline):
                holder = _lock_holder(conn, key)
                conn.close()
                raise IndexLockedError(
                    f"another knoxidx writer{holder} is writing repository {self.repo!r} in "
                    f"{redact(self.url)}; wait for it, or pass --wait"
                )
            time.sleep(0.1)
        self._conn = conn

    @property
    def _key(self) -> str:
        return f"knoxidx:write:{self.repo}"

    def release(self) -> None:
        if self._conn is None:
            return
        conn, self._conn = self._conn, None
        import psycopg

        try:
            # Unlocked in the session, so the lock is free when this returns. Closing the
            # session releases it too, but the server does that after the client has moved
            # on: the same writer's next update could find its own old lock still held.
            conn.execute("SELECT pg_advisory_unlock(hashtext(%s))", (self._key,))
        except psycopg.Error:
            pass  # a broken session: closing it (or its death) is what releases the lock
        finally:
            conn.close()


def _lock_holder(conn: Any, key: str) -> str:
    row = conn.execute(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.granted AND l.objid = (hashtext(%s)::bigint"
        " & 4294967295) LIMIT 1", (key,),
    ).fetchone()
    return f" ({row[0]})" if row and row[0] else ""
