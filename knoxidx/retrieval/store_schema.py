"""The SQLite tables of retrieval, and creating them.

Tables (in the index database the graph store opened; names start with ``chunk`` or ``embed``):

- ``chunk``: one row per chunk (where it is, what it covers, its text and content hash).
- ``chunk_fts``: FTS5 over the chunk's text, symbols and path with identifiers split
  (``terms.index_text``); its rowid is the chunk id.
- ``chunk_name``: FTS5 over the stemmed name parts and scope words of each code definition
  that starts in a chunk (``names.name_rows``), for the names source; rowid ``chunk id x
  NAMES_PER_CHUNK + n``.
- ``chunk_vector``: the current model's unit vector for a chunk, and the hash of the text
  that was embedded.
- ``chunk_declaration``: what the declarations source embeds of each code definition that
  starts in a chunk (``names.declaration_texts``), and its vector once embedded (with the
  chunk, in the same transaction); id ``chunk id x NAMES_PER_CHUNK + n``.
- ``embed_cache``: vectors by (model, text hash). It outlives chunks, so a chunk that comes back
  (a revert, a moved file, a re-index) costs no model call.
- ``embed_pending``: chunks that still need a vector (new, changed, or left over when the
  service was down), with the last error.
- ``embed_withheld``: chunks of never-send files that a remote embedder may not see: off the
  pending list, without a vector, found by lexical and symbol search only.
- ``embed_shelf`` and ``embed_shelf_declaration``: the vectors of the models the index used
  before the current one (keyed by model id, with the chunk's content hash they were made
  from), so that switching back (``embedder`` in ``knoxidx.toml``) restores them instead of embedding again.
- ``embed_meta``: which model the vectors belong to, a version bumped on each vector write, and
  which chunker made the chunks.
- ``chunk_source``: for each chunked file, the content hash (the graph's ``files.hash``) its
  chunks were made from, so an update can tell which files to re-chunk without trusting that
  the previous run finished.

The embedding cache may live in another, ATTACHed database (``cache_schema``), so that it
survives a rebuilt index; the other tables live in the main one.
"""

from __future__ import annotations

import sqlite3

# chunk_name and chunk_declaration rows of one chunk: their ids are chunk id x this + 0, 1, ...
# (a chunk's further definitions, past this many, are not looked up by name)
NAMES_PER_CHUNK = 1024
SCHEMA = """
CREATE TABLE IF NOT EXISTS chunk (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    language TEXT NOT NULL,
    symbol TEXT NOT NULL,
    kind TEXT NOT NULL,
    symbols TEXT NOT NULL,
    enclosing TEXT NOT NULL,
    signature TEXT NOT NULL,
    doc TEXT NOT NULL,
    header TEXT NOT NULL,
    token_count INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    text TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS chunk_by_path ON chunk(path, start_line);
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_fts USING fts5(
    body, symbols, path, tokenize = "unicode61 tokenchars '_'"
);
CREATE VIRTUAL TABLE IF NOT EXISTS chunk_name USING fts5(name, scope);
CREATE TABLE IF NOT EXISTS chunk_vector (
    chunk_id INTEGER PRIMARY KEY,
    text_hash TEXT NOT NULL,
    vector BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS chunk_declaration (
    id INTEGER PRIMARY KEY,
    text TEXT NOT NULL,
    text_hash TEXT NOT NULL DEFAULT '',
    vector BLOB
);
CREATE TABLE IF NOT EXISTS embed_pending (
    chunk_id INTEGER PRIMARY KEY,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS embed_withheld (
    chunk_id INTEGER PRIMARY KEY
);
CREATE TABLE IF NOT EXISTS embed_shelf (
    model TEXT NOT NULL,
    chunk_id INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, chunk_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS embed_shelf_declaration (
    model TEXT NOT NULL,
    id INTEGER NOT NULL,
    text_hash TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS embed_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS chunk_source (
    path TEXT PRIMARY KEY,
    hash TEXT NOT NULL
) WITHOUT ROWID;
"""
CACHE_SCHEMA = """
CREATE TABLE IF NOT EXISTS {schema}.embed_cache (
    model TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector BLOB NOT NULL,
    PRIMARY KEY (model, text_hash)
) WITHOUT ROWID
"""


def create_schema(conn: sqlite3.Connection, cache_schema: str | None = "main") -> None:
    """Create the tables if missing (the cache in ``cache_schema``; None: not at all).
    Statement by statement: ``executescript`` would commit whatever transaction the caller has
    open."""
    for statement in SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    if cache_schema is not None:
        create_cache_schema(conn, cache_schema)


def create_cache_schema(conn: sqlite3.Connection, schema: str) -> None:
    conn.execute(CACHE_SCHEMA.format(schema=schema_name(schema)))


def attach_cache(conn: sqlite3.Connection, path: str, schema: str) -> None:
    """ATTACH the embedding-cache database at ``path`` as ``schema`` (once per connection; not
    inside a transaction) and create its table."""
    attached = {row[1] for row in conn.execute("PRAGMA database_list")}
    if schema not in attached:
        conn.execute(f"ATTACH DATABASE ? AS {schema_name(schema)}", (path,))
        conn.execute(f"PRAGMA {schema}.journal_mode=WAL")
    create_cache_schema(conn, schema)


def has_schema(conn: sqlite3.Connection) -> bool:
    """Whether the chunk tables exist (an index built with ``--graph-only`` has none)."""
    row = conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
        "AND name IN ('chunk', 'chunk_fts', 'chunk_vector', 'embed_pending', 'chunk_source')"
    ).fetchone()
    return int(row[0]) == 5



def schema_name(schema: str) -> str:
    if not schema.replace("_", "").isalnum():
        raise ValueError(f"bad schema name {schema!r}")
    return schema

