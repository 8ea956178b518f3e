"""What can go wrong with the index's files, found cheaply and said plainly.

:func:`check_database_file` runs at every open (one 100-byte read); :func:`storage_error`
turns a failure of SQLite or the file system under the index into the one-line
:class:`~knoxidx.errors.KnoxidxError` a user can act on: a damaged database names
``knoxidx index --rebuild``; a full disk or a read-only ``.knoxidx/`` says the index was left
as it was and what to do.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from knoxidx.errors import CorruptIndexError, IndexWriteError, KnoxidxError

REBUILD_FIX = "rebuild it with `knoxidx index --rebuild`"
_SQLITE_MAGIC = b"SQLite format 3\x00"


def check_database_file(db_path: Path) -> None:
    """Cheap checks at open (one 100-byte read): the SQLite header is there, the file is a
    whole number of pages, and not shorter than the header says. They catch a truncated or
    overwritten file before any query trips over it; damage inside the b-trees is found by
    the writer's :meth:`SQLiteStore.quick_check` or by the query that reads it."""
    try:
        size = db_path.stat().st_size
        with open(db_path, "rb") as fh:
            header = fh.read(100)
    except OSError:
        return  # SQLite's own open reports it
    if size == 0:
        return  # an empty file is an empty database
    problem = ""
    page_size = int.from_bytes(header[16:18], "big") if len(header) == 100 else 0
    page_size = 65536 if page_size == 1 else page_size
    if len(header) < 100 or header[:16] != _SQLITE_MAGIC:
        problem = "not an SQLite database"
    elif page_size < 512 or page_size & (page_size - 1):
        problem = f"bad page size {page_size}"
    elif size % page_size:
        problem = f"truncated: {size} bytes is not a whole number of {page_size}-byte pages"
    else:
        pages = int.from_bytes(header[28:32], "big")
        header_valid = header[24:28] == header[92:96]
        # pages not yet copied from the WAL may be missing from the file (a checkpoint that
        # was interrupted): only a file without a WAL must hold every page
        wal = db_path.with_name(db_path.name + "-wal")
        has_wal = wal.exists() and wal.stat().st_size > 0
        if header_valid and not has_wal and size < pages * page_size:
            problem = f"truncated: {size // page_size} of {pages} pages"
    if problem:
        raise CorruptIndexError(f"the index at {db_path} is damaged ({problem}); {REBUILD_FIX}")


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
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or (
        not name and "malformed" in str(exc)
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
