"""PostgreSQL storage of the graph: :class:`~knoxidx.graph.store.SQLiteStore`'s methods, for one
repository (``repo``) of a database shared by many.

The write side mirrors the SQLite store statement for statement, with every row tagged by
``repo`` and every query restricted to it, so the indexer's incremental rules (and therefore
its results) are the same. The single writer per repository is ``pg_write_lock``'s. An update
is one transaction (MVCC): readers see the old graph or the new one.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knoxidx.core.errors import IndexNotFoundError
from knoxidx.core.facts import FileFacts, load_facts
from knoxidx.core.file_state import FileState
from knoxidx.core.store_url import redact
from knoxidx.graph import pg_schema
from knoxidx.graph.pg_write_lock import PgWriteLock
from knoxidx.graph.sqlite_schema import NODE_COLUMNS

if TYPE_CHECKING:
    from knoxidx.graph.pg_queries import PgGraphQueries

_NODE_INSERT = (
    f"INSERT INTO knoxidx.nodes(repo, {', '.join(NODE_COLUMNS)})"
    f" VALUES ({','.join(['%s'] * (len(NODE_COLUMNS) + 1))})"
)
_NODE_UPSERT = _NODE_INSERT + " ON CONFLICT (repo, id) DO UPDATE SET " + ", ".join(
    f"{c} = excluded.{c}" for c in NODE_COLUMNS if c != "id"
)
# the per-repository tables, in the order a repository's rows are deleted
REPO_TABLES = ("edges", "unresolved", "lookups", "modules", "externals", "nodes", "files",
               "repo_meta", "embed_pending", "embed_withheld", "embed_shelf",
               "embed_shelf_declaration", "chunk_vector", "chunk_name",
               "chunk_declaration", "chunk", "chunk_source", "embed_meta", "history_change",
               "history_commit", "history_meta")


class PgStore:
    """The graph of repository ``repo`` (None: every repository, read-only) in a PostgreSQL
    database."""

    def __init__(self, url: str, conn: Any, repo: str | None, readonly: bool) -> None:
        self.url = url
        self.conn = conn
        self.repo = repo
        self.readonly = readonly
        self.rebuilt_reason: str | None = None
        self._pending_nodes: list[tuple] = []  # a cold build's node rows (insert_nodes)
        self._first_module_rows: list[tuple] = []  # see write_first_module_nodes
        self._reset_pending = False
        # where per-repository caches that are not the index itself (PageRank) are kept
        self.path = _cache_dir(url, repo or "_all") / "index.db"

    @classmethod
    def open(cls, url: str, repo: str | None, *, create: bool = False,
             readonly: bool = False) -> PgStore:
        conn = pg_schema.connect(url, role="reader" if readonly else "writer")
        try:
            pg_schema.check_version(conn, url, may_create=create and not readonly)
            if repo is not None and not create:
                row = conn.execute("SELECT 1 FROM knoxidx.repos WHERE repo = %s",
                                   (repo,)).fetchone()
                if row is None:
                    raise IndexNotFoundError(
                        f"no repository {repo!r} in {redact(url)}; index it with "
                        f"`knoxidx index PATH --store URL --repo {repo}` (known: "
                        f"{', '.join(repos(conn)) or 'none'})"
                    )
            if readonly:
                conn.execute("SET default_transaction_read_only = on")
        except BaseException:
            conn.close()
            raise
        return cls(url, conn, repo, readonly)

    def queries(self) -> PgGraphQueries:
        from knoxidx.graph.pg_queries import PgGraphQueries

        return PgGraphQueries(self)

    def write_lock(self) -> PgWriteLock:
        assert self.repo is not None, "writing needs one repository"
        return PgWriteLock(self.url, self.repo)

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.conn.transaction():
            if self._reset_pending:  # --rebuild: the old rows go in the update's transaction
                delete_repo(self.conn, self._repo)
                self._register()
                self._reset_pending = False
            yield

    def quick_check(self, max_bytes: int | None = None) -> None:
        """Nothing to do: PostgreSQL guards its own pages (WAL, checksums when enabled)."""

    @contextmanager
    def read_snapshot(self) -> Iterator[None]:
        """Every query of the block sees one committed state (the HTTP API's calls)."""
        self.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        try:
            yield
        finally:
            if not self.conn.broken:
                self.conn.execute("ROLLBACK")

    @property
    def broken(self) -> bool:
        """Whether the server went away: the caller reconnects."""
        return bool(self.conn.broken)

    @contextmanager
    def bulk_load(self, enabled: bool) -> Iterator[None]:
        yield  # PostgreSQL maintains its indexes well enough row by row within a transaction

    def reset(self) -> None:
        """Start this repository from nothing (``knoxidx index --rebuild``): until the next
        transaction, which deletes the old rows before writing the new ones, the store
        answers as if empty, so readers never see the repository missing."""
        self._reset_pending = True

    def _register(self) -> None:
        self.conn.execute(
            "INSERT INTO knoxidx.repos(repo) VALUES (%s) ON CONFLICT (repo) DO UPDATE"
            " SET updated_at = now()", (self._repo,),
        )

    @property
    def _repo(self) -> str:
        if self.repo is None:
            raise RuntimeError("this store reads every repository; writing needs one")
        return self.repo

    def _q(self, sql: str, params: tuple = ()) -> Any:
        return self.conn.execute(sql, (self._repo, *params))

    # ---- meta --------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        if self._reset_pending:
            return None
        row = self._q("SELECT value FROM knoxidx.repo_meta WHERE repo=%s AND key=%s",
                      (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self._register()
        self._q("INSERT INTO knoxidx.repo_meta VALUES (%s, %s, %s) ON CONFLICT (repo, key)"
                " DO UPDATE SET value = excluded.value", (key, value))

    def set_root(self, root: Path) -> None:
        """Remember where the repository was indexed from (shown by ``store status``)."""
        self._register()
        self.conn.execute("UPDATE knoxidx.repos SET root = %s WHERE repo = %s",
                          (str(root), self._repo))

    def recorded_root(self) -> Path | None:
        """Where the repository was last indexed from, if that directory is here."""
        if self.repo is None:
            return None
        row = self.conn.execute("SELECT root FROM knoxidx.repos WHERE repo = %s",
                                (self.repo,)).fetchone()
        root = Path(row[0]) if row and row[0] else None
        return root if root is not None and root.is_dir() else None

    # ---- files and facts ---------------------------------------------------------------

    def ok_file_hashes(self) -> dict[str, str]:
        if self._reset_pending:
            return {}
        return dict(self._q("SELECT path, hash FROM knoxidx.files WHERE repo=%s AND status='ok'"))

    def file_states(self) -> dict[str, FileState]:
        if self._reset_pending:
            return {}
        return {
            row[0]: FileState(*row[1:])
            for row in self._q("SELECT path, id, size, mtime_ns, hash, status, iface"
                               " FROM knoxidx.files WHERE repo=%s")
        }

    def upsert_file(
        self, path: str, language: str, size: int, mtime_ns: int, hash_: str, lines: int,
        status: str, message: str, iface: str, blob: bytes | None,
    ) -> int:
        row = self._q(
            "INSERT INTO knoxidx.files(repo, path, language, size, mtime_ns, hash, lines, status,"
            " message, iface, facts) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)"
            " ON CONFLICT (repo, path) DO UPDATE SET language=excluded.language,"
            " size=excluded.size, mtime_ns=excluded.mtime_ns, hash=excluded.hash,"
            " lines=excluded.lines, status=excluded.status, message=excluded.message,"
            " iface=excluded.iface, facts=excluded.facts RETURNING id",
            (path, language, size, mtime_ns, hash_, lines, status, message, iface, blob),
        ).fetchone()
        return int(row[0])

    def touch_file(self, file_id: int, size: int, mtime_ns: int) -> None:
        self.conn.execute("UPDATE knoxidx.files SET size=%s, mtime_ns=%s WHERE id=%s",
                          (size, mtime_ns, file_id))

    def load_facts(self, path: str) -> FileFacts | None:
        row = self._q("SELECT facts FROM knoxidx.files WHERE repo=%s AND path=%s",
                      (path,)).fetchone()
        return load_facts(bytes(row[0])) if row and row[0] is not None else None

    def all_fact_blobs(self) -> Iterator[tuple[str, bytes]]:
        for path, blob in self._q("SELECT path, facts FROM knoxidx.files WHERE repo=%s"
                                  " AND facts IS NOT NULL"):
            yield path, bytes(blob)

    def file_ids(self) -> dict[str, int]:
        return dict(self._q("SELECT path, id FROM knoxidx.files WHERE repo=%s").fetchall())

    def delete_file(self, file_id: int) -> None:
        self.clear_file_graph(file_id)
        for table in ("nodes", "modules"):
            self.conn.execute(f"DELETE FROM knoxidx.{table} WHERE file_id=%s", (file_id,))
        self.conn.execute("DELETE FROM knoxidx.files WHERE id=%s", (file_id,))

    def replace_nodes(self, file_id: int, rows: list[tuple]) -> None:
        self.conn.execute("DELETE FROM knoxidx.nodes WHERE file_id=%s", (file_id,))
        if rows:
            with self.conn.cursor() as cur:
                cur.executemany(_NODE_UPSERT, [(self._repo, *row, file_id) for row in rows])

    def insert_nodes(self, rows: list[tuple]) -> None:
        """A cold build's node rows (file_id last), kept until :meth:`flush_nodes`: one COPY
        for every file costs less than one per file."""
        self._pending_nodes.extend(rows)

    def flush_nodes(self) -> None:
        rows, self._pending_nodes = self._pending_nodes, []
        if not rows:
            return
        unique = {row[0]: row for row in rows}  # the last row of an id wins, as the upsert's
        with self.conn.cursor() as cur, cur.copy(
                f"COPY knoxidx.nodes(repo, {', '.join(NODE_COLUMNS)}) FROM STDIN") as copy:
            for row in unique.values():
                copy.write_row((self._repo, *row))

    def replace_modules(
        self, file_id: int, rows: Iterable[tuple[str, str]], fresh: bool = False
    ) -> None:
        if not fresh:
            self.conn.execute("DELETE FROM knoxidx.modules WHERE file_id=%s", (file_id,))
        values = [(self._repo, f, k, file_id, rank) for rank, (f, k) in enumerate(rows)]
        if values:
            with self.conn.cursor() as cur:
                cur.executemany("INSERT INTO knoxidx.modules VALUES (%s,%s,%s,%s,%s)", values)

    def module_keys_of(self, file_id: int) -> list[tuple[str, str]]:
        return [tuple(r) for r in self.conn.execute(
            "SELECT family, key FROM knoxidx.modules WHERE file_id=%s ORDER BY rank", (file_id,))]

    # ---- resolution results ------------------------------------------------------------

    def import_targets(self, file_id: int) -> set[int]:
        return {r[0] for r in self.conn.execute(
            "SELECT target FROM knoxidx.edges WHERE file_id=%s AND type='Imports'", (file_id,))}

    def clear_file_graph(self, file_id: int) -> None:
        for table in ("edges", "unresolved", "lookups"):
            self.conn.execute(f"DELETE FROM knoxidx.{table} WHERE file_id=%s", (file_id,))

    def insert_resolution(
        self, file_id: int, edges: Sequence[tuple], unresolved: Sequence[tuple],
        keys: Iterable[str], externals: dict[int, tuple[str, str]],
    ) -> None:
        repo = self._repo
        with self.conn.cursor() as cur:
            copies = (
                ("edges(repo, source, target, type, confidence, line, file_id)",
                 [(repo, e[0], e[1], e[2], e[3], e[4], file_id) for e in edges]),
                ("unresolved(repo, file_id, source, kind, name, line, reason, candidates)",
                 [(repo, file_id, *u) for u in unresolved]),
                ("lookups(repo, file_id, key)", [(repo, file_id, k) for k in keys]),
            )
            for target, rows in copies:
                if rows:
                    with cur.copy(f"COPY knoxidx.{target} FROM STDIN") as copy:
                        for row in rows:
                            copy.write_row(row)
            if externals:
                cur.executemany(
                    "INSERT INTO knoxidx.externals VALUES (%s,%s,%s,%s) ON CONFLICT DO NOTHING",
                    [(repo, i, f, n) for i, (f, n) in externals.items()],
                )

    def resolution_spool(self) -> None:
        """None: forked resolvers send their rows to the parent, which copies them in (a
        spool is a SQLite file beside a SQLite index)."""
        return None

    def dependents(self, keys: Iterable[str]) -> set[str]:
        keys = list(keys)
        if not keys:
            return set()
        return {r[0] for r in self._q(
            "SELECT DISTINCT f.path FROM knoxidx.lookups l JOIN knoxidx.files f"
            " ON f.id = l.file_id WHERE l.repo=%s AND l.key = ANY(%s)", (keys,))}

    # ---- what resolution reads ---------------------------------------------------------

    def module_paths(self, family: str, key: str) -> tuple[str, ...]:
        return tuple(r[0] for r in self._q(
            "SELECT f.path FROM knoxidx.modules m JOIN knoxidx.files f ON f.id = m.file_id"
            " WHERE m.repo=%s AND m.family=%s AND m.key=%s ORDER BY f.path COLLATE \"C\"",
            (family, key)))

    def defs_named(self, family: str, name: str) -> list[tuple[str, int, str, bool]]:
        return [(r[0], r[1], r[2], bool(r[3])) for r in self._q(
            "SELECT f.path, n.def_index, n.kind, n.member FROM knoxidx.nodes n JOIN knoxidx.files"
            " f ON f.id = n.file_id WHERE n.repo=%s AND n.name=%s AND n.family=%s AND"
            " n.def_index IS NOT NULL ORDER BY f.path COLLATE \"C\", n.def_index",
            (name, family))]

    def methods_of(self, family: str, owner: str) -> list[tuple[str, int, str]]:
        return [tuple(r) for r in self._q(
            "SELECT f.path, n.def_index, n.name FROM knoxidx.nodes n JOIN knoxidx.files f"
            " ON f.id = n.file_id WHERE n.repo=%s AND n.owner=%s AND n.owner != '' AND"
            " n.family=%s ORDER BY f.path COLLATE \"C\", n.def_index", (owner, family))]

    # ---- the module layer --------------------------------------------------------------

    def rebuild_module_layer(self, module_rows: list[tuple], contains_rows: list[tuple]) -> None:
        repo = self._repo
        conn = self.conn
        conn.execute("DELETE FROM knoxidx.nodes WHERE repo=%s AND file_id IS NULL", (repo,))
        conn.execute("DELETE FROM knoxidx.edges WHERE repo=%s AND file_id IS NULL", (repo,))
        with conn.cursor() as cur:
            if module_rows:
                cur.executemany(_NODE_INSERT + " ON CONFLICT DO NOTHING",
                                [(repo, *row) for row in module_rows])
            cur.execute(
                "INSERT INTO knoxidx.nodes(repo, id, kind, name, qualified_name, file_id,"
                " language, family, signature, doc, exported, owner) SELECT x.repo, x.id,"
                " 'Module', x.name, x.name, NULL, NULL, x.family, '', '', 1, ''"
                " FROM knoxidx.externals x WHERE x.repo=%s AND x.id IN (SELECT target FROM"
                " knoxidx.edges WHERE repo=%s AND type='Imports') ON CONFLICT DO NOTHING",
                (repo, repo),
            )
            cur.execute(
                "DELETE FROM knoxidx.externals x WHERE x.repo=%s AND NOT EXISTS (SELECT 1 FROM"
                " knoxidx.nodes n WHERE n.repo=x.repo AND n.id=x.id)", (repo,),
            )
            if contains_rows:
                cur.executemany(
                    "INSERT INTO knoxidx.edges(repo, source, target, type, confidence, file_id,"
                    " line) VALUES (%s,%s,%s,'Contains','exact',NULL,NULL)",
                    [(repo, s, t) for s, t in contains_rows],
                )
            cur.execute(
                "INSERT INTO knoxidx.edges(repo, source, target, type, confidence, file_id, line)"
                " SELECT DISTINCT %s, ms.source, COALESCE(mt.source, e.target), 'DependsOn',"
                " 'exact', NULL::bigint, NULL::integer FROM knoxidx.edges e"
                " JOIN knoxidx.edges ms ON ms.repo=e.repo AND ms.type='Contains'"
                " AND ms.file_id IS NULL AND ms.target=e.source"
                " LEFT JOIN knoxidx.edges mt ON mt.repo=e.repo AND mt.type='Contains'"
                " AND mt.file_id IS NULL AND mt.target=e.target"
                " WHERE e.repo=%s AND e.type='Imports' AND COALESCE(mt.source, e.target)"
                " != ms.source", (repo, repo),
            )

    def write_first_module_nodes(self, module_rows: list[tuple]) -> None:
        self._first_module_rows = module_rows  # written by write_first_module_layer

    def write_first_module_layer(
        self, contains_rows: list[tuple], depends_rows: list[tuple[int, int]],
        imported: set[int],
    ) -> None:
        """A first build's module layer: PostgreSQL keeps its edge indexes while a build
        inserts, so the general rebuild's SQL serves (DependsOn and ``imported`` are what it
        computes), with the module nodes given to :meth:`write_first_module_nodes`."""
        rows, self._first_module_rows = self._first_module_rows, []
        self.rebuild_module_layer(rows, contains_rows)

    def primary_modules(self) -> list[tuple[str, str, str, str]]:
        return [tuple(r) for r in self._q(
            "SELECT f.path, f.language, m.family, m.key FROM knoxidx.modules m"
            " JOIN knoxidx.files f ON f.id = m.file_id WHERE m.repo=%s AND m.rank = 0"
            " ORDER BY f.path COLLATE \"C\"")]

    def all_modules(self) -> list[tuple[str, str, str]]:
        return [tuple(r) for r in self._q(
            "SELECT m.family, m.key, f.path FROM knoxidx.modules m JOIN knoxidx.files f"
            " ON f.id = m.file_id WHERE m.repo=%s")]

    def all_named_defs(self) -> list[tuple[str, str, str, str, int, str, int]]:
        return [tuple(r) for r in self._q(
            "SELECT n.family, n.name, n.owner, f.path, n.def_index, n.kind, n.member"
            " FROM knoxidx.nodes n JOIN knoxidx.files f ON f.id = n.file_id WHERE n.repo=%s"
            " AND n.def_index IS NOT NULL ORDER BY f.path COLLATE \"C\", n.def_index")]


def repos(conn: Any) -> list[str]:
    return [r[0] for r in conn.execute("SELECT repo FROM knoxidx.repos ORDER BY repo")]


def delete_repo(conn: Any, repo: str) -> None:
    for table in REPO_TABLES:
        conn.execute(f"DELETE FROM knoxidx.{table} WHERE repo = %s", (repo,))
    conn.execute("DELETE FROM knoxidx.repos WHERE repo = %s", (repo,))


def _cache_dir(url: str, repo: str) -> Path:
    import os

    import xxhash

    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "knoxidx" / "pg" / xxhash.xxh64_hexdigest(redact(url).encode()) / repo
