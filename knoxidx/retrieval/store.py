"""All of retrieval's SQL: chunks, their FTS5 index, vectors, the embedding cache, pending work.

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
- ``embed_meta``: which model the vectors belong to, a version bumped on each vector write, and
  which chunker made the chunks.
- ``chunk_source``: for each chunked file, the content hash (the graph's ``files.hash``) its
  chunks were made from, so an update can tell which files to re-chunk without trusting that
  the previous run finished.

The embedding cache may live in another, ATTACHed database (``cache_schema``), so that it
survives a rebuilt index; the other tables live in the main one.

Methods never commit: the caller owns the transaction (``transaction`` wraps a unit of work;
``commit`` is there for long runs that save progress batch by batch).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from knoxidx.retrieval.chunker import Chunk, DefinitionLike
from knoxidx.retrieval.names import declaration_texts, name_rows
from knoxidx.retrieval.terms import index_text

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

_CHUNK_COLUMNS = (
    "id, path, start_line, end_line, language, symbol, kind, symbols, enclosing, signature, doc, "
    "header, token_count, content_hash, text"
)
_FTS_WEIGHTS = (1.0, 4.0, 2.0)  # body, symbols, path
# chunk_name rows of one chunk: its rowids are chunk id x this + 0, 1, ... (a chunk's further
# definitions, past this many, are not looked up by name)
NAMES_PER_CHUNK = 1024


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
    conn.execute(CACHE_SCHEMA.format(schema=_schema_name(schema)))


def attach_cache(conn: sqlite3.Connection, path: str, schema: str) -> None:
    """ATTACH the embedding-cache database at ``path`` as ``schema`` (once per connection; not
    inside a transaction) and create its table."""
    attached = {row[1] for row in conn.execute("PRAGMA database_list")}
    if schema not in attached:
        conn.execute(f"ATTACH DATABASE ? AS {_schema_name(schema)}", (path,))
        conn.execute(f"PRAGMA {schema}.journal_mode=WAL")
    create_cache_schema(conn, schema)


def has_schema(conn: sqlite3.Connection) -> bool:
    """Whether the chunk tables exist (an index built with ``--graph-only`` has none)."""
    row = conn.execute(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' "
        "AND name IN ('chunk', 'chunk_fts', 'chunk_vector', 'embed_pending', 'chunk_source')"
    ).fetchone()
    return int(row[0]) == 5


def _schema_name(schema: str) -> str:
    if not schema.replace("_", "").isalnum():
        raise ValueError(f"bad schema name {schema!r}")
    return schema


@dataclass(frozen=True, slots=True)
class ChunkFilter:
    """Restricts a search to chunks of some languages and/or paths matching a glob (SQLite
    GLOB: case-sensitive, ``*`` also crosses ``/``); a glob without wildcards is a file or
    directory prefix."""

    languages: tuple[str, ...] = ()
    path_glob: str | None = None

    def __bool__(self) -> bool:
        return bool(self.languages) or bool(self.path_glob)

    def where(self, alias: str = "c") -> tuple[str, list[object]]:
        clauses: list[str] = []
        params: list[object] = []
        if self.languages:
            clauses.append(f"{alias}.language IN ({','.join('?' * len(self.languages))})")
            params.extend(self.languages)
        if self.path_glob:
            glob = self.path_glob
            if any(ch in glob for ch in "*?["):
                clauses.append(f"{alias}.path GLOB ?")
                params.append(glob)
            else:
                prefix = glob.removeprefix("./").rstrip("/")
                clauses.append(f"({alias}.path = ? OR substr({alias}.path, 1, ?) = ?)")
                params.extend([prefix, len(prefix) + 1, prefix + "/"])
        return " AND ".join(clauses) or "1", params


@dataclass(frozen=True, slots=True)
class StoredChunk:
    id: int
    chunk: Chunk


@dataclass(frozen=True, slots=True)
class FileUpdate:
    added: int  # new chunks, now pending
    kept: int  # unchanged content: vector kept
    removed: int


class ChunkStore:
    def __init__(self, conn: sqlite3.Connection, cache_schema: str = "main") -> None:
        self.conn = conn
        self._cache = f"{_schema_name(cache_schema)}.embed_cache"

    def commit(self) -> None:
        self.conn.commit()

    def has_schema(self) -> bool:
        return has_schema(self.conn)

    def ensure_schema(self) -> None:
        """Create the chunk tables if missing (not the cache: it may live elsewhere)."""
        create_schema(self.conn, cache_schema=None)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One unit of work. On an autocommit connection (``isolation_level=None``, as the index
        opens it) an explicit BEGIN IMMEDIATE ... COMMIT, rolled back on any exception; inside
        a transaction the caller already opened, nothing; else the implicit transaction is
        committed at the end."""
        conn = self.conn
        if conn.in_transaction:
            yield
            return
        if conn.isolation_level is not None:
            yield
            conn.commit()
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            if conn.in_transaction:  # SQLite may have rolled back already (a full disk)
                conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    # ---- chunks ------------------------------------------------------------------------------

    def replace_file(
        self,
        path: str,
        chunks: Sequence[Chunk],
        fts: Sequence[tuple[str, str, str]] | None = None,
    ) -> FileUpdate:
        """Make ``path``'s chunks exactly ``chunks``; rows whose content hash survives keep their
        id and vector (only their position is updated); the rest become pending. ``fts``: the
        chunks' full-text columns (:func:`fts_columns`), when a worker already made them."""
        old: dict[str, list[int]] = {}
        for chunk_id, content_hash in self.conn.execute(
            "SELECT id, content_hash FROM chunk WHERE path = ? ORDER BY id", (path,)
        ):
            old.setdefault(content_hash, []).append(chunk_id)
        added = kept = 0
        for n, chunk in enumerate(chunks):
            reusable = old.get(chunk.content_hash)
            if reusable:
                chunk_id = reusable.pop(0)
                self.conn.execute(
                    "UPDATE chunk SET start_line = ?, end_line = ?, symbols = ?, enclosing = ?, "
                    "symbol = ?, kind = ?, signature = ?, doc = ? WHERE id = ?",
                    (
                        chunk.start_line,
                        chunk.end_line,
                        json.dumps(chunk.symbols),
                        json.dumps(chunk.enclosing),
                        chunk.symbol,
                        chunk.kind,
                        chunk.signature,
                        chunk.doc,
                        chunk_id,
                    ),
                )
                # the same definitions, but written again: after a chunker version change
                # (every file re-chunked) its names may be new, or missing from an old index
                self._delete_names([chunk_id])
                self._insert_names(chunk_id, chunk)
                if self._declarations_changed(chunk_id, chunk):
                    # embedded again: the chunk's own text comes from the cache
                    self.conn.execute(
                        "INSERT OR IGNORE INTO embed_pending (chunk_id) VALUES (?)", (chunk_id,))
                kept += 1
            else:
                chunk_id = self._insert(chunk, fts[n] if fts is not None else None)
                self.conn.execute("INSERT INTO embed_pending (chunk_id) VALUES (?)", (chunk_id,))
                added += 1
        stale = [i for ids in old.values() for i in ids]
        self._delete(stale)
        return FileUpdate(added=added, kept=kept, removed=len(stale))

    def remove_file(self, path: str) -> int:
        ids = [row[0] for row in self.conn.execute("SELECT id FROM chunk WHERE path = ?", (path,))]
        self._delete(ids)
        self.conn.execute("DELETE FROM chunk_source WHERE path = ?", (path,))
        return len(ids)

    # ---- which file contents the chunks were made from ---------------------------------------

    def sources(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT path, hash FROM chunk_source"))

    def source_hash(self, path: str) -> str | None:
        row = self.conn.execute("SELECT hash FROM chunk_source WHERE path = ?", (path,)).fetchone()
        return str(row[0]) if row else None

    def set_source(self, path: str, content_hash: str) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO chunk_source (path, hash) VALUES (?, ?)", (path, content_hash)
        )

    def forget_sources(self) -> None:
        """Every file will be re-chunked (the chunker changed); unchanged chunks keep their
        vectors, since ``replace_file`` matches them by content hash."""
        self.conn.execute("DELETE FROM chunk_source")

    def paths(self) -> list[str]:
        return [
            row[0] for row in self.conn.execute("SELECT DISTINCT path FROM chunk ORDER BY path")
        ]

    def get(self, ids: Iterable[int]) -> dict[int, StoredChunk]:
        out: dict[int, StoredChunk] = {}
        id_list = list(ids)
        for start in range(0, len(id_list), 500):
            batch = id_list[start : start + 500]
            marks = ",".join("?" * len(batch))
            for row in self.conn.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM chunk WHERE id IN ({marks})", batch
            ):
                out[row[0]] = StoredChunk(row[0], _row_to_chunk(row))
        return out

    def chunk_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM chunk").fetchone()[0])

    def chunks_at(
        self, path: str, line: int, chunk_filter: ChunkFilter | None = None
    ) -> list[int]:
        """Chunks of ``path`` covering ``line``, the narrowest first."""
        where, params = (chunk_filter or ChunkFilter()).where("c")
        rows = self.conn.execute(
            "SELECT id FROM chunk c WHERE path = ? AND start_line <= ? AND end_line >= ? "
            f"AND {where} ORDER BY end_line - start_line, start_line",
            (path, line, line, *params),
        )
        return [row[0] for row in rows]

    def chunk_ids(self, chunk_filter: ChunkFilter) -> list[int]:
        where, params = chunk_filter.where("c")
        return [row[0] for row in self.conn.execute(f"SELECT id FROM chunk c WHERE {where}", params)]

    def _insert(self, chunk: Chunk, fts: tuple[str, str, str] | None = None) -> int:
        cursor = self.conn.execute(
            "INSERT INTO chunk (path, start_line, end_line, language, symbol, kind, symbols, "
            "enclosing, signature, doc, header, token_count, content_hash, text) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                chunk.path,
                chunk.start_line,
                chunk.end_line,
                chunk.language,
                chunk.symbol,
                chunk.kind,
                json.dumps(chunk.symbols),
                json.dumps(chunk.enclosing),
                chunk.signature,
                chunk.doc,
                chunk.header,
                chunk.token_count,
                chunk.content_hash,
                chunk.text,
            ),
        )
        chunk_id = int(cursor.lastrowid or 0)
        self.conn.execute(
            "INSERT INTO chunk_fts (rowid, body, symbols, path) VALUES (?, ?, ?, ?)",
            (chunk_id, *(fts or fts_columns(chunk))),
        )
        self._insert_names(chunk_id, chunk)
        self._insert_declarations(chunk_id, chunk)
        return chunk_id

    def _insert_names(self, chunk_id: int, chunk: Chunk) -> int:
        base = chunk_id * NAMES_PER_CHUNK
        rows = [(base + n, parts, scope)
                for n, (parts, scope) in enumerate(name_rows(chunk)[:NAMES_PER_CHUNK])]
        self.conn.executemany("INSERT INTO chunk_name (rowid, name, scope) VALUES (?, ?, ?)", rows)
        return len(rows)

    def _insert_declarations(self, chunk_id: int, chunk: Chunk) -> None:
        base = chunk_id * NAMES_PER_CHUNK
        self.conn.executemany(
            "INSERT INTO chunk_declaration (id, text) VALUES (?, ?)",
            [(base + n, text)
             for n, text in enumerate(declaration_texts(chunk)[:NAMES_PER_CHUNK])])

    def _declarations_changed(self, chunk_id: int, chunk: Chunk) -> bool:
        """Write a kept chunk's declarations again if their texts changed (a renamed class
        holding an unchanged method, a chunker version that adds them); whether they did."""
        base = chunk_id * NAMES_PER_CHUNK
        old = [row[0] for row in self.conn.execute(
            "SELECT text FROM chunk_declaration WHERE id >= ? AND id < ? ORDER BY id",
            (base, base + NAMES_PER_CHUNK))]
        if old == declaration_texts(chunk)[:NAMES_PER_CHUNK]:
            return False
        self._delete_declarations([chunk_id])
        self._insert_declarations(chunk_id, chunk)
        self._bump_version()  # a kept matrix copy (vectors.load_matrix) still has the old ones
        return True

    def _delete_declarations(self, ids: Sequence[int]) -> None:
        self.conn.executemany(
            "DELETE FROM chunk_declaration WHERE id >= ? AND id < ?",
            [(i * NAMES_PER_CHUNK, (i + 1) * NAMES_PER_CHUNK) for i in ids],
        )

    def declarations(self, chunk_ids: Sequence[int]) -> dict[int, list[tuple[int, str]]]:
        """(declaration id, text) of each chunk's declarations, in order."""
        out: dict[int, list[tuple[int, str]]] = {}
        for i in chunk_ids:
            base = i * NAMES_PER_CHUNK
            rows = self.conn.execute(
                "SELECT id, text FROM chunk_declaration WHERE id >= ? AND id < ? ORDER BY id",
                (base, base + NAMES_PER_CHUNK)).fetchall()
            if rows:
                out[i] = [(int(d), str(t)) for d, t in rows]
        return out

    def rebuild_names(
        self, definitions: Callable[[str], Sequence[DefinitionLike] | None]
    ) -> int:
        """Write ``chunk_name`` again from the stored chunks and their files' ``definitions``
        (stored chunks do not keep their symbols' kinds): for chunks that arrived as rows,
        pulled from a shared store. Returns the rows written."""
        self.conn.execute("DELETE FROM chunk_name")
        kinds_by_path: dict[str, dict[str, str]] = {}
        written = 0
        for row in self.conn.execute(f"SELECT {_CHUNK_COLUMNS} FROM chunk").fetchall():
            chunk = _row_to_chunk(row)
            kinds = kinds_by_path.get(chunk.path)
            if kinds is None:
                kinds = {d.qualname: d.kind for d in definitions(chunk.path) or ()}
                kinds_by_path[chunk.path] = kinds
            chunk = replace(chunk, symbol_kinds=tuple(kinds.get(s, "") for s in chunk.symbols))
            written += self._insert_names(int(row[0]), chunk)
        return written

    def _delete_names(self, ids: Sequence[int]) -> None:
        self.conn.executemany(
            "DELETE FROM chunk_name WHERE rowid >= ? AND rowid < ?",
            [(i * NAMES_PER_CHUNK, (i + 1) * NAMES_PER_CHUNK) for i in ids],
        )

    def _delete(self, ids: Sequence[int]) -> None:
        if not ids:
            return
        rows = [(i,) for i in ids]
        self.conn.executemany("DELETE FROM chunk WHERE id = ?", rows)
        self.conn.executemany("DELETE FROM chunk_fts WHERE rowid = ?", rows)
        self._delete_names(ids)
        self._delete_declarations(ids)
        self.conn.executemany("DELETE FROM chunk_vector WHERE chunk_id = ?", rows)
        self.conn.executemany("DELETE FROM embed_pending WHERE chunk_id = ?", rows)
        self.conn.executemany("DELETE FROM embed_withheld WHERE chunk_id = ?", rows)
        self._bump_version()

    # ---- lexical search ----------------------------------------------------------------------

    def lexical_search(
        self, words: Sequence[str], limit: int, chunk_filter: ChunkFilter | None = None
    ) -> list[tuple[int, float]]:
        """Chunks matching any of ``words`` (already split by ``terms``), best BM25 first; the
        score is BM25 negated so that higher is better."""
        if not words:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        weights = ", ".join(str(w) for w in _FTS_WEIGHTS)
        if chunk_filter:
            where, params = chunk_filter.where("c")
            rows = self.conn.execute(
                f"SELECT chunk_fts.rowid, bm25(chunk_fts, {weights}) AS rank FROM chunk_fts "
                f"JOIN chunk c ON c.id = chunk_fts.rowid WHERE chunk_fts MATCH ? AND {where} "
                "ORDER BY rank LIMIT ?",
                (match, *params, limit),
            )
        else:
            rows = self.conn.execute(
                f"SELECT rowid, bm25(chunk_fts, {weights}) AS rank FROM chunk_fts "
                "WHERE chunk_fts MATCH ? ORDER BY rank LIMIT ?",
                (match, limit),
            )
        return [(int(rowid), -float(rank)) for rowid, rank in rows]

    def name_search(
        self, stems: Sequence[str], limit: int, chunk_filter: ChunkFilter | None = None
    ) -> list[tuple[int, str, str]]:
        """Code definitions with a name part among ``stems``, best BM25 over the name parts
        first: (chunk id, name parts, scope words), as ``names.rank_names`` scores them."""
        if not stems:
            return []
        match = "name : (" + " OR ".join('"' + w.replace('"', '""') + '"' for w in stems) + ")"
        join, where = "", ""
        params: list = []
        if chunk_filter:
            clause, params = chunk_filter.where("c")
            join = f"JOIN chunk c ON c.id = chunk_name.rowid / {NAMES_PER_CHUNK}"
            where = f"AND {clause}"
        try:
            rows = self.conn.execute(
                f"SELECT chunk_name.rowid, chunk_name.name, chunk_name.scope FROM chunk_name "
                f"{join} WHERE chunk_name MATCH ? {where} "
                "ORDER BY bm25(chunk_name, 1.0, 0.0) LIMIT ?",
                (match, *params, limit),
            ).fetchall()
        except sqlite3.OperationalError as exc:
            if "no such table" not in str(exc):
                raise
            return []  # an index chunked before the table existed: the next update adds it
        return [(int(rowid) // NAMES_PER_CHUNK, str(name), str(scope))
                for rowid, name, scope in rows]

    def document_frequencies(self, words: Sequence[str]) -> tuple[dict[str, int], int]:
        """In how many chunks each of ``words`` occurs, and how many chunks there are (IDF
        weights for the definition rerank), from a temporary fts5vocab view of the index."""
        total = self.chunk_count()
        if not words:
            return {}, total
        try:
            self.conn.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunk_vocab "
                "USING fts5vocab(main, 'chunk_fts', 'row')"
            )
            marks = ", ".join("?" * len(words))
            rows = self.conn.execute(
                f"SELECT term, doc FROM temp.chunk_vocab WHERE term IN ({marks})", list(words)
            ).fetchall()
        except sqlite3.Error:  # no fts5vocab in this SQLite: every word weighs the same
            return {}, 0
        return {str(term): int(doc) for term, doc in rows}, total

    # ---- vectors, cache, pending -------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM embed_meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO embed_meta (key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def recorded_model(self) -> str | None:
        """The model id the stored vectors belong to (None before the first embedding run)."""
        return self.meta("model")

    def record_model(self, model_id: str, dimension: int) -> None:
        self.set_meta("model", model_id)
        self.set_meta("dimension", str(dimension))

    def vectors_version(self) -> int:
        return int(self.meta("vectors_version") or 0)

    def _bump_version(self) -> None:
        self.set_meta("vectors_version", str(self.vectors_version() + 1))
        # unlike the version, never repeats (a rebuilt index starts counting again): it names
        # the memory-mapped copy of the matrix (vectors.load_matrix)
        self.set_meta("vectors_token", uuid.uuid4().hex)

    def vectors_token(self) -> str:
        return self.meta("vectors_token") or ""

    def ensure_vectors_token(self) -> None:
        """Name the current vectors (an index from before tokens has none: no matrix copy)."""
        if not self.vectors_token():
            self.set_meta("vectors_token", uuid.uuid4().hex)

    def database_folder(self) -> Path | None:
        """The folder of the index database (None in memory): where the matrix copy lives."""
        for _, name, file in self.conn.execute("PRAGMA database_list"):
            if name == "main":
                return Path(file).parent if file else None
        return None

    def drop_vectors(self) -> int:
        """Forget every chunk vector (the model changed) and mark every chunk pending."""
        count = self.chunk_count()
        self.conn.execute("DELETE FROM chunk_vector")
        self.conn.execute("UPDATE chunk_declaration SET text_hash = '', vector = NULL")
        self.conn.execute("DELETE FROM embed_withheld")
        self.conn.execute("INSERT OR IGNORE INTO embed_pending (chunk_id) SELECT id FROM chunk")
        self._bump_version()
        return count

    def pending(self, limit: int, after: int = 0) -> list[int]:
        rows = self.conn.execute(
            "SELECT chunk_id FROM embed_pending WHERE chunk_id > ? ORDER BY chunk_id LIMIT ?",
            (after, limit),
        )
        return [row[0] for row in rows]

    def pending_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM embed_pending").fetchone()[0])

    def note_pending_error(self, ids: Sequence[int], error: str) -> None:
        self.conn.executemany(
            "UPDATE embed_pending SET attempts = attempts + 1, last_error = ? WHERE chunk_id = ?",
            [(error, i) for i in ids],
        )

    # ---- withheld from a remote embedder (never-send files) -----------------------------------

    def withhold(self, ids: Sequence[int]) -> None:
        """Take ``ids`` off the pending list without a vector: their files may not be sent."""
        rows = [(i,) for i in ids]
        self.conn.executemany("INSERT OR IGNORE INTO embed_withheld (chunk_id) VALUES (?)", rows)
        self.conn.executemany("DELETE FROM embed_pending WHERE chunk_id = ?", rows)

    def release_withheld(self, allowed: Callable[[str], bool]) -> int:
        """Put back on the pending list the withheld chunks whose file ``allowed`` now (the
        never-send patterns changed); how many."""
        rows = self.conn.execute(
            "SELECT w.chunk_id, c.path FROM embed_withheld w JOIN chunk c ON c.id = w.chunk_id"
        ).fetchall()
        back = [(chunk_id,) for chunk_id, path in rows if allowed(path)]
        self.conn.executemany("DELETE FROM embed_withheld WHERE chunk_id = ?", back)
        self.conn.executemany("INSERT OR IGNORE INTO embed_pending (chunk_id) VALUES (?)", back)
        return len(back)

    def withheld(self) -> tuple[int, list[str]]:
        """How many chunks are withheld, and from which files (0 and none on an index made
        before the table existed)."""
        exists = self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'embed_withheld'"
        ).fetchone()
        if exists is None:
            return 0, []
        count = int(self.conn.execute("SELECT count(*) FROM embed_withheld").fetchone()[0])
        paths = [row[0] for row in self.conn.execute(
            "SELECT DISTINCT c.path FROM embed_withheld w JOIN chunk c ON c.id = w.chunk_id "
            "ORDER BY c.path"
        )]
        return count, paths

    def cached(self, model: str, text_hashes: Sequence[str]) -> dict[str, bytes]:
        out: dict[str, bytes] = {}
        unique = list(dict.fromkeys(text_hashes))
        for start in range(0, len(unique), 500):
            batch = unique[start : start + 500]
            marks = ",".join("?" * len(batch))
            for text_hash, blob in self.conn.execute(
                f"SELECT text_hash, vector FROM {self._cache} "
                f"WHERE model = ? AND text_hash IN ({marks})",
                (model, *batch),
            ):
                out[text_hash] = bytes(blob)
        return out

    def cache_size(self, model: str | None = None) -> int:
        if model is None:
            return int(self.conn.execute(f"SELECT count(*) FROM {self._cache}").fetchone()[0])
        row = self.conn.execute(f"SELECT count(*) FROM {self._cache} WHERE model = ?", (model,))
        return int(row.fetchone()[0])

    def save_vectors(self, model: str, items: Sequence[tuple[int, str, bytes]],
                     declarations: Sequence[tuple[int, str, bytes]] = ()) -> None:
        """Store (chunk id, text hash, vector) for the current model, and the (declaration id,
        text hash, vector) of those chunks' declarations; fill the cache, and take the chunks
        off the pending list."""
        if not items:
            return
        self.conn.executemany(
            f"INSERT OR IGNORE INTO {self._cache} (model, text_hash, vector) VALUES (?, ?, ?)",
            [(model, text_hash, blob) for _, text_hash, blob in (*items, *declarations)],
        )
        self.conn.executemany(
            "UPDATE chunk_declaration SET text_hash = ?, vector = ? WHERE id = ?",
            [(text_hash, blob, i) for i, text_hash, blob in declarations],
        )
        self.conn.executemany(
            "INSERT OR REPLACE INTO chunk_vector (chunk_id, text_hash, vector) VALUES (?, ?, ?)",
            list(items),
        )
        self.conn.executemany(
            "DELETE FROM embed_pending WHERE chunk_id = ?",
            [(chunk_id,) for chunk_id, _, _ in items],
        )
        self._bump_version()

    def all_vectors(self) -> tuple[list[int], list[bytes]]:
        ids: list[int] = []
        blobs: list[bytes] = []
        for chunk_id, blob in self.conn.execute(
            "SELECT chunk_id, vector FROM chunk_vector ORDER BY chunk_id"
        ):
            ids.append(int(chunk_id))
            blobs.append(bytes(blob))
        return ids, blobs

    def all_declaration_vectors(self) -> tuple[list[int], list[bytes]]:
        """(declaration id, vector) of every embedded declaration; none in an index made
        before them and opened read-only."""
        ids: list[int] = []
        blobs: list[bytes] = []
        if not self._has_table("chunk_declaration"):
            return ids, blobs
        for declaration_id, blob in self.conn.execute(
            "SELECT id, vector FROM chunk_declaration WHERE vector IS NOT NULL ORDER BY id"
        ):
            ids.append(int(declaration_id))
            blobs.append(bytes(blob))
        return ids, blobs

    def _has_table(self, name: str) -> bool:
        return self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)
        ).fetchone() is not None

    def vector_count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM chunk_vector").fetchone()[0])

    def has_vectors(self) -> bool:
        """Whether any chunk has a vector: one row read, where ``vector_count`` reads every page
        of the table (~100 ms at 44k vectors on a busy machine, on every search)."""
        return self.conn.execute("SELECT 1 FROM chunk_vector LIMIT 1").fetchone() is not None


def fts_columns(chunk: Chunk) -> tuple[str, str, str]:
    """The full-text columns of a chunk: its text, symbols and path with identifiers split."""
    return (
        index_text(chunk.text),
        index_text(" ".join((*chunk.symbols, *chunk.enclosing))),
        index_text(chunk.path),
    )


def _row_to_chunk(row: Sequence[object]) -> Chunk:
    (
        _,
        path,
        start,
        end,
        language,
        symbol,
        kind,
        symbols,
        enclosing,
        signature,
        doc,
        header,
        token_count,
        content_hash,
        text,
    ) = row
    return Chunk(
        path=str(path),
        language=str(language),
        start_line=int(start),  # type: ignore[call-overload]
        end_line=int(end),  # type: ignore[call-overload]
        text=str(text),
        token_count=int(token_count),  # type: ignore[call-overload]
        symbols=tuple(json.loads(str(symbols))),
        symbol=str(symbol),
        kind=str(kind),
        enclosing=tuple(json.loads(str(enclosing))),
        signature=str(signature),
        doc=str(doc),
        header=str(header),
        content_hash=str(content_hash),
    )
