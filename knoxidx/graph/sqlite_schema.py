"""The SQLite index's tables, where the file lives, and the shapes of the rows that cross its
boundary (node rows in ``NODE_COLUMNS`` order)."""

from __future__ import annotations

import re
from pathlib import Path

# 3: nodes_name_nocase (a name-prefix LIKE seeks) and files_ok (covering); 4: file_rows in place
# of the edges, unresolved and lookups tables' indexes on file_id; 5: nodes keyed by rowid, in
# the order they are written, with a unique index on id; 6: no index of the edges by source
# (see OUTSIDE_RUNS); 7: each function's complexity (cyclomatic, nesting, loc); 8: each
# function's signature as data, and the names in its types the filters search
SCHEMA_VERSION = 8
INDEX_DIR = ".knoxidx"
SCRATCH_SUFFIX = ".new"  # a first build in progress (see SQLiteStore.open_scratch)
INIT_SUFFIX = ".init"  # a new, empty index being made (see _create_file)
DB_NAME = "index.db"

# The edges whose source need not lie in their run: the module layer's (its sources are module
# nodes) and Implements edges (a Rust `impl Trait for T` in another file than T's). Every other
# edge's source is its file's node or one of the file's definitions, so the edges out of a node
# are read from its file's run (GraphQueries.edges) and these through edges_outside, the only
# index of the edges by source: one over every edge cost a first build ~0.2 s at its end.
OUTSIDE_RUNS = "file_id IS NULL OR type = 'Implements'"

# Node ids are hashes: as the table's key they would put each row a first build writes on a
# random page (half the insert time), so rows are appended and found by id through nodes_id.
SCHEMA = f"""
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files(
  id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, language TEXT, size INTEGER,
  mtime_ns INTEGER, hash TEXT, lines INTEGER, status TEXT NOT NULL, message TEXT,
  iface TEXT, facts BLOB);
CREATE TABLE nodes(
  id INTEGER NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL, qualified_name TEXT NOT NULL,
  file_id INTEGER, def_index INTEGER, parent_id INTEGER, start_line INTEGER, end_line INTEGER,
  start_byte INTEGER, end_byte INTEGER, language TEXT, family TEXT, signature TEXT, doc TEXT,
  exported INTEGER, owner TEXT, member INTEGER, cyclomatic INTEGER, nesting INTEGER,
  loc INTEGER, signature_data TEXT, returns_types TEXT, param_types TEXT);
CREATE TABLE edges(
  source INTEGER NOT NULL, target INTEGER NOT NULL, type TEXT NOT NULL,
  confidence TEXT NOT NULL, file_id INTEGER, line INTEGER);
CREATE TABLE unresolved(
  file_id INTEGER NOT NULL, source INTEGER, kind TEXT, name TEXT, line INTEGER, reason TEXT,
  candidates INTEGER);
CREATE TABLE lookups(file_id INTEGER NOT NULL, key TEXT NOT NULL);
CREATE TABLE file_rows(
  file_id INTEGER PRIMARY KEY, edges_lo INTEGER NOT NULL, edges_hi INTEGER NOT NULL,
  unresolved_lo INTEGER NOT NULL, unresolved_hi INTEGER NOT NULL,
  lookups_lo INTEGER NOT NULL, lookups_hi INTEGER NOT NULL);
CREATE TABLE modules(family TEXT NOT NULL, key TEXT NOT NULL, file_id INTEGER NOT NULL,
  rank INTEGER NOT NULL);
CREATE TABLE externals(id INTEGER PRIMARY KEY, family TEXT NOT NULL, name TEXT NOT NULL);
CREATE UNIQUE INDEX nodes_id ON nodes(id);
CREATE INDEX nodes_name ON nodes(name);
CREATE INDEX nodes_name_nocase ON nodes(name COLLATE NOCASE);
CREATE INDEX files_ok ON files(status, path, hash);
CREATE INDEX nodes_qualified ON nodes(qualified_name);
CREATE INDEX nodes_file ON nodes(file_id);
CREATE INDEX nodes_owner ON nodes(owner) WHERE owner != '';
CREATE INDEX edges_target ON edges(target, type);
CREATE INDEX edges_outside ON edges(source) WHERE {OUTSIDE_RUNS};
CREATE INDEX lookups_key ON lookups(key);
CREATE INDEX modules_key ON modules(family, key);
CREATE INDEX modules_file ON modules(file_id);
"""

INDEX_STATEMENTS = [s.strip() for s in SCHEMA.split(";")
                    if s.strip().startswith(("CREATE INDEX", "CREATE UNIQUE INDEX"))]


def table_statement(table: str) -> str:
    """SCHEMA's ``CREATE TABLE`` statement of ``table``."""
    for statement in SCHEMA.split(";"):
        if statement.strip().startswith(f"CREATE TABLE {table}("):
            return statement.strip()
    raise KeyError(table)


_INDEX_STATEMENT = re.compile(r"CREATE (?:UNIQUE )?INDEX (\w+) ON (\w+)\(([^)]*)\)")


def index_name(statement: str) -> str:
    """The index a ``CREATE [UNIQUE] INDEX`` statement of SCHEMA makes."""
    return _index_parts(statement)[0]


def index_table(statement: str) -> str:
    """The table a ``CREATE [UNIQUE] INDEX`` statement of SCHEMA indexes."""
    return _index_parts(statement)[1]


def index_columns(statement: str) -> str:
    """What a ``CREATE [UNIQUE] INDEX`` statement of SCHEMA indexes the table by, as written."""
    return _index_parts(statement)[2]


def _index_parts(statement: str) -> tuple[str, str, str]:
    found = _INDEX_STATEMENT.match(statement)
    assert found is not None, statement
    return found.group(1), found.group(2), found.group(3)


# A file's rows in the edges, unresolved and lookups tables are one run of rowids each, since
# they are written together (GraphRows.insert_resolution): ``file_rows`` holds the runs, and a
# file's rows are deleted by rowid. An index on file_id per table cost a first build of the
# benchmark corpus 0.18 s at its end, on one core (and 8.8 MB). The module layer's edges
# (file_id NULL) are the run of this pseudo file.
MODULE_LAYER_ROWS = 0

# Column order of node rows as the indexer produces them: file_id comes last, appended by the
# writer once the file row exists.
NODE_COLUMNS = (
    "id", "kind", "name", "qualified_name", "def_index", "parent_id", "start_line",
    "end_line", "start_byte", "end_byte", "language", "family", "signature", "doc", "exported",
    "owner", "member", "cyclomatic", "nesting", "loc", "signature_data", "returns_types",
    "param_types", "file_id",
)
NODE_INSERT = (
    f"INSERT OR REPLACE INTO nodes({', '.join(NODE_COLUMNS)})"
    f" VALUES ({','.join('?' * len(NODE_COLUMNS))})"
)


def find_index_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding a ``.knoxidx`` index (as git does)."""
    current = start.resolve()
    for candidate in (current, *current.parents):
        if (candidate / INDEX_DIR / DB_NAME).exists():
            return candidate
    return None
