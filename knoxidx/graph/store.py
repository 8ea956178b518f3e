"""SQLite storage of the graph: the connection's life. All SQL of the graph lives here, in
:mod:`.graph_rows` (the rows it reads and writes), :mod:`.sqlite_schema` (the tables) and
:mod:`.queries` (reads for the commands).

One database per repository (``<repo>/.knoxidx/index.db``), WAL mode so readers work while the
single writer writes; each update is one transaction, so a reader never sees half of one and a
killed writer leaves the previous state. Structural edges (Defines, Contains) are not stored:
they are views over ``nodes.file_id`` / ``nodes.parent_id``.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING

from knoxidx.core.errors import (
    CorruptIndexError,
    IndexNotFoundError,
    IndexWriteError,
    KnoxidxError,
    decoding_stored,
)
from knoxidx.core.heap import process_alive
from knoxidx.graph.dbfile import (
    PAGE_BYTES,
    REBUILD_FIX,
    check_database_file,
    file_identity,
    keep_out_of_git,
    storage_error,
    unjournaled_connection,
)
from knoxidx.graph.graph_rows import GraphRows
from knoxidx.graph.index_link import refuse_committed_index_link
from knoxidx.graph.sqlite_schema import (
    DB_NAME,
    INDEX_DIR,
    INDEX_STATEMENTS,
    INIT_SUFFIX,
    SCHEMA,
    SCHEMA_VERSION,
    SCRATCH_SUFFIX,
    index_columns,
    index_name,
    index_table,
)
from knoxidx.graph.write_lock import WriteLock

if TYPE_CHECKING:
    from knoxidx.graph.queries import GraphQueries
    from knoxidx.graph.spool import ResolutionSpool


def _read_only_directory(exc: BaseException) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_READONLY_DIRECTORY", "SQLITE_READONLY_CANTINIT",
                            "SQLITE_CANTOPEN")) or (name == "SQLITE_READONLY")


# The page cache while indexes are built (see SQLiteStore._create_indexes), in KiB.
SORT_CACHE_KIB = 1024
# Helper threads for the sorts of the indexes a first build makes at its end, when nothing else
# runs: one per core (~17 % faster sorts on 2 cores), at most 4 (not measured beyond 2).
SORT_THREADS = min(4, os.cpu_count() or 1)


def _connect(db_path: Path, readonly: bool, shm_writable: bool = True) -> sqlite3.Connection:
    """``shm_writable`` False: a read-only connection that never writes the WAL's
    shared-memory file (see SQLiteStore._open_read_only_shm)."""
    if readonly:
        shm = "" if shm_writable else "&readonly_shm=1"
        conn = sqlite3.connect(f"file:{db_path}?mode=ro{shm}", uri=True, timeout=30)
    else:
        conn = sqlite3.connect(db_path, timeout=30, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout=30000")
        if not readonly:
            conn.execute(f"PRAGMA page_size={PAGE_BYTES}")  # (a new, empty file's; else no-op)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA cache_size=-16384")  # 16 MiB: forked workers inherit it
    except BaseException:
        # closed now, not when collected: the process shares one shared-memory mapping per
        # database among its connections, and a failed one's must not outlive it
        conn.close()
        raise
    return conn


def _shm_not_grown(exc: BaseException) -> bool:
    """SQLite could not make or grow the WAL's shared-memory file (``-shm``): a full disk."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith("SQLITE_IOERR_SHM")


def _keep_index_dir_out_of_git(folder: Path) -> None:
    """Only a repository's ``.knoxidx``: a scratch or cache folder elsewhere is no repository's."""
    if folder.name == INDEX_DIR:
        keep_out_of_git(folder)


def _create_file(db_path: Path) -> None:
    """A new index appears whole, schema and WAL mode included: made beside its name, then
    linked into place (or left, if another process made one meanwhile). Made in place, a kill
    while SQLite switched the new file to WAL left a hot rollback journal, which no read-only
    connection may replay: readers failed with "attempt to write a readonly database"."""
    for stale in db_path.parent.glob(db_path.name + ".*" + INIT_SUFFIX + "*"):
        pid = stale.name[len(db_path.name) + 1 :].split(".", 1)[0]
        if pid.isdigit() and not process_alive(int(pid)):  # left by a process killed while creating
            stale.unlink(missing_ok=True)
    made = db_path.with_name(f"{db_path.name}.{os.getpid()}{INIT_SUFFIX}")
    try:
        conn = _connect(made, readonly=False)
        try:
            SQLiteStore(made, conn)._create_schema()
        finally:
            conn.close()
        try:
            os.link(made, db_path)  # atomic, and never over another process's new index
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links (some network and FAT mounts)
            if not db_path.exists():  # a rename instead: it races only another creator
                os.replace(made, db_path)
    finally:
        for path in (made, *_sidecars(made)):
            path.unlink(missing_ok=True)


def _sidecars(db_path: Path) -> tuple[Path, ...]:
    return tuple(db_path.with_name(db_path.name + s) for s in ("-wal", "-shm", "-journal"))


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class SQLiteStore(GraphRows):
    def __init__(self, db_path: Path, conn: sqlite3.Connection) -> None:
        self.path = db_path
        self.conn = conn
        # the (device, inode) of the file at ``path`` before ``conn`` was opened (see
        # reopen_if_replaced); None where the store never follows a replacement
        self.opened_file: tuple[int, int] | None = None
        self.rebuilt_reason: str | None = None
        # a scratch database's flushes running behind the build (see _flush_behind); None in
        # any other database
        self._flushes: list[tuple[threading.Thread, list[OSError]]] | None = None
        self._bulk = False  # inside bulk_load(enabled=True): secondary indexes are dropped
        # why this store only reads (see _open_read_only_shm); raised by write_lock()
        self.writes_refused: KnoxidxError | None = None

    # ---- opening -----------------------------------------------------------------------

    @classmethod
    def open(cls, root: Path, *, create: bool = False, readonly: bool = False) -> SQLiteStore:
        refuse_committed_index_link(root)
        db_path = root / INDEX_DIR / DB_NAME
        if not db_path.exists() and not create:
            raise IndexNotFoundError(f"no knoxidx index at {root}; run `knoxidx index {root}` first")
        return cls.open_at(db_path, create=create, readonly=readonly)

    @classmethod
    def open_at(cls, db_path: Path, *, create: bool = False, readonly: bool = False) -> SQLiteStore:
        if not db_path.exists():
            if not create:
                raise IndexNotFoundError(f"no knoxidx index at {db_path}")
            if db_path.parent.exists() and not db_path.parent.is_dir():
                raise IndexWriteError(
                    f"{db_path.parent} is a file, not the directory knoxidx keeps its index in; "
                    "move it away and index again")
            try:
                db_path.parent.mkdir(parents=True, exist_ok=True)
                _keep_index_dir_out_of_git(db_path.parent)
                _create_file(db_path)
            except (sqlite3.Error, OSError) as exc:
                raise storage_error(exc, db_path) from None
        conn = None
        try:
            opened_file = file_identity(db_path)  # (before: a replacement after is seen)
            conn = _connect(db_path, readonly)
            store = cls(db_path, conn)
            store.opened_file = opened_file
            store._check_schema(create and not readonly)
            check_database_file(db_path, conn)
        except BaseException as exc:
            if conn is not None:
                conn.close()
            if not isinstance(exc, (sqlite3.Error, OSError)):
                raise
            if not create and _read_only_directory(exc):
                return cls._open_immutable(db_path, exc)
            if not create and _shm_not_grown(exc):
                return cls._open_read_only_shm(db_path, exc)
            raise storage_error(exc, db_path) from None
        return store

    @classmethod
    def _open_read_only_shm(cls, db_path: Path, why: BaseException) -> SQLiteStore:
        """The disk is full, and the first connection to an index must grow the WAL's
        shared-memory file to 32 KiB even to read. Opened with ``readonly_shm``, SQLite reads
        that file without writing it, or, when no other process has it open, builds its own
        copy of the WAL index in memory from the WAL: the way it reads a WAL database whose
        ``-shm`` it may not write, and as safe beside a writer in another process (SQLite's
        ``walro`` tests). ``immutable`` would ignore the WAL and a writer's commits; an
        exclusive locking mode would lock writers out. Reads work; a write gets ``why``."""
        conn = None
        try:
            conn = _connect(db_path, readonly=True, shm_writable=False)
            store = cls(db_path, conn)
            store._check_schema(False)
            check_database_file(db_path, conn)
        except sqlite3.Error:
            if conn is not None:
                conn.close()
            raise storage_error(why, db_path) from None
        store.writes_refused = storage_error(why, db_path)
        return store

    @classmethod
    def _open_immutable(cls, db_path: Path, why: BaseException) -> SQLiteStore:
        """A read-only ``.knoxidx/`` (a read-only mount, a shared cache): SQLite cannot make
        the WAL's shared-memory file there, but then nobody can write the index either, so it
        is read as immutable. Queries work; writes fail with the read-only error."""
        try:
            conn = sqlite3.connect(f"file:{db_path}?mode=ro&immutable=1", uri=True)
            store = cls(db_path, conn)
            store._check_schema(False)
        except sqlite3.Error:
            raise storage_error(why, db_path) from None
        return store

    def quick_check(self, max_bytes: int | None = None) -> None:
        """Raise :class:`CorruptIndexError` unless SQLite's ``quick_check`` passes: what a
        writer runs before it writes. It reads every page (0.12-0.25 s for Django's 22 MB
        index on a busy 2-core machine), so with ``max_bytes`` a larger database is not
        checked: its update then relies on the open check and on SQLite's own checks of the
        pages it touches (reported the same way), and ``knoxidx verify`` checks it all."""
        if max_bytes is not None and self.path.stat().st_size > max_bytes:
            return
        try:
            result = self.conn.execute("PRAGMA quick_check(1)").fetchone()[0]
        except sqlite3.Error as exc:
            raise storage_error(exc, self.path) from None
        if result != "ok":
            found = " ".join(str(result).replace("*** in database main ***", "").split())
            raise CorruptIndexError(
                f"the index at {self.path} is damaged ({found}); {REBUILD_FIX}"
            )

    def _check_schema(self, may_create: bool) -> None:
        has_meta = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
        ).fetchone()
        version = None
        if has_meta:
            row = self.conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            with decoding_stored("the schema version"):
                version = int(row[0]) if row else None
        if version == SCHEMA_VERSION:
            return
        if not may_create:
            if version is None and not self.conn.execute(
                    "SELECT 1 FROM sqlite_master LIMIT 1").fetchone():
                raise IndexNotFoundError(  # not damaged: nothing was ever committed to it
                    f"the index at {self.path} is empty (its first build did not finish); "
                    "run `knoxidx index`"
                )
            if version is None:
                raise CorruptIndexError(
                    f"{self.path} is not a knoxidx index; rebuild with `knoxidx index --rebuild`"
                )
            raise CorruptIndexError(
                f"the index at {self.path} has schema {version}, this knoxidx reads "
                f"{SCHEMA_VERSION}; run `knoxidx index` to rebuild it"
            )
        if version is not None:
            self.rebuilt_reason = (
                f"index schema {version} is not this knoxidx's ({SCHEMA_VERSION}): rebuilding"
            )
        self._create_schema()

    def _create_schema(self) -> None:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
        )]
        for table in tables:
            conn.execute(f'DROP TABLE IF EXISTS "{table}"')
        for statement in SCHEMA.strip().split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        conn.execute("COMMIT")

    def is_empty(self) -> bool:
        """Nothing indexed, nothing recorded but the schema version: a first build."""
        return not self.conn.execute(
            "SELECT EXISTS(SELECT 1 FROM files) OR EXISTS(SELECT 1 FROM meta"
            " WHERE key != 'schema_version')").fetchone()[0]

    def open_scratch(self) -> SQLiteStore:
        """A new, empty database beside this one, written without a journal: where a first build
        goes (see :meth:`install`). Nobody reads it until it is complete, so it needs no WAL,
        which would write every page twice and copy 160 MB at the commit of a large repository;
        a build killed half-way leaves only this file, removed by the next one."""
        path = self.path.with_name(self.path.name + SCRATCH_SUFFIX)
        for leftover in (path, *_sidecars(path)):
            leftover.unlink(missing_ok=True)
        conn = unjournaled_connection(path)  # flushed once, by install()
        conn.execute("PRAGMA locking_mode=EXCLUSIVE")
        scratch = SQLiteStore(path, conn)
        scratch._create_schema()
        scratch._flushes = []
        return scratch

    def install(self, scratch: SQLiteStore) -> None:
        """Make the complete ``scratch`` database this index: switched to WAL, flushed to disk,
        then renamed over this one (atomic: a reader opens the old file or the new one). The
        old file's WAL and shared-memory files go first, so the new database never meets them;
        a reader still holding the old file keeps its own copies until it closes."""
        scratch.conn.execute("PRAGMA journal_mode=WAL")
        scratch.conn.close()
        self.conn.close()
        try:
            scratch._join_flushes()
            _fsync(scratch.path)
            for sidecar in _sidecars(self.path):
                sidecar.unlink(missing_ok=True)
            os.replace(scratch.path, self.path)
            _fsync(self.path.parent)
        except OSError as exc:  # the old (empty) index stays; the next build starts over
            for path in (scratch.path, *_sidecars(scratch.path)):  # (on a full disk, at once)
                with suppress(OSError):
                    path.unlink(missing_ok=True)
            raise storage_error(exc, self.path) from None
        finally:
            self.opened_file = file_identity(self.path)
            self.conn = _connect(self.path, readonly=False)

    def reopen_if_replaced(self) -> bool:
        """Connect again when another writer renamed a new database over this one since it
        was opened (a first build or ``--rebuild`` installed while this writer waited for the
        lock): what is written through the old connection goes to a deleted file. Called by a
        writer that has just taken the lock, so no rename can come between."""
        now = file_identity(self.path)
        if self.opened_file is None or now is None or now == self.opened_file:
            return False
        self.conn.close()
        self.opened_file = now
        self.conn = _connect(self.path, readonly=False)
        self._check_schema(False)
        return True

    def discard(self) -> None:
        """Close and delete a scratch database (a first build that failed)."""
        self.conn.close()
        with suppress(OSError):
            self._join_flushes()
        for path in (self.path, *_sidecars(self.path)):
            path.unlink(missing_ok=True)

    def reset(self) -> None:
        """Drop every table and start empty (``knoxidx index --rebuild``)."""
        self._create_schema()

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """BEGIN IMMEDIATE ... COMMIT, rolled back on any exception. Inside a transaction the
        caller already opened it adds nothing: the outer one commits (or rolls back) it all."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            try:
                yield
            except BaseException:
                # SQLite rolls back by itself on some errors (a full disk): a second ROLLBACK
                # would raise and hide the error that matters
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")
        finally:
            if self._spool_attached and not self.conn.in_transaction:
                self._spool_attached = False
                with suppress(sqlite3.Error):  # (never hides the error that ended the block)
                    self.conn.execute("DETACH DATABASE spool")

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """Every query of the block sees one committed state (the HTTP API's calls): a read
        transaction, which a writer's commit does not change under it (WAL)."""
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")

    @property
    def broken(self) -> bool:
        """Whether the connection is lost for good (never, for a file)."""
        return False

    @contextmanager
    def bulk_load(self, enabled: bool) -> Iterator[None]:
        """Drop the secondary indexes while a cold build inserts, and build them once after:
        cheaper than maintaining them row by row."""
        if not enabled:
            yield
            return
        for statement in INDEX_STATEMENTS:
            self.conn.execute(f"DROP INDEX IF EXISTS {index_name(statement)}")
        self._bulk = True
        try:
            yield
        finally:
            self._bulk = False
            self._flush_behind()
            # nothing else runs now (the resolver workers are done): the sort may use the cores
            self._create_indexes(INDEX_STATEMENTS, threads=SORT_THREADS)
            self._wait_for_flushes()  # none left running: what follows may fork (chunking)

    def _create_indexes(self, statements: Iterable[str], threads: int = 0) -> None:
        """Build ``statements``' indexes with the page cache cut to SORT_CACHE_KIB: SQLite's
        sorter takes its working memory from the cache size, and sorts runs that fit in the
        CPU's caches, then merges them, ~20 % faster than in one large run (512 KiB is no
        faster, 4 MiB slower). ``threads``: the helper threads SQLite's sorter may start (its
        ``threads`` pragma), for the indexes built when no other process works beside."""
        conn = self.conn
        cache = conn.execute("PRAGMA cache_size").fetchone()[0]
        conn.execute(f"PRAGMA cache_size=-{SORT_CACHE_KIB}")
        conn.execute(f"PRAGMA threads={int(threads)}")
        try:
            for statement in statements:
                create = statement.replace("INDEX", "INDEX IF NOT EXISTS", 1)
                try:
                    conn.execute(create)
                except sqlite3.IntegrityError:
                    # A unique index built after a bulk load, over two rows of one key (two
                    # 63-bit node ids colliding): the row written last stands, as INSERT OR
                    # REPLACE keeps it where the index is in place.
                    table, key = index_table(statement), index_columns(statement)
                    conn.execute(f"DELETE FROM {table} WHERE rowid NOT IN"
                                 f" (SELECT max(rowid) FROM {table} GROUP BY {key})")
                    conn.execute(create)
        finally:
            conn.execute(f"PRAGMA cache_size={int(cache)}")
            conn.execute("PRAGMA threads=0")

    def flush_nodes(self) -> None:
        """Every node row of a cold build is in, and so is every row of the files and modules
        tables: in a bulk load, they are indexed now, while the resolver workers run beside."""
        if self._bulk:
            self._flush_behind()
            self._create_indexes(i for i in INDEX_STATEMENTS
                                 if index_table(i) in ("nodes", "files", "modules"))

    def _flush_behind(self) -> None:
        """Flush a scratch database's pages written so far to disk in a thread while the build
        goes on, so that :meth:`install` (on one core, at the build's end) finds little left to
        flush: 0.11-0.13 -> 0.04-0.05 s on the benchmark corpus. A failed flush is raised by
        the install (a later flush of the file could succeed after the pages it failed to
        write were dropped)."""
        if self._flushes is None:
            return
        failed: list[OSError] = []

        def flush() -> None:
            try:
                _fsync(self.path)
            except OSError as exc:
                failed.append(exc)

        thread = threading.Thread(target=flush, name="knoxidx-flush", daemon=True)
        thread.start()
        self._flushes.append((thread, failed))

    def _wait_for_flushes(self) -> None:
        """Wait for the flushes :meth:`_flush_behind` started (their failures kept)."""
        for thread, _ in self._flushes or ():
            thread.join()

    def _join_flushes(self) -> None:
        """:meth:`_wait_for_flushes`, then forget them; raise the first that failed."""
        self._wait_for_flushes()
        flushes, self._flushes = self._flushes or [], []
        for _, failed in flushes:
            if failed:
                raise failed[0]

    # ---- the store interface's remaining parts (knoxidx.graph.protocol) ----------------

    def write_lock(self) -> WriteLock:
        if self.writes_refused is not None:
            raise self.writes_refused
        _keep_index_dir_out_of_git(self.path.parent)  # an index made before it was written
        return WriteLock(self.path.parent)

    def queries(self) -> GraphQueries:
        # (imported when asked: `knoxidx index` reads none, and its start-up counts)
        from knoxidx.graph.queries import GraphQueries

        return GraphQueries(self)

    def resolution_spool(self) -> ResolutionSpool | None:
        """Where forked resolver children write their rows (see :mod:`knoxidx.graph.spool`)."""
        from knoxidx.graph.spool import ResolutionSpool  # (a parallel update's only)

        return ResolutionSpool(self)
