"""SQLite storage of the graph. All SQL of the graph lives here and in :mod:`.queries` (reads).

One database per repository (``<repo>/.knoxidx/index.db``), WAL mode so readers work while the
single writer writes; each update is one transaction, so a reader never sees half of one and a
killed writer leaves the previous state. Structural edges (Defines, Contains) are not stored:
they are views over ``nodes.file_id`` / ``nodes.parent_id``.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from knoxidx.errors import CorruptIndexError, IndexNotFoundError
from knoxidx.graph.dbfile import REBUILD_FIX, check_database_file, storage_error
from knoxidx.graph.write_lock import WriteLock
from knoxidx.indexer.facts import FileFacts, load_facts

if TYPE_CHECKING:
    from knoxidx.graph.queries import GraphQueries

SCHEMA_VERSION = 3  # 3: nodes_name_nocase (a name-prefix LIKE seeks) and files_ok (covering)
INDEX_DIR = ".knoxidx"
SCRATCH_SUFFIX = ".new"  # a first build in progress (see SQLiteStore.open_scratch)
INIT_SUFFIX = ".init"  # a new, empty index being made (see _create_file)
DB_NAME = "index.db"

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
  id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, language TEXT, size INTEGER,
  mtime_ns INTEGER, hash TEXT, lines INTEGER, status TEXT NOT NULL, message TEXT,
  iface TEXT, facts BLOB);
CREATE TABLE nodes(
  id INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, qualified_name TEXT NOT NULL,
  file_id INTEGER, def_index INTEGER, parent_id INTEGER, start_line INTEGER, end_line INTEGER,
  start_byte INTEGER, end_byte INTEGER, language TEXT, family TEXT, signature TEXT, doc TEXT,
  exported INTEGER, owner TEXT, member INTEGER);
CREATE TABLE edges(
  source INTEGER NOT NULL, target INTEGER NOT NULL, type TEXT NOT NULL,
  confidence TEXT NOT NULL, file_id INTEGER, line INTEGER);
CREATE TABLE unresolved(
  file_id INTEGER NOT NULL, source INTEGER, kind TEXT, name TEXT, line INTEGER, reason TEXT,
  candidates INTEGER);
CREATE TABLE lookups(file_id INTEGER NOT NULL, key TEXT NOT NULL);
CREATE TABLE modules(family TEXT NOT NULL, key TEXT NOT NULL, file_id INTEGER NOT NULL,
  rank INTEGER NOT NULL);
CREATE TABLE externals(id INTEGER PRIMARY KEY, family TEXT NOT NULL, name TEXT NOT NULL);
CREATE INDEX nodes_name ON nodes(name);
CREATE INDEX nodes_name_nocase ON nodes(name COLLATE NOCASE);
CREATE INDEX files_ok ON files(status, path, hash);
CREATE INDEX nodes_qualified ON nodes(qualified_name);
CREATE INDEX nodes_file ON nodes(file_id);
CREATE INDEX nodes_owner ON nodes(owner) WHERE owner != '';
CREATE INDEX edges_target ON edges(target, type);
CREATE INDEX edges_source ON edges(source, type);
CREATE INDEX edges_file ON edges(file_id);
CREATE INDEX unresolved_file ON unresolved(file_id);
CREATE INDEX lookups_key ON lookups(key);
CREATE INDEX lookups_file ON lookups(file_id);
CREATE INDEX modules_key ON modules(family, key);
CREATE INDEX modules_file ON modules(file_id);
"""

_INDEX_STATEMENTS = [s.strip() for s in SCHEMA.split(";") if s.strip().startswith("CREATE INDEX")]

# Column order of node rows as the indexer produces them: file_id comes last, appended by the
# writer once the file row exists.
NODE_COLUMNS = (
    "id", "kind", "name", "qualified_name", "def_index", "parent_id", "start_line",
    "end_line", "start_byte", "end_byte", "language", "family", "signature", "doc", "exported",
    "owner", "member", "file_id",
)
_NODE_INSERT = (
    f"INSERT OR REPLACE INTO nodes({', '.join(NODE_COLUMNS)})"
    f" VALUES ({','.join('?' * len(NODE_COLUMNS))})"
)


class FileState(NamedTuple):
    id: int
    size: int
    mtime_ns: int
    hash: str
    status: str
    iface: str


def find_index_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding a ``.knoxidx`` index (as git does)."""
    current = start.resolve()
    for candidate in (current, *current.parents):
        if (candidate / INDEX_DIR / DB_NAME).exists():
            return candidate
    return None


def _read_only_directory(exc: BaseException) -> bool:
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(("SQLITE_READONLY_DIRECTORY", "SQLITE_READONLY_CANTINIT",
                            "SQLITE_CANTOPEN")) or (name == "SQLITE_READONLY")


def _connect(db_path: Path, readonly: bool) -> sqlite3.Connection:
    if readonly:
        conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, timeout=30)
    else:
        conn = sqlite3.connect(db_path, timeout=30, isolation_level=None)
    conn.execute("PRAGMA busy_timeout=30000")
    if not readonly:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA cache_size=-16384")  # 16 MiB: forked workers inherit it
    return conn


def _create_file(db_path: Path) -> None:
    """A new index appears whole, schema and WAL mode included: made beside its name, then
    linked into place (or left, if another process made one meanwhile). Made in place, a kill
    while SQLite switched the new file to WAL left a hot rollback journal, which no read-only
    connection may replay: readers failed with "attempt to write a readonly database"."""
    for stale in db_path.parent.glob(db_path.name + ".*" + INIT_SUFFIX + "*"):
        pid = stale.name[len(db_path.name) + 1 :].split(".", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):  # left by a process killed while creating
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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sidecars(db_path: Path) -> tuple[Path, ...]:
    return tuple(db_path.with_name(db_path.name + s) for s in ("-wal", "-shm", "-journal"))


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class SQLiteStore:
    def __init__(self, db_path: Path, conn: sqlite3.Connection) -> None:
        self.path = db_path
        self.conn = conn
        self.rebuilt_reason: str | None = None
        self._bulk = False  # inside bulk_load(enabled=True): secondary indexes are dropped

    # ---- opening -----------------------------------------------------------------------

    @classmethod
    def open(cls, root: Path, *, create: bool = False, readonly: bool = False) -> SQLiteStore:
        db_path = root / INDEX_DIR / DB_NAME
        if not db_path.exists() and not create:
            raise IndexNotFoundError(f"no knoxidx index at {root}; run `knoxidx index {root}` first")
        return cls.open_at(db_path, create=create, readonly=readonly)

    @classmethod
    def open_at(cls, db_path: Path, *, create: bool = False, readonly: bool = False) -> SQLiteStore:
        if not db_path.exists():
            if not create:
                raise IndexNotFoundError(f"no knoxidx index at {db_path}")
            try:
                db_path.parent.mkdir(parents=True, exist_ok=True)
                _create_file(db_path)
            except (sqlite3.Error, OSError) as exc:
                raise storage_error(exc, db_path) from None
        else:
            check_database_file(db_path)
        try:
            conn = _connect(db_path, readonly)
            store = cls(db_path, conn)
            store._check_schema(create and not readonly)
        except (sqlite3.Error, OSError) as exc:
            if not create and _read_only_directory(exc):
                return cls._open_immutable(db_path, exc)
            raise storage_error(exc, db_path) from None
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
        conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=OFF")
        conn.execute("PRAGMA synchronous=OFF")  # flushed once, by install()
        conn.execute("PRAGMA locking_mode=EXCLUSIVE")
        conn.execute("PRAGMA cache_size=-16384")
        scratch = SQLiteStore(path, conn)
        scratch._create_schema()
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
            _fsync(scratch.path)
            for sidecar in _sidecars(self.path):
                sidecar.unlink(missing_ok=True)
            os.replace(scratch.path, self.path)
            _fsync(self.path.parent)
        except OSError as exc:  # the old (empty) index stays; the next build starts over
            raise storage_error(exc, self.path) from None
        finally:
            self.conn = _connect(self.path, readonly=False)

    def discard(self) -> None:
        """Close and delete a scratch database (a first build that failed)."""
        self.conn.close()
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
            yield
        except BaseException:
            # SQLite rolls back by itself on some errors (a full disk): a second ROLLBACK
            # would raise and hide the error that matters
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @contextmanager
    def bulk_load(self, enabled: bool) -> Iterator[None]:
        """Drop the secondary indexes while a cold build inserts, and build them once after:
        cheaper than maintaining them row by row."""
        if not enabled:
            yield
            return
        for statement in _INDEX_STATEMENTS:
            self.conn.execute(f"DROP INDEX IF EXISTS {statement.split()[2]}")
        self._bulk = True
        try:
            yield
        finally:
            self._bulk = False
            self._create_indexes(_INDEX_STATEMENTS)

    def _create_indexes(self, statements: Iterable[str]) -> None:
        for statement in statements:
            self.conn.execute(statement.replace("CREATE INDEX", "CREATE INDEX IF NOT EXISTS", 1))

    # ---- meta --------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # ---- files and facts ---------------------------------------------------------------

    def ok_file_hashes(self) -> dict[str, str]:
        """Path -> content hash of every indexed file: what :meth:`file_states` tells of them,
        without a record per file (a watcher batch asks twice; 5k files cost 30 ms that way)."""
        return dict(self.conn.execute("SELECT path, hash FROM files WHERE status='ok'"))

    def file_states(self) -> dict[str, FileState]:
        # tuple.__new__ skips the named tuple's Python __new__: a third of this read's time
        # (every update makes it; 5,400 rows on the whole corpus).
        new = tuple.__new__
        return {
            row[0]: new(FileState, row[1:])
            for row in self.conn.execute(
                "SELECT path, id, size, mtime_ns, hash, status, iface FROM files"
            )
        }

    def file_states_of(self, paths: Iterable[str]) -> dict[str, FileState]:
        """:meth:`file_states` for some paths only (what one update wrote)."""
        paths = list(paths)
        out: dict[str, FileState] = {}
        for i in range(0, len(paths), 500):  # under SQLite's limit on bound variables
            part = paths[i : i + 500]
            out.update(
                (row[0], FileState(*row[1:])) for row in self.conn.execute(
                    "SELECT path, id, size, mtime_ns, hash, status, iface FROM files"
                    f" WHERE path IN ({','.join('?' * len(part))})", part)
            )
        return out

    def data_version(self) -> int:
        """Changes whenever ANOTHER connection commits to the database (never for this
        connection's own commits): what lets a writer trust what it remembers of the tables
        between its updates (see ``knoxidx.indexer.session``)."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def upsert_file(
        self, path: str, language: str, size: int, mtime_ns: int, hash_: str, lines: int,
        status: str, message: str, iface: str, blob: bytes | None,
    ) -> int:
        """``blob`` is the file's FileFacts as :func:`knoxidx.indexer.facts.dump_facts` wrote it."""
        row = self.conn.execute(
            "INSERT INTO files(path, language, size, mtime_ns, hash, lines, status, message, iface,"
            " facts) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT(path) DO UPDATE SET"
            " language=excluded.language, size=excluded.size, mtime_ns=excluded.mtime_ns,"
            " hash=excluded.hash, lines=excluded.lines, status=excluded.status,"
            " message=excluded.message, iface=excluded.iface, facts=excluded.facts RETURNING id",
            (path, language, size, mtime_ns, hash_, lines, status, message, iface, blob),
        ).fetchone()
        return int(row[0])

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None:
        self.conn.execute(
            "UPDATE files SET size=?, mtime_ns=? WHERE id=?", (size, mtime_ns, file_id)
        )

    def load_facts(self, path: str) -> FileFacts | None:
        row = self.conn.execute("SELECT facts FROM files WHERE path=?", (path,)).fetchone()
        return load_facts(row[0]) if row and row[0] is not None else None

    def all_fact_blobs(self) -> Iterator[tuple[str, bytes]]:
        yield from self.conn.execute("SELECT path, facts FROM files WHERE facts IS NOT NULL")

    def file_ids(self) -> dict[str, int]:
        return {p: i for p, i in self.conn.execute("SELECT path, id FROM files")}

    def delete_file(self, file_id: int) -> None:
        self.clear_file_graph(file_id)
        self.conn.execute("DELETE FROM nodes WHERE file_id=?", (file_id,))
        self.conn.execute("DELETE FROM modules WHERE file_id=?", (file_id,))
        self.conn.execute("DELETE FROM files WHERE id=?", (file_id,))

    def replace_nodes(self, file_id: int, rows: list[tuple]) -> None:
        """Rows in NODE_COLUMNS order without file_id (a cold build uses :meth:`insert_nodes`)."""
        self.conn.execute("DELETE FROM nodes WHERE file_id=?", (file_id,))
        suffix = (file_id,)
        self.conn.executemany(_NODE_INSERT, [row + suffix for row in rows])

    def insert_nodes(self, rows: list[tuple]) -> None:
        """A cold build's node rows (NODE_COLUMNS order, file_id last), file by file as they
        are read: no delete first, as :meth:`replace_nodes` does. Ids are hashes, so rows land
        on random pages of the table: ~25 % more CPU than one insert of every row sorted by id
        (1.34 against 1.07 s on the benchmark corpus), but spent while the parse workers run,
        and no process holds every row (see :meth:`flush_nodes`)."""
        self.conn.executemany(_NODE_INSERT, rows)

    def flush_nodes(self) -> None:
        """Every node row of a cold build is in: in a bulk load, the table is indexed now, while
        the resolver workers run beside."""
        if self._bulk:
            self._create_indexes(i for i in _INDEX_STATEMENTS if " ON nodes(" in i)

    def replace_modules(
        self, file_id: int, rows: Iterable[tuple[str, str]], fresh: bool = False
    ) -> None:
        """The keys a file is importable under, most specific first (rank 0 names its module)."""
        if not fresh:
            self.conn.execute("DELETE FROM modules WHERE file_id=?", (file_id,))
        self.conn.executemany(
            "INSERT INTO modules VALUES (?,?,?,?)",
            [(f, k, file_id, rank) for rank, (f, k) in enumerate(rows)],
        )

    def module_keys_of(self, file_id: int) -> list[tuple[str, str]]:
        return list(self.conn.execute(
            "SELECT family, key FROM modules WHERE file_id=? ORDER BY rank", (file_id,)
        ))

    # ---- resolution results ------------------------------------------------------------

    def import_targets(self, file_id: int) -> set[int]:
        return {row[0] for row in self.conn.execute(
            "SELECT target FROM edges WHERE file_id=? AND type='Imports'", (file_id,))}

    def clear_file_graph(self, file_id: int) -> None:
        self.conn.execute("DELETE FROM edges WHERE file_id=?", (file_id,))
        self.conn.execute("DELETE FROM unresolved WHERE file_id=?", (file_id,))
        self.conn.execute("DELETE FROM lookups WHERE file_id=?", (file_id,))

    def insert_resolution(
        self, file_id: int, edges: list[tuple], unresolved: list[tuple], keys: Iterable[str],
        externals: dict[int, tuple[str, str]],
    ) -> None:
        conn = self.conn
        conn.executemany(
            "INSERT INTO edges(source, target, type, confidence, line, file_id)"
            " VALUES (?,?,?,?,?,?)",
            [(e[0], e[1], e[2], e[3], e[4], file_id) for e in edges],
        )
        conn.executemany(
            "INSERT INTO unresolved(file_id, source, kind, name, line, reason, candidates)"
            " VALUES (?,?,?,?,?,?,?)",
            [(file_id, *u) for u in unresolved],
        )
        conn.executemany("INSERT INTO lookups VALUES (?,?)", [(file_id, k) for k in keys])
        if externals:
            conn.executemany(
                "INSERT OR IGNORE INTO externals VALUES (?,?,?)",
                [(i, f, n) for i, (f, n) in externals.items()],
            )

    def dependents(self, keys: Iterable[str]) -> set[str]:
        """Paths of files whose last resolution consulted any of ``keys``."""
        keys = list(keys)
        out: set[str] = set()
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            out.update(
                r[0] for r in self.conn.execute(
                    "SELECT DISTINCT f.path FROM lookups l JOIN files f ON f.id = l.file_id"
                    f" WHERE l.key IN ({','.join('?' * len(chunk))})",
                    chunk,
                )
            )
        return out

    # ---- what resolution reads ---------------------------------------------------------

    def module_paths(self, family: str, key: str) -> tuple[str, ...]:
        return tuple(r[0] for r in self.conn.execute(
            "SELECT f.path FROM modules m JOIN files f ON f.id = m.file_id"
            " WHERE m.family=? AND m.key=? ORDER BY f.path",
            (family, key),
        ))

    def defs_named(self, family: str, name: str) -> list[tuple[str, int, str, bool]]:
        """(path, def_index, kind, is_member) of every definition named ``name``."""
        return [(r[0], r[1], r[2], bool(r[3])) for r in self.conn.execute(
            "SELECT f.path, n.def_index, n.kind, n.member FROM nodes n JOIN files f"
            " ON f.id = n.file_id WHERE n.name=? AND n.family=? AND n.def_index IS NOT NULL"
            " ORDER BY f.path, n.def_index",
            (name, family),
        )]

    def methods_of(self, family: str, owner: str) -> list[tuple[str, int, str]]:
        """(path, def_index, name) of the methods declared outside type ``owner``."""
        return list(self.conn.execute(
            "SELECT f.path, n.def_index, n.name FROM nodes n JOIN files f ON f.id = n.file_id"
            " WHERE n.owner=? AND n.owner != '' AND n.family=? ORDER BY f.path, n.def_index",
            (owner, family),
        ))

    # ---- the module layer (derived, rebuilt after each update) -------------------------

    def rebuild_module_layer(self, module_rows: list[tuple], contains_rows: list[tuple]) -> None:
        conn = self.conn
        conn.execute("DELETE FROM nodes WHERE file_id IS NULL")
        conn.execute("DELETE FROM edges WHERE file_id IS NULL")
        conn.executemany(_NODE_INSERT.replace("OR REPLACE", "OR IGNORE"), module_rows)
        # external modules that something still imports
        conn.execute(
            "INSERT OR IGNORE INTO nodes(id, kind, name, qualified_name, file_id, language, family,"
            " signature, doc, exported, owner) SELECT x.id, 'Module', x.name, x.name, NULL, NULL,"
            " x.family, '', '', 1, '' FROM externals x"
            " WHERE x.id IN (SELECT target FROM edges WHERE type='Imports')"
        )
        conn.execute("DELETE FROM externals WHERE id NOT IN (SELECT id FROM nodes)")
        conn.executemany(
            "INSERT INTO edges(source, target, type, confidence, file_id, line)"
            " VALUES (?,?,'Contains','exact',NULL,NULL)",
            contains_rows,
        )
        # DependsOn: module -> module, aggregated from file imports
        conn.execute(
            "INSERT INTO edges(source, target, type, confidence, file_id, line)"
            " SELECT DISTINCT ms.source, COALESCE(mt.source, e.target), 'DependsOn', 'exact',"
            " NULL, NULL FROM edges e"
            " JOIN edges ms ON ms.type='Contains' AND ms.file_id IS NULL AND ms.target=e.source"
            " LEFT JOIN edges mt ON mt.type='Contains' AND mt.file_id IS NULL AND mt.target=e.target"
            " WHERE e.type='Imports' AND COALESCE(mt.source, e.target) != ms.source"
        )

    def primary_modules(self) -> list[tuple[str, str, str, str]]:
        """(path, language, family, key): the module each file belongs to."""
        return list(self.conn.execute(
            "SELECT f.path, f.language, m.family, m.key FROM modules m"
            " JOIN files f ON f.id = m.file_id WHERE m.rank = 0 ORDER BY f.path"
        ))

    def all_modules(self) -> list[tuple[str, str, str]]:
        return list(self.conn.execute(
            "SELECT m.family, m.key, f.path FROM modules m JOIN files f ON f.id = m.file_id"
        ))

    def all_named_defs(self) -> list[tuple[str, str, str, str, int, str, int]]:
        """(family, name, owner, path, def_index, kind, member) of every definition, by path
        and index (``reader.named_definitions`` makes the same tuples from node rows)."""
        return list(self.conn.execute(
            "SELECT n.family, n.name, n.owner, f.path, n.def_index, n.kind, n.member FROM nodes n"
            " JOIN files f ON f.id = n.file_id WHERE n.def_index IS NOT NULL"
            " ORDER BY f.path, n.def_index"
        ))

    # ---- the store interface's remaining parts (knoxidx.graph.protocol) ----------------

    def write_lock(self) -> WriteLock:
        return WriteLock(self.path.parent)

    def queries(self) -> GraphQueries:
        from knoxidx.graph.queries import GraphQueries

        return GraphQueries(self)
