"""What can go wrong with the index's files, found cheaply and said plainly.

:func:`check_database_file` runs at every open (a ``stat``); :func:`storage_error`
turns a failure of SQLite or the file system under the index into the one-line
:class:`~knoxidx.core.errors.KnoxidxError` a user can act on: a damaged database names
``knoxidx index --rebuild``; a full disk or a read-only ``.knoxidx/`` says the index was left
as it was and what to do.
"""

from __future__ import annotations

import errno
import logging
import os
import sqlite3
import time
from pathlib import Path

from knoxidx.core.errors import REBUILD_FIX, CorruptIndexError, IndexWriteError, KnoxidxError

log = logging.getLogger(__name__)

__all__ = ["REBUILD_FIX", "check_database_file", "keep_out_of_git", "storage_error"]

# what a ``.knoxidx`` folder holds so that git leaves it out of ``git status`` without an edit
# to the repository's own ``.gitignore`` (as ``.pytest_cache`` and virtualenvs do)
IGNORE_ALL = "# made by knoxidx: its index is no part of the repository\n*\n"


def keep_out_of_git(index_dir: Path) -> None:
    """Write ``index_dir/.gitignore`` holding ``*`` unless one is there. A ``.knoxidx`` that is
    a symlink is left alone: git lists the link itself, which no file behind it can hide, and
    the folder it points to is someone else's. The file is made exclusively, so nothing placed
    there (a link into the user's files included) is followed or overwritten; a folder that
    cannot be written to only keeps showing in ``git status``."""
    if index_dir.is_symlink() or not index_dir.is_dir():
        return
    try:
        with open(index_dir / ".gitignore", "x", encoding="utf-8") as ignore_file:
            ignore_file.write(IGNORE_ALL)
    except FileExistsError:
        pass
    except OSError as exc:  # a read-only folder: the index still works, git merely lists it
        log.debug("could not write %s/.gitignore: %s", index_dir, exc)


def check_database_file(db_path: Path, conn: sqlite3.Connection) -> None:
    """The cheap check at open, after SQLite's own first read (which refuses a file that is
    not a database, or shorter than its header says): the file is a whole number of pages.
    Damage inside the b-trees is found by the writer's :meth:`SQLiteStore.quick_check` or by
    the query that reads it.

    Through the connection and ``stat``, never ``open``: closing any other descriptor of the
    file drops every POSIX lock this process holds on it, those of the SQLite readers in
    other threads included; a writer in another process then checkpointed past their
    snapshots and deleted the WAL under them, and they answered "database disk image is
    malformed" or wrong rows (see https://sqlite.org/howtocorrupt.html, section 2.2)."""
    page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
    size = _file_size(db_path)
    if size % page_size:
        # a checkpoint growing the file is seen part-way through a page's write: look again
        time.sleep(0.02)
        size = _file_size(db_path)
    if size % page_size:
        raise CorruptIndexError(
            f"the index at {db_path} is damaged (truncated: {size} bytes is not a whole "
            f"number of {page_size}-byte pages); {REBUILD_FIX}")


def file_identity(path: Path) -> tuple[int, int] | None:
    """The (device, inode) of the file at ``path``, which a rename of another file over it
    changes; None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0  # gone meanwhile: SQLite's own reads report it


_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_READONLY_ERRNOS = {errno.EACCES, errno.EPERM, errno.EROFS}


def storage_error(exc: BaseException, db_path: Path | None) -> KnoxidxError:
    """The one-line error a user can act on for a failure of SQLite or the file system under
    the index: damaged (rebuild), disk full or read-only (the index is unchanged)."""
    where = str(db_path) if db_path else "the index (.knoxidx/index.db)"
    folder = str(db_path.parent) if db_path else ".knoxidx/"
    unchanged = "the index was left as it was"
    if isinstance(exc, OSError):
        detail = exc.strerror or str(exc)
        if exc.errno in _FULL_ERRNOS:
            return IndexWriteError(f"the disk is full: cannot write {where} ({detail}); free "
                                   f"some space, then run `knoxidx index` again ({unchanged})")
        if exc.errno in _READONLY_ERRNOS:
            return IndexWriteError(f"{folder} is read-only ({detail}); make it writable "
                                   f"(chmod u+w), then run `knoxidx index` again")
        return IndexWriteError(f"cannot use {where} ({detail})")
    name = getattr(exc, "sqlite_errorname", "") or ""
    detail = f"{exc}" + (f", {name}" if name else "")
    # (a text column that is not UTF-8 fails in Python's sqlite3, without an SQLite code)
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or (
        not name and ("malformed" in str(exc) or "Could not decode" in str(exc))
    ):
        return CorruptIndexError(f"the index at {where} is damaged ({detail}); {REBUILD_FIX}")
    if name.startswith("SQLITE_FULL") or (name.startswith("SQLITE_IOERR") and _no_space(db_path)):
        return IndexWriteError(f"the disk is full: cannot write {where} ({detail}); free some "
                               f"space, then run `knoxidx index` again ({unchanged})")
    if name.startswith("SQLITE_IOERR") and _file_size_limited():
        limit = _file_size_limited()
        return IndexWriteError(
            f"the disk is full for this process: the file size limit (ulimit -f, {limit} "
            f"bytes) stops writes to {where} ({detail}); raise it or free space, then run "
            f"`knoxidx index` again ({unchanged})")
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM")):
        return IndexWriteError(f"{folder} is read-only or inaccessible, so {where} cannot be "
                               f"written ({detail}); make it writable (chmod u+w), then run "
                               f"`knoxidx index` again")
    if name.startswith("SQLITE_IOERR"):
        return IndexWriteError(f"disk I/O error on {where} ({detail}); check the disk, then "
                               f"run `knoxidx index` again; if it persists, {REBUILD_FIX}")
    return KnoxidxError(f"the index at {where} could not be used ({detail})")


def _no_space(db_path: Path | None) -> bool:
    try:
        st = os.statvfs(db_path.parent if db_path else ".")
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < 1024 * 1024


def _file_size_limited() -> int:
    import resource

    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return 0 if soft == resource.RLIM_INFINITY else soft


# The page size of a new index and of a resolution spool: with SQLite's 4 KiB a first build
# makes a system call per page and spills each file's facts blob (9 KB on average) over
# overflow pages; 16 KiB builds a few % faster, 32 and 64 KiB are slower again, queries do not
# move. An index made before keeps its own page size.
PAGE_BYTES = 16384


def unjournaled_connection(path: Path) -> sqlite3.Connection:
    """A connection to a file nobody reads until it is complete (a first build's scratch
    database, a resolution spool): no journal and no syncs, since on any failure the file is
    discarded whole, not rolled back."""
    conn = sqlite3.connect(path, timeout=60, isolation_level=None)
    conn.execute(f"PRAGMA page_size={PAGE_BYTES}")  # (a new file's: the first statement)
    conn.execute("PRAGMA journal_mode=OFF")
    conn.execute("PRAGMA synchronous=OFF")  # flushed once, when it is installed or copied
    conn.execute("PRAGMA cache_size=-16384")
    return conn
