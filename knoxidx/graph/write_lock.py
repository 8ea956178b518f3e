"""The single-writer lock of a SQLite index: an advisory ``flock`` on ``.knoxidx/write.lock``.

Readers never take it (WAL lets them read while the writer writes); a second writer gets a
clear error, or waits with ``--wait``. The PostgreSQL store's counterpart is an advisory lock
(``pg_write_lock.PgWriteLock``).
"""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from knoxidx.errors import IndexLockedError
from knoxidx.graph.dbfile import storage_error

LOCK_NAME = "write.lock"


class WriteLock:
    """The single-writer lock: an advisory ``flock`` on ``.knoxidx/write.lock``.

    The kernel drops it when the holder dies, so a killed indexer never leaves a stale lock.
    """

    def __init__(self, index_dir: Path) -> None:
        self.path = index_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self, wait: bool = False, timeout: float | None = None) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise storage_error(exc, self.path) from None
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait or (deadline is not None and time.monotonic() > deadline):
                    holder = _read_holder(self.path)
                    os.close(fd)
                    raise IndexLockedError(
                        f"another knoxidx process{holder} is writing this index "
                        f"({self.path.parent}); wait for it, or pass --wait"
                    ) from None
                time.sleep(0.05)
        try:  # who holds it, for the other writer's message: nice to have, not needed
            os.ftruncate(fd, 0)
            os.write(fd, str(os.getpid()).encode())
        except OSError:
            pass
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def _read_holder(path: Path) -> str:
    try:
        pid = path.read_text().strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid else ""
