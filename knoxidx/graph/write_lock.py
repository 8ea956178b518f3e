"""The single-writer lock of a SQLite index: an advisory ``flock`` on ``.knoxidx/write.lock``.

Readers never take it (WAL lets them read while the writer writes); a second writer gets a
clear error, or waits with ``--wait``. The PostgreSQL store's counterpart is an advisory lock
(``pg_write_lock.PgWriteLock``).

An ``flock`` belongs to the open file, which a forked child shares: a child that outlived a
killed writer (a resolver worker waiting on a lock its dead parent held) kept the index locked
for good. So a forked child closes its copy at once (``core.fork_locks``), and a lock whose
recorded holder is gone is taken over by replacing the lock file (``_take_over``).
"""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import time
from contextlib import suppress
from pathlib import Path

from knoxidx.core.errors import IndexLockedError
from knoxidx.core.fork_locks import close_in_forked_children, released
from knoxidx.core.heap import process_alive
from knoxidx.graph.dbfile import storage_error

LOCK_NAME = "write.lock"
# held for a moment by a writer taking over a lock whose holder is gone, so two such writers
# take turns (each then checks again which file is the lock)
TAKEOVER_NAME = "write.lock.takeover"

log = logging.getLogger(__name__)


class WriteLock:
    """The single-writer lock: an advisory ``flock`` on ``.knoxidx/write.lock``.

    The kernel drops it when the holder dies; the file records the holder's process id and
    host, so a lock still held after its holder died (by something that inherited it) is taken
    over rather than blocking every writer for ever.
    """

    def __init__(self, index_dir: Path) -> None:
        self.path = index_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self, wait: bool = False, timeout: float | None = None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            fd = self._try_lock()
            if fd is None and _holder_gone(self.path):
                fd = self._take_over()
            if fd is not None:
                break
            if not wait or (deadline is not None and time.monotonic() > deadline):
                raise IndexLockedError(
                    f"another knoxidx process{_holder_text(self.path)} is writing this index "
                    f"({self.path.parent}); wait for it, or pass --wait")
            time.sleep(0.05)
        with suppress(OSError):  # who holds it: for the other writer's message and takeover
            os.ftruncate(fd, 0)
            os.write(fd, holder_record().encode())
        self._fd = fd
        close_in_forked_children(fd, self._forget)

    def release(self) -> None:
        if self._fd is not None:
            released(self._fd)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def _forget(self) -> None:
        self._fd = None  # (a forked child's copy, closed)

    def _try_lock(self) -> int | None:
        """The lock file's descriptor, locked; None when another holds it."""
        while True:
            fd = _open(self.path)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                return None
            if _is_current(fd, self.path):
                return fd
            os.close(fd)  # taken over meanwhile: the lock is the new file now

    def _take_over(self) -> int | None:
        """The lock, taken from a holder that is gone (its process no longer exists, though
        something that inherited its lock still holds the file): a new lock file replaces the
        old one. None when, looked at again, the holder is alive."""
        guard = _open(self.path.with_name(TAKEOVER_NAME))
        try:
            fcntl.flock(guard, fcntl.LOCK_EX)
            fd = self._try_lock()  # the holder may have finished, or been taken over from
            if fd is not None or not _holder_gone(self.path):
                return fd
            holder = _holder_text(self.path)
            fresh = self.path.with_name(f"{LOCK_NAME}.{os.getpid()}")
            fd = _open(fresh)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                os.replace(fresh, self.path)
            except OSError as exc:
                os.close(fd)
                with suppress(OSError):
                    fresh.unlink()
                raise storage_error(exc, self.path) from None
            log.warning("took over the write lock of knoxidx process%s, which is gone (a "
                        "process it started still held the lock)", holder)
            return fd
        finally:
            os.close(guard)  # (which unlocks it)


def holder_record() -> str:
    """What a holder writes into the lock file: its process id and where that id is valid
    (the host and PID namespace), so only a writer that can see the holder's process judges
    it gone."""
    return f"{os.getpid()} {_pid_space()}"


def _pid_space() -> str:
    try:
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        namespace = ""
    return f"{socket.gethostname()}/{namespace}"


def _holder(path: Path) -> tuple[int, str | None] | None:
    """The recorded holder: its process id and its PID space (None: recorded by a version
    that wrote the process id alone); None when nothing readable is recorded."""
    try:
        fields = path.read_text().split()
    except (OSError, UnicodeDecodeError):
        return None
    if not fields or not fields[0].isdigit():
        return None
    return int(fields[0]), (fields[1] if len(fields) > 1 else None)


def _holder_gone(path: Path) -> bool:
    """Whether the recorded holder's process no longer exists, as far as this process can see
    (a holder in another host or PID namespace is never judged gone)."""
    holder = _holder(path)
    if holder is None:
        return False
    pid, space = holder
    if space is not None and space != _pid_space():
        return False
    return pid != os.getpid() and not process_alive(pid)


def _holder_text(path: Path) -> str:
    holder = _holder(path)
    return f" (pid {holder[0]})" if holder else ""


def _open(path: Path) -> int:
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise storage_error(exc, path) from None


def _is_current(fd: int, path: Path) -> bool:
    """Whether ``fd`` is still the file at ``path`` (a takeover replaces it)."""
    try:
        opened, named = os.fstat(fd), os.stat(path)
    except OSError:
        return False
    return (opened.st_dev, opened.st_ino) == (named.st_dev, named.st_ino)
