"""The graph's rows in SQLite: files and their facts, nodes, the keys a file is importable
under, what resolution wrote and what it reads, and the derived module layer.
:class:`GraphRows` is the part of :class:`~knoxidx.graph.store.SQLiteStore` that reads and
writes them; the store adds the connection's life (opening, checking, bulk loads, installing a
first build)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from knoxidx.core.facts import FileFacts, load_facts
from knoxidx.core.file_state import FileState
from knoxidx.graph.sqlite_schema import MODULE_LAYER_ROWS, NODE_INSERT


def _null(value: None) -> None:
    return value


# None binds as NULL either way; without an adapter registered for it, sqlite3 first looks
# for one by two attribute lookups that fail (~3.3 K instructions a value in all), and node
# rows hold several None columns each (java's sample: 16 K of them)
sqlite3.register_adapter(type(None), _null)


class GraphRows:
    conn: sqlite3.Connection
    path: Path
    _spool_attached = False

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
        between its updates (see ``knoxidx.update.session``)."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def upsert_file(
        self, path: str, language: str, size: int, mtime_ns: int, hash_: str, lines: int,
        status: str, message: str, iface: str, blob: bytes | None,
    ) -> int:
        """``blob`` is the file's FileFacts as :func:`knoxidx.core.facts.dump_facts` wrote it."""
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
        self.conn.executemany(NODE_INSERT, [row + suffix for row in rows])

    def insert_nodes(self, rows: list[tuple]) -> None:
        """A cold build's node rows (NODE_COLUMNS order, file_id last), file by file as they
        are read: no delete first, as :meth:`replace_nodes` does. In a bulk load the table has
        no index yet, so they are appended (see ``sqlite_schema``: nodes are not keyed by
        their hashed ids); :meth:`flush_nodes` indexes them."""
        self.conn.executemany(NODE_INSERT, rows)

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
        run = self._rows_of(file_id)
        if run is None:
            return set()
        return {row[0] for row in self.conn.execute(
            "SELECT target FROM edges WHERE rowid BETWEEN ? AND ? AND type='Imports'", run[:2])}

    def clear_file_graph(self, file_id: int) -> None:
        """A file's edges, unresolved references and lookup keys, by their runs of rowids
        (see ``MODULE_LAYER_ROWS``)."""
        run = self._rows_of(file_id)
        if run is None:
            return
        conn = self.conn
        conn.execute("DELETE FROM edges WHERE rowid BETWEEN ? AND ?", run[0:2])
        conn.execute("DELETE FROM unresolved WHERE rowid BETWEEN ? AND ?", run[2:4])
        conn.execute("DELETE FROM lookups WHERE rowid BETWEEN ? AND ?", run[4:6])
        conn.execute("DELETE FROM file_rows WHERE file_id=?", (file_id,))

    def _rows_of(self, file_id: int) -> tuple[int, int, int, int, int, int] | None:
        return self.conn.execute(  # type: ignore[no-any-return]
            "SELECT edges_lo, edges_hi, unresolved_lo, unresolved_hi, lookups_lo, lookups_hi"
            " FROM file_rows WHERE file_id=?", (file_id,)).fetchone()

    def _next_rowids(self) -> tuple[int, int, int]:
        """The rowid the next row of the edges, unresolved and lookups tables gets: SQLite gives
        a row one more than the table's largest (1 in an empty table) when no rowid is given."""
        row = self.conn.execute(
            "SELECT (SELECT max(rowid) FROM edges), (SELECT max(rowid) FROM unresolved),"
            " (SELECT max(rowid) FROM lookups)").fetchone()
        return (row[0] or 0) + 1, (row[1] or 0) + 1, (row[2] or 0) + 1

    def insert_resolution(
        self, file_id: int, edges: Sequence[tuple], unresolved: Sequence[tuple],
        keys: Iterable[str], externals: dict[int, tuple[str, str]],
    ) -> None:
        """A file's resolution, after :meth:`clear_file_graph`: its rows in each table one run
        of rowids, recorded in ``file_rows``."""
        conn = self.conn
        edge_rows = [(e[0], e[1], e[2], e[3], e[4], file_id) for e in edges]
        unresolved_rows = [(file_id, *u) for u in unresolved]
        key_list = list(keys)
        edges_lo, unresolved_lo, lookups_lo = self._next_rowids()
        conn.executemany(
            "INSERT INTO edges(source, target, type, confidence, line, file_id)"
            " VALUES (?,?,?,?,?,?)", edge_rows)
        conn.executemany(
            "INSERT INTO unresolved(file_id, source, kind, name, line, reason, candidates)"
            " VALUES (?,?,?,?,?,?,?)", unresolved_rows)
        # one statement for the file's keys (a JSON array, in order), not one run per key: a
        # row of two columns cost more to bind and step through than to insert
        conn.execute("INSERT INTO lookups SELECT ?, value FROM json_each(?)",
                     (file_id, json.dumps(key_list)))
        conn.execute("INSERT INTO file_rows VALUES (?,?,?,?,?,?,?)", (
            file_id, *_run(edges_lo, len(edge_rows)), *_run(unresolved_lo, len(unresolved_rows)),
            *_run(lookups_lo, len(key_list))))
        if externals:
            conn.executemany(
                "INSERT OR IGNORE INTO externals VALUES (?,?,?)",
                [(i, f, n) for i, (f, n) in externals.items()],
            )

    def insert_spooled(self, spool_path: Path) -> None:
        """Copy the rows resolver children wrote into the spool at ``spool_path`` after this
        store's own: each table's rows get the rowids that follow its last, in the spool's
        order, so each file's runs in ``file_rows`` move by that table's offset (the spool's
        rowids start at 1, without gaps). The spool stays attached until the update's
        transaction ends (SQLite detaches no database a transaction has read)."""
        conn = self.conn
        conn.execute("ATTACH DATABASE ? AS spool", (str(spool_path),))
        self._spool_attached = True
        offsets = [first - 1 for first in self._next_rowids()]
        for table in ("edges", "unresolved", "lookups"):
            conn.execute(f"INSERT INTO main.{table} SELECT * FROM spool.{table}")
        conn.execute("INSERT OR IGNORE INTO main.externals SELECT * FROM spool.externals")
        conn.executemany("INSERT INTO file_rows VALUES (?,?,?,?,?,?,?)", [
            (file_id, *_shifted(runs[0:2], offsets[0]), *_shifted(runs[2:4], offsets[1]),
             *_shifted(runs[4:6], offsets[2]))
            for file_id, *runs in conn.execute("SELECT * FROM spool.file_rows")])

    def index_file_rows(self) -> None:
        """``file_rows`` made anew from the edges, unresolved and lookups tables, where rows were
        written otherwise than by :meth:`insert_resolution` (copied from another store): each
        file's rows must be one run of rowids in each table (written in file order)."""
        conn = self.conn
        runs: dict[int, list[int]] = {}
        for n, table in enumerate(("edges", "unresolved", "lookups")):
            for file_id, lo, hi, count in conn.execute(
                    f"SELECT coalesce(file_id, {MODULE_LAYER_ROWS}), min(rowid), max(rowid),"
                    f" count(*) FROM {table} GROUP BY 1"):
                if hi - lo + 1 != count:
                    raise ValueError(f"the {table} rows of file {file_id} are not one run")
                runs.setdefault(file_id, [*_NO_ROWS, *_NO_ROWS, *_NO_ROWS])[2 * n : 2 * n + 2] = [
                    lo, hi]
        conn.execute("DELETE FROM file_rows")
        conn.executemany("INSERT INTO file_rows VALUES (?,?,?,?,?,?,?)",
                         [(file_id, *run) for file_id, run in runs.items()])

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
        self.clear_file_graph(MODULE_LAYER_ROWS)
        conn.executemany(_MODULE_NODE_INSERT, module_rows)
        # external modules that something still imports
        conn.execute(
            "INSERT OR IGNORE INTO nodes(id, kind, name, qualified_name, file_id, language, family,"
            " signature, doc, exported, owner) SELECT x.id, 'Module', x.name, x.name, NULL, NULL,"
            " x.family, '', '', 1, '' FROM externals x"
            " WHERE x.id IN (SELECT target FROM edges WHERE type='Imports')"
        )
        conn.execute("DELETE FROM externals WHERE id NOT IN (SELECT id FROM nodes)")
        self._write_module_edges(contains_rows, None)

    def write_first_module_nodes(self, module_rows: list[tuple]) -> None:
        """A first build's module nodes, once module membership is known (after its parse
        phase), before the nodes table is indexed (see :meth:`write_first_module_layer`)."""
        self.conn.executemany(_MODULE_NODE_INSERT, module_rows)

    def write_first_module_layer(
        self, contains_rows: list[tuple], depends_rows: list[tuple[int, int]],
        imported: set[int],
    ) -> None:
        """:meth:`rebuild_module_layer` for a first build, where the caller has every Imports
        edge in hand: nothing to delete but an empty run, external modules kept by
        ``imported`` (every Imports target) and DependsOn given. Its SQL would join the edges
        with themselves before they are indexed (0.2 s at the end of a cold build of the
        benchmark corpus, on one core).
        The module nodes came earlier (:meth:`write_first_module_nodes`): written here, into
        the indexed nodes table, they cost that end another 0.06-0.08 s."""
        conn = self.conn
        conn.executemany(
            "INSERT OR IGNORE INTO nodes(id, kind, name, qualified_name, file_id, language, family,"
            " signature, doc, exported, owner) VALUES (?, 'Module', ?, ?, NULL, NULL, ?, '', '',"
            " 1, '')",
            [(i, name, name, family)
             for i, family, name in conn.execute("SELECT id, family, name FROM externals")
             if i in imported],
        )
        conn.execute("DELETE FROM externals WHERE id NOT IN (SELECT id FROM nodes)")
        # an index that held no file (an empty directory, every file deleted) still records
        # the layer's empty run of rows
        self.clear_file_graph(MODULE_LAYER_ROWS)
        self._write_module_edges(contains_rows, depends_rows)

    def _write_module_edges(self, contains_rows: list[tuple],
                            depends_rows: list[tuple[int, int]] | None) -> None:
        """The module layer's edges: Contains module -> file, then DependsOn module -> module,
        as given or (None) aggregated here from the Imports edges; recorded as the run of rowids
        of the pseudo file ``MODULE_LAYER_ROWS`` (it has no unresolved references nor lookup
        keys)."""
        conn = self.conn
        first = self._next_rowids()[0]
        conn.executemany(
            "INSERT INTO edges(source, target, type, confidence, file_id, line)"
            " VALUES (?,?,'Contains','exact',NULL,NULL)",
            contains_rows,
        )
        if depends_rows is None:
            depends = conn.execute(
                "INSERT INTO edges(source, target, type, confidence, file_id, line)"
                " SELECT DISTINCT ms.source, COALESCE(mt.source, e.target), 'DependsOn',"
                " 'exact', NULL, NULL FROM edges e"
                " JOIN edges ms ON ms.type='Contains' AND ms.file_id IS NULL AND ms.target=e.source"
                " LEFT JOIN edges mt ON mt.type='Contains' AND mt.file_id IS NULL"
                " AND mt.target=e.target"
                " WHERE e.type='Imports' AND COALESCE(mt.source, e.target) != ms.source"
            ).rowcount
        else:
            conn.executemany(
                "INSERT INTO edges(source, target, type, confidence, file_id, line)"
                " VALUES (?,?,'DependsOn','exact',NULL,NULL)",
                depends_rows,
            )
            depends = len(depends_rows)
        conn.execute("INSERT INTO file_rows VALUES (?,?,?,?,?,?,?)", (
            MODULE_LAYER_ROWS, *_run(first, len(contains_rows) + depends), *_NO_ROWS, *_NO_ROWS))

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


_NO_ROWS = (0, -1)  # an empty run of rowids, written one way however it was made
# a module node is written once: the first row of its id stands
_MODULE_NODE_INSERT = NODE_INSERT.replace("OR REPLACE", "OR IGNORE")


def _shifted(run: tuple[int, ...], offset: int) -> tuple[int, int]:
    """A run of rowids moved by ``offset`` (an empty run stays as it is)."""
    return (run[0] + offset, run[1] + offset) if run[1] >= run[0] else _NO_ROWS


def _run(first: int, count: int) -> tuple[int, int]:
    """The run of ``count`` rowids from ``first``: (first, last)."""
    return (first, first + count - 1) if count else _NO_ROWS
