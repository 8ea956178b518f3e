"""The PostgreSQL store's schema: connecting, versions and migrations.

Every table lives in the ``knoxidx`` schema and carries a ``repo`` column: one database holds
many repositories. The version is ``knoxidx.meta.schema_version``; each entry of
:data:`MIGRATIONS` takes the schema from the version before it to its own, in one transaction,
so a failed migration leaves the previous version intact. ``knoxidx store init`` creates the
schema (every migration in turn), ``knoxidx store migrate`` applies those still missing;
readers and writers refuse a schema older or newer than this knoxidx's.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from knoxidx.core.errors import CorruptIndexError, KnoxidxError
from knoxidx.core.store_url import StoreConfigError, redact

SCHEMA = "knoxidx"

_V1 = """
CREATE TABLE knoxidx.meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE knoxidx.repos(repo TEXT PRIMARY KEY, root TEXT NOT NULL DEFAULT '',
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now());
CREATE TABLE knoxidx.repo_meta(repo TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (repo, key));
CREATE TABLE knoxidx.files(
  id BIGSERIAL PRIMARY KEY, repo TEXT NOT NULL, path TEXT NOT NULL, language TEXT, size BIGINT,
  mtime_ns BIGINT, hash TEXT, lines INTEGER, status TEXT NOT NULL, message TEXT, iface TEXT,
  facts BYTEA, UNIQUE (repo, path));
CREATE TABLE knoxidx.nodes(
  repo TEXT NOT NULL, id BIGINT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
  qualified_name TEXT NOT NULL, file_id BIGINT, def_index INTEGER, parent_id BIGINT,
  start_line INTEGER, end_line INTEGER, start_byte INTEGER, end_byte INTEGER, language TEXT,
  family TEXT, signature TEXT, doc TEXT, exported INTEGER, owner TEXT, member INTEGER,
  PRIMARY KEY (repo, id));
CREATE TABLE knoxidx.edges(
  repo TEXT NOT NULL, source BIGINT NOT NULL, target BIGINT NOT NULL, type TEXT NOT NULL,
  confidence TEXT NOT NULL, file_id BIGINT, line INTEGER);
CREATE TABLE knoxidx.unresolved(
  repo TEXT NOT NULL, file_id BIGINT NOT NULL, source BIGINT, kind TEXT, name TEXT,
  line INTEGER, reason TEXT, candidates INTEGER);
CREATE TABLE knoxidx.lookups(repo TEXT NOT NULL, file_id BIGINT NOT NULL, key TEXT NOT NULL);
CREATE TABLE knoxidx.modules(repo TEXT NOT NULL, family TEXT NOT NULL, key TEXT NOT NULL,
  file_id BIGINT NOT NULL, rank INTEGER NOT NULL);
CREATE TABLE knoxidx.externals(repo TEXT NOT NULL, id BIGINT NOT NULL, family TEXT NOT NULL,
  name TEXT NOT NULL, PRIMARY KEY (repo, id));
CREATE INDEX nodes_name ON knoxidx.nodes(name);
CREATE INDEX nodes_qualified ON knoxidx.nodes(qualified_name);
CREATE INDEX nodes_file ON knoxidx.nodes(file_id);
CREATE INDEX nodes_owner ON knoxidx.nodes(repo, owner) WHERE owner != '';
CREATE INDEX edges_target ON knoxidx.edges(repo, target, type);
CREATE INDEX edges_source ON knoxidx.edges(repo, source, type);
CREATE INDEX edges_file ON knoxidx.edges(file_id);
CREATE INDEX unresolved_file ON knoxidx.unresolved(file_id);
CREATE INDEX lookups_key ON knoxidx.lookups(repo, key);
CREATE INDEX lookups_file ON knoxidx.lookups(file_id);
CREATE INDEX modules_key ON knoxidx.modules(repo, family, key);
CREATE INDEX modules_file ON knoxidx.modules(file_id);
CREATE TABLE knoxidx.chunk(
  id BIGSERIAL PRIMARY KEY, repo TEXT NOT NULL, path TEXT NOT NULL, start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL, language TEXT NOT NULL, symbol TEXT NOT NULL, kind TEXT NOT NULL,
  symbols TEXT NOT NULL, enclosing TEXT NOT NULL, signature TEXT NOT NULL, doc TEXT NOT NULL,
  header TEXT NOT NULL, token_count INTEGER NOT NULL, content_hash TEXT NOT NULL,
  text TEXT NOT NULL, fts TSVECTOR NOT NULL);
CREATE INDEX chunk_by_path ON knoxidx.chunk(repo, path, start_line);
CREATE INDEX chunk_fts ON knoxidx.chunk USING gin(fts);
CREATE TABLE knoxidx.chunk_vector(chunk_id BIGINT PRIMARY KEY, repo TEXT NOT NULL,
  text_hash TEXT NOT NULL, dim INTEGER NOT NULL, embedding vector NOT NULL);
CREATE INDEX chunk_vector_repo ON knoxidx.chunk_vector(repo);
CREATE TABLE knoxidx.embed_pending(chunk_id BIGINT PRIMARY KEY, repo TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0, last_error TEXT NOT NULL DEFAULT '');
CREATE INDEX embed_pending_repo ON knoxidx.embed_pending(repo, chunk_id);
CREATE TABLE knoxidx.embed_meta(repo TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (repo, key));
CREATE TABLE knoxidx.chunk_source(repo TEXT NOT NULL, path TEXT NOT NULL, hash TEXT NOT NULL,
  PRIMARY KEY (repo, path));
CREATE TABLE knoxidx.embed_cache(model TEXT NOT NULL, text_hash TEXT NOT NULL,
  vector BYTEA NOT NULL, PRIMARY KEY (model, text_hash));
"""

# v2: cross-repository questions ask "who imports the external module named X" and "which
# external calls name Y": index those instead of scanning every repository's edges.
_V2 = """
CREATE INDEX externals_name ON knoxidx.externals(name);
CREATE INDEX unresolved_external ON knoxidx.unresolved(name) WHERE reason = 'external';
"""

# v3: chunks of never-send files, kept from a remote embedder (see knoxidx.retrieval.egress).
_V3 = """
CREATE TABLE knoxidx.embed_withheld(chunk_id BIGINT PRIMARY KEY, repo TEXT NOT NULL);
CREATE INDEX embed_withheld_repo ON knoxidx.embed_withheld(repo);
"""

# v4: `symbols` and the search's symbol source ask for names by case-insensitive prefix:
# an index on the lowered name (pattern ops, so LIKE 'abc%' seeks) instead of an ILIKE scan of
# every repository's nodes (SQLite's schema 3 has the NOCASE index for the same question).
_V4 = """
CREATE INDEX nodes_name_lower ON knoxidx.nodes(lower(name) text_pattern_ops);
"""

# v5: the search's names source (``knoxidx.retrieval.names``): each code definition's stemmed
# name parts and scope words, by chunk (SQLite keeps them in the FTS5 table ``chunk_name``).
_V5 = """
CREATE TABLE knoxidx.chunk_name(chunk_id BIGINT NOT NULL, n INTEGER NOT NULL,
  repo TEXT NOT NULL, name TEXT NOT NULL, scope TEXT NOT NULL, tsv TSVECTOR NOT NULL,
  PRIMARY KEY (chunk_id, n));
CREATE INDEX chunk_name_tsv ON knoxidx.chunk_name USING gin(tsv);
CREATE INDEX chunk_name_repo ON knoxidx.chunk_name(repo);
"""

# v6: the search's declarations source (``knoxidx.retrieval.names.declaration_texts``): each
# code definition's declaration text and, once embedded, its vector, by chunk (searched through
# an HNSW index per dimension, as chunk vectors are; see ``pg_embed_store.ensure_vector_index``).
_V6 = """
CREATE TABLE knoxidx.chunk_declaration(chunk_id BIGINT NOT NULL, n INTEGER NOT NULL,
  repo TEXT NOT NULL, text TEXT NOT NULL, text_hash TEXT NOT NULL DEFAULT '', dim INTEGER,
  embedding vector, PRIMARY KEY (chunk_id, n));
CREATE INDEX chunk_declaration_repo ON knoxidx.chunk_declaration(repo);
"""

# v7: each function's complexity (``knoxidx.parse.complexity``). Rows written before are
# NULL there until their file is read again, which the changed engine fingerprint makes the
# next update of each repository do.
_V7 = """
ALTER TABLE knoxidx.nodes ADD COLUMN cyclomatic INTEGER, ADD COLUMN nesting INTEGER,
  ADD COLUMN loc INTEGER;
"""

# v8: each definition's history from git (``knoxidx.history``): HEAD's first-parent commits and
# their diffs' hunks by file, per repository (SQLite keeps the same in ``history_*`` tables).
_V8 = """
CREATE TABLE knoxidx.history_meta(repo TEXT NOT NULL, key TEXT NOT NULL, value TEXT NOT NULL,
  PRIMARY KEY (repo, key));
CREATE TABLE knoxidx.history_commit(repo TEXT NOT NULL, seq INTEGER NOT NULL,
  hash TEXT NOT NULL, time BIGINT NOT NULL, author TEXT NOT NULL, email TEXT NOT NULL,
  subject TEXT NOT NULL, PRIMARY KEY (repo, seq));
CREATE TABLE knoxidx.history_change(repo TEXT NOT NULL, seq INTEGER NOT NULL,
  path TEXT NOT NULL, old_path TEXT, hunks BYTEA NOT NULL);
CREATE INDEX history_change_path ON knoxidx.history_change(repo, path, seq);
CREATE INDEX history_change_seq ON knoxidx.history_change(repo, seq);
"""

# v9: the vectors of the models a repository used before its current one, kept by model id so
# that switching back restores them (``pg_embed_store.PgEmbeddingRows.shelve_vectors``).
_V9 = """
CREATE TABLE knoxidx.embed_shelf(model TEXT NOT NULL, chunk_id BIGINT NOT NULL,
  repo TEXT NOT NULL, content_hash TEXT NOT NULL, text_hash TEXT NOT NULL,
  vector BYTEA NOT NULL, PRIMARY KEY (model, chunk_id));
CREATE INDEX embed_shelf_repo ON knoxidx.embed_shelf(repo, model);
CREATE TABLE knoxidx.embed_shelf_declaration(model TEXT NOT NULL, chunk_id BIGINT NOT NULL,
  n INTEGER NOT NULL, repo TEXT NOT NULL, text_hash TEXT NOT NULL, vector BYTEA NOT NULL,
  PRIMARY KEY (model, chunk_id, n));
CREATE INDEX embed_shelf_declaration_repo ON knoxidx.embed_shelf_declaration(repo, model);
"""

# v10: each function's signature as data (``knoxidx.parse.signatures``: JSON) and the names in
# its return and parameter types that ``--returns`` / ``--param-type`` search. NULL in rows
# written before, until the changed engine fingerprint has the next update read them again.
_V10 = """
ALTER TABLE knoxidx.nodes ADD COLUMN signature_data TEXT, ADD COLUMN returns_types TEXT,
  ADD COLUMN param_types TEXT;
"""

MIGRATIONS: dict[int, str] = {
    1: _V1, 2: _V2, 3: _V3, 4: _V4, 5: _V5, 6: _V6, 7: _V7, 8: _V8, 9: _V9, 10: _V10,
}
SCHEMA_VERSION = max(MIGRATIONS)


class StoreUnavailableError(KnoxidxError):
    """The PostgreSQL server cannot be reached, or refused us."""

    exit_code = 8


def connect(url: str, *, role: str = "knoxidx") -> Any:
    """An autocommit psycopg connection (transactions are explicit), named for
    ``pg_stat_activity`` so a locked-out writer can say who holds the lock."""
    try:
        import psycopg
    except ImportError:
        raise StoreConfigError(
            "the PostgreSQL store needs psycopg: pip install 'knoxidx[postgres]'"
        ) from None
    name = f"knoxidx {role} pid {os.getpid()} on {socket.gethostname()}"[:63]
    try:
        return psycopg.connect(url, autocommit=True, application_name=name, connect_timeout=10)
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        first = redact(first.replace(url, redact(url)))  # libpq quotes a URL it cannot parse
        if isinstance(exc, psycopg.ProgrammingError):  # the URL itself: no server was asked
            raise StoreConfigError(f"bad store URL {redact(url)}: {first}") from None
        raise StoreUnavailableError(f"cannot connect to {redact(url)}: {first}") from None


def current_version(conn: Any) -> int | None:
    """The schema version, or None when the database has no knoxidx schema."""
    row = conn.execute("SELECT to_regclass('knoxidx.meta')").fetchone()
    if row[0] is None:
        return None
    row = conn.execute("SELECT value FROM knoxidx.meta WHERE key = 'schema_version'").fetchone()
    return int(row[0]) if row else 0


def migrate(conn: Any, target: int = SCHEMA_VERSION) -> list[int]:
    """Apply the migrations after the current version up to ``target``; returns the versions
    applied. Serialised by an advisory lock, so two migrators never race."""
    applied: list[int] = []
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('knoxidx:migrate'))")
        version = current_version(conn) or 0
        if version > SCHEMA_VERSION:
            raise CorruptIndexError(
                f"the store has schema {version}, newer than this knoxidx's ({SCHEMA_VERSION});"
                " upgrade knoxidx"
            )
        if version == 0:
            _create_prerequisites(conn)
        for step in range(version + 1, target + 1):
            for statement in MIGRATIONS[step].split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(
                "INSERT INTO knoxidx.meta VALUES ('schema_version', %s) ON CONFLICT (key)"
                " DO UPDATE SET value = excluded.value", (str(step),),
            )
            applied.append(step)
    return applied


def _create_prerequisites(conn: Any) -> None:
    """pgvector and the schema, unless an administrator made them already: the role that
    migrates then needs neither superuser nor CREATE on the database."""
    if not conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone():
        conn.execute("CREATE EXTENSION vector")
    if not conn.execute("SELECT 1 FROM pg_namespace WHERE nspname = %s", (SCHEMA,)).fetchone():
        conn.execute(f"CREATE SCHEMA {SCHEMA}")


def check_version(conn: Any, url: str, *, may_create: bool) -> None:
    """Refuse a schema this knoxidx cannot use; create it on a fresh database when allowed."""
    version = current_version(conn)
    if version == SCHEMA_VERSION:
        return
    if version is None and may_create:
        migrate(conn)
        return
    if version is None:
        raise CorruptIndexError(
            f"{redact(url)} has no knoxidx schema; run `knoxidx store init --store URL`"
        )
    if version < SCHEMA_VERSION:
        raise CorruptIndexError(
            f"the store at {redact(url)} has schema {version}, this knoxidx needs "
            f"{SCHEMA_VERSION}; run `knoxidx store migrate --store URL`"
        )
    raise CorruptIndexError(
        f"the store at {redact(url)} has schema {version}, newer than this knoxidx's "
        f"({SCHEMA_VERSION}); upgrade knoxidx"
    )
