"""Retrieval's tables in PostgreSQL: :class:`~knoxidx.retrieval.store.ChunkStore`'s methods for
one repository of the shared store.

Lexical search is PostgreSQL full-text search over the same identifier-split text FTS5 gets
(``fts_columns``), one ``tsvector`` per chunk with the symbols weighted A, the path B and the
body D (FTS5's BM25 weights them 4 : 2 : 1), ranked by ``ts_rank``. Vectors are pgvector
``vector`` values searched by cosine distance through an HNSW index, one partial index per
dimension (the model decides it), so nothing loads every vector into memory. The embedding
cache is shared by every repository: the same text embedded by the same model is one row.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from knoxidx.core.path_glob import glob_regex
from knoxidx.retrieval.chunker import Chunk
from knoxidx.retrieval.lexical_rows import ChunkFilter
from knoxidx.retrieval.names import declaration_texts, name_rows
from knoxidx.retrieval.pg_embed_store import PgEmbeddingRows, vector_literal
from knoxidx.retrieval.store import (
    _CHUNK_COLUMNS,
    ChunkRows,
    FileUpdate,
    StoredChunk,
    _row_to_chunk,
    fts_columns,
)
from knoxidx.retrieval.store_schema import NAMES_PER_CHUNK

# ts_rank's weights, in {D, C, B, A} order: body D, path B, symbols A
_RANK_WEIGHTS = "{0.25, 0, 0.5, 1.0}"
_FTS = ("setweight(to_tsvector('simple', %s), 'D') || setweight(to_tsvector('simple', %s), 'A')"
        " || setweight(to_tsvector('simple', %s), 'B')")
_INSERT_NAME = ("INSERT INTO knoxidx.chunk_name (chunk_id, n, repo, name, scope, tsv)"
                " VALUES (%s, %s, %s, %s, %s, to_tsvector('simple', %s))")
_INSERT_DECLARATION = ("INSERT INTO knoxidx.chunk_declaration (chunk_id, n, repo, text)"
                       " VALUES (%s, %s, %s, %s)")
_HNSW_EF_SEARCH = 100
_INSERT = (
    "INSERT INTO knoxidx.chunk (repo, path, start_line, end_line, language, symbol, kind,"
    " symbols, enclosing, signature, doc, header, token_count, content_hash, text, fts)"
    f" VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, {_FTS}) RETURNING id"
)


class PgChunkStore(PgEmbeddingRows):
    def __init__(self, conn: Any, repo: str | None) -> None:
        self.conn = conn
        self.repo = repo

    def has_schema(self) -> bool:
        return True  # the store's migrations create every table

    def ensure_schema(self) -> None:
        pass

    def commit(self) -> None:
        pass  # autocommit outside ``transaction``

    @contextmanager
    def transaction(self) -> Iterator[None]:
        from psycopg.pq import TransactionStatus

        if self.conn.info.transaction_status != TransactionStatus.IDLE:
            yield  # inside the caller's transaction
            return
        with self.conn.transaction():
            yield

    # ---- chunks ------------------------------------------------------------------------------

    def replace_file(self, path: str, chunks: Sequence[Chunk],
                     rows: Sequence[ChunkRows] | None = None) -> FileUpdate:
        old: dict[str, list[int]] = {}
        for chunk_id, content_hash in self.conn.execute(
            "SELECT id, content_hash FROM knoxidx.chunk WHERE repo = %s AND path = %s ORDER BY id",
            (self._repo, path),
        ):
            old.setdefault(content_hash, []).append(chunk_id)
        # batched (one round trip each, psycopg pipelines executemany): a file's chunks
        # would otherwise cost two round trips apiece
        moved: list[tuple] = []
        new: list[tuple] = []
        chunk_ids: list[int | None] = []  # each chunk's kept id, None for a new one
        for n, chunk in enumerate(chunks):
            reusable = old.get(chunk.content_hash)
            if reusable:
                chunk_ids.append(reusable.pop(0))
                moved.append((chunk.start_line, chunk.end_line, json.dumps(chunk.symbols),
                              json.dumps(chunk.enclosing), chunk.symbol, chunk.kind,
                              chunk.signature, chunk.doc, chunk_ids[-1]))
            else:
                chunk_ids.append(None)
                new.append(self._insert_params(chunk, rows[n].fts if rows is not None else None))
        with self.conn.cursor() as cur:
            if moved:
                cur.executemany(
                    "UPDATE knoxidx.chunk SET start_line = %s, end_line = %s, symbols = %s,"
                    " enclosing = %s, symbol = %s, kind = %s, signature = %s, doc = %s"
                    " WHERE id = %s", moved)
            ids: list[int] = []
            if new:
                cur.executemany(_INSERT, new, returning=True)
                ids = [row[0] for _ in cur.results() for row in cur.fetchall()]
                cur.executemany(
                    "INSERT INTO knoxidx.embed_pending (chunk_id, repo) VALUES (%s, %s)",
                    [(i, self._repo) for i in ids])
            # the names of every chunk, kept ones too (after a chunker version change every
            # file is re-chunked to write them anew)
            kept_ids = [m[-1] for m in moved]
            cur.execute("DELETE FROM knoxidx.chunk_name WHERE chunk_id = ANY(%s)", (kept_ids,))
            named = iter(ids)
            name_lists = ([r.names for r in rows] if rows is not None
                          else [name_rows(chunk) for chunk in chunks])
            named_rows = [
                (chunk_id, n, self._repo, parts, scope, parts)
                for names, chunk_id in zip(
                    name_lists, (i if i is not None else next(named) for i in chunk_ids),
                    strict=True)
                for n, (parts, scope) in enumerate(names[:NAMES_PER_CHUNK])
            ]
            if named_rows:
                cur.executemany(_INSERT_NAME, named_rows)
            # declarations: a new chunk's are written; a kept chunk's again when their texts
            # changed, and the chunk is then pending to embed them
            declared: dict[int, list[str]] = {}
            for chunk_id, text in cur.execute(
                    "SELECT chunk_id, text FROM knoxidx.chunk_declaration"
                    " WHERE chunk_id = ANY(%s) ORDER BY chunk_id, n", (kept_ids,)).fetchall():
                declared.setdefault(chunk_id, []).append(text)
            named = iter(ids)
            written: list[tuple] = []
            again: list[int] = []
            for n, (chunk, kept_id) in enumerate(zip(chunks, chunk_ids, strict=True)):
                chunk_id = kept_id if kept_id is not None else next(named)
                texts = (rows[n].declarations if rows is not None
                         else declaration_texts(chunk))[:NAMES_PER_CHUNK]
                if kept_id is not None:
                    if declared.get(chunk_id, []) == texts:
                        continue
                    again.append(chunk_id)
                written.extend((chunk_id, n, self._repo, t) for n, t in enumerate(texts))
            if again:
                cur.execute("DELETE FROM knoxidx.chunk_declaration WHERE chunk_id = ANY(%s)",
                            (again,))
                cur.executemany(
                    "INSERT INTO knoxidx.embed_pending (chunk_id, repo) VALUES (%s, %s)"
                    " ON CONFLICT DO NOTHING", [(i, self._repo) for i in again])
            if written:
                cur.executemany(_INSERT_DECLARATION, written)
        stale = [i for ids in old.values() for i in ids]
        self._delete(stale)
        return FileUpdate(added=len(new), kept=len(moved), removed=len(stale))

    def remove_file(self, path: str) -> int:
        ids = [r[0] for r in self.conn.execute(
            "SELECT id FROM knoxidx.chunk WHERE repo = %s AND path = %s", (self._repo, path))]
        self._delete(ids)
        self.conn.execute("DELETE FROM knoxidx.chunk_source WHERE repo = %s AND path = %s",
                          (self._repo, path))
        return len(ids)

    def sources(self) -> dict[str, str]:
        return dict(self.conn.execute(
            "SELECT path, hash FROM knoxidx.chunk_source WHERE repo = %s", (self._repo,)
        ).fetchall())

    def source_hash(self, path: str) -> str | None:
        scope, args = self._scope("s")
        row = self.conn.execute(
            f"SELECT s.hash FROM knoxidx.chunk_source s WHERE s.path = %s AND {scope}"
            " ORDER BY s.repo LIMIT 1", (path, *args)).fetchone()
        return str(row[0]) if row else None

    def set_source(self, path: str, content_hash: str) -> None:
        self.conn.execute(
            "INSERT INTO knoxidx.chunk_source VALUES (%s, %s, %s) ON CONFLICT (repo, path)"
            " DO UPDATE SET hash = excluded.hash", (self._repo, path, content_hash),
        )

    def forget_sources(self) -> None:
        self.conn.execute("DELETE FROM knoxidx.chunk_source WHERE repo = %s", (self._repo,))

    def paths(self) -> list[str]:
        scope, args = self._scope()
        return [r[0] for r in self.conn.execute(
            f'SELECT path FROM knoxidx.chunk c WHERE {scope} GROUP BY path '
            'ORDER BY path COLLATE "C"',
            args)]

    def get(self, ids: Sequence[int] | Any) -> dict[int, StoredChunk]:
        id_list = list(ids)
        if not id_list:
            return {}
        return {
            row[0]: StoredChunk(row[0], _row_to_chunk(row))
            for row in self.conn.execute(
                f"SELECT {_CHUNK_COLUMNS} FROM knoxidx.chunk WHERE id = ANY(%s)", (id_list,))
        }

    def places(self, ids: Sequence[int] | Any) -> dict[int, tuple[str, int, int]]:
        """Each chunk's (path, start line, end line): what orders chunks tied on a score."""
        id_list = list(ids)
        if not id_list:
            return {}
        return {
            row[0]: (row[1], row[2], row[3])
            for row in self.conn.execute(
                "SELECT id, path, start_line, end_line FROM knoxidx.chunk WHERE id = ANY(%s)",
                (id_list,))
        }

    def repos_of(self, ids: Sequence[int]) -> dict[int, str]:
        return dict(self.conn.execute(
            "SELECT id, repo FROM knoxidx.chunk WHERE id = ANY(%s)", (list(ids),)).fetchall())

    def chunks_at(self, path: str, line: int,
                  chunk_filter: ChunkFilter | None = None) -> list[int]:
        scope, args = self._scope()
        where, params = _filter_sql(chunk_filter)
        return [r[0] for r in self.conn.execute(
            f"SELECT id FROM knoxidx.chunk c WHERE {scope} AND path = %s AND start_line <= %s"
            f" AND end_line >= %s AND {where} ORDER BY end_line - start_line, start_line",
            (*args, path, line, line, *params))]

    def chunk_ids(self, chunk_filter: ChunkFilter) -> list[int]:
        scope, args = self._scope()
        where, params = _filter_sql(chunk_filter)
        return [r[0] for r in self.conn.execute(
            f"SELECT id FROM knoxidx.chunk c WHERE {scope} AND {where}", (*args, *params))]

    def _insert_params(self, chunk: Chunk, fts: tuple[str, str, str] | None) -> tuple:
        body, symbols, path = fts or fts_columns(chunk)
        return (self._repo, chunk.path, chunk.start_line, chunk.end_line, chunk.language,
                chunk.symbol, chunk.kind, json.dumps(chunk.symbols), json.dumps(chunk.enclosing),
                chunk.signature, chunk.doc, chunk.header, chunk.token_count, chunk.content_hash,
                chunk.text, body, symbols, path)

    def _delete(self, ids: Sequence[int]) -> None:
        if not ids:
            return
        for table, column in (("chunk", "id"), ("chunk_name", "chunk_id"),
                              ("chunk_declaration", "chunk_id"),
                              ("chunk_vector", "chunk_id"), ("embed_pending", "chunk_id"),
                              ("embed_withheld", "chunk_id")):
            self.conn.execute(f"DELETE FROM knoxidx.{table} WHERE {column} = ANY(%s)",
                              (list(ids),))
        self._bump_version()

    # ---- lexical and vector search -----------------------------------------------------------

    def lexical_search(self, words: Sequence[str], limit: int,
                       chunk_filter: ChunkFilter | None = None) -> list[tuple[int, float]]:
        if not words:
            return []
        query = " | ".join("'" + w.replace("'", "''").replace("\\", "\\\\") + "'" for w in words)
        scope, args = self._scope()
        where, params = _filter_sql(chunk_filter)
        rows = self.conn.execute(
            f"SELECT c.id, ts_rank(%s, c.fts, q) AS rank FROM knoxidx.chunk c,"
            f" to_tsquery('simple', %s) q WHERE c.fts @@ q AND {scope} AND {where}"
            " ORDER BY rank DESC, c.id LIMIT %s",
            (_RANK_WEIGHTS, query, *args, *params, limit),
        )
        return [(int(i), float(r)) for i, r in rows]

    def name_search(self, stems: Sequence[str], limit: int,
                    chunk_filter: ChunkFilter | None = None) -> list[tuple[int, str, str]]:
        """Code definitions with a name part among ``stems`` (``ChunkStore.name_search``),
        ranked by ``ts_rank`` normalised by the name's length instead of BM25."""
        if not stems:
            return []
        query = " | ".join("'" + w.replace("'", "''").replace("\\", "\\\\") + "'"
                           for w in stems)
        scope, args = self._scope("n")
        where, params = _filter_sql(chunk_filter)
        rows = self.conn.execute(
            "SELECT n.chunk_id, n.name, n.scope FROM knoxidx.chunk_name n"
            " JOIN knoxidx.chunk c ON c.id = n.chunk_id, to_tsquery('simple', %s) q"
            f" WHERE n.tsv @@ q AND {scope} AND {where}"
            " ORDER BY ts_rank(n.tsv, q, 1) DESC, n.chunk_id, n.n LIMIT %s",
            (query, *args, *params, limit),
        )
        return [(int(i), str(name), str(words)) for i, name, words in rows]

    def document_frequencies(self, words: Sequence[str]) -> tuple[dict[str, int], int]:
        """In how many chunks each of ``words`` occurs, and how many chunks there are (IDF
        weights for the definition rerank): one GIN index probe per word."""
        total = self.chunk_count()
        scope, args = self._scope()
        found: dict[str, int] = {}
        for word in dict.fromkeys(words):
            term = "'" + word.replace("'", "''").replace("\\", "\\\\") + "'"
            count = self.conn.execute(
                f"SELECT count(*) FROM knoxidx.chunk c WHERE c.fts @@ to_tsquery('simple', %s)"
                f" AND {scope}", (term, *args)).fetchone()[0]
            if count:
                found[word] = int(count)
        return found, total

    def vector_search(self, query: Any, limit: int,
                      chunk_filter: ChunkFilter | None = None) -> list[tuple[int, float]]:
        """The ``limit`` chunks nearest ``query`` by cosine (pgvector HNSW), best first."""
        return self._nearest("chunk_vector", query, limit, chunk_filter)

    def declaration_search(self, query: Any, limit: int,
                           chunk_filter: ChunkFilter | None = None) -> list[tuple[int, float]]:
        """The ``limit`` chunks whose declarations are nearest ``query`` by cosine, each by its
        best (pgvector HNSW over the declarations; a few times ``limit`` of them are read)."""
        best: dict[int, float] = {}
        for chunk_id, score in self._nearest("chunk_declaration", query, limit * 8,
                                             chunk_filter):
            best.setdefault(chunk_id, score)
        return list(best.items())[:limit]

    def declaration_cosines(self, query: Any, chunk_ids: Sequence[int]
                            ) -> dict[int, list[tuple[str, float]]]:
        """(declaration text, the query's cosine with its vector) of each embedded
        declaration of the given chunks, in order."""
        literal, dim = _vector_literal(query)
        out: dict[int, list[tuple[str, float]]] = {}
        for chunk_id, text, cosine in self.conn.execute(
                f"SELECT chunk_id, text, 1 - (embedding::vector({dim}) <=> %s::vector({dim}))"
                f" FROM knoxidx.chunk_declaration WHERE chunk_id = ANY(%s) AND dim = {dim}"
                " ORDER BY chunk_id, n", (literal, list(chunk_ids))):
            out.setdefault(int(chunk_id), []).append((str(text), float(cosine)))
        return out

    def _nearest(self, table: str, query: Any, limit: int,
                 chunk_filter: ChunkFilter | None) -> list[tuple[int, float]]:
        """(chunk id, cosine) of the ``limit`` rows of ``table`` nearest ``query``, best first."""
        literal, dim = _vector_literal(query)
        scope, args = self._scope("v")
        where, params = _filter_sql(chunk_filter)
        join = " JOIN knoxidx.chunk c ON c.id = v.chunk_id" if chunk_filter else ""
        with self.conn.transaction():
            self.conn.execute(f"SET LOCAL hnsw.ef_search = {_HNSW_EF_SEARCH}")
            _iterative_scan(self.conn)
            rows = self.conn.execute(
                f"SELECT v.chunk_id, 1 - (v.embedding::vector({dim}) <=> %s::vector({dim}))"
                f" FROM knoxidx.{table} v{join} WHERE v.dim = {dim} AND {scope} AND {where}"
                f" ORDER BY v.embedding::vector({dim}) <=> %s::vector({dim}) LIMIT %s",
                (literal, *args, *params, literal, limit),
            ).fetchall()
        return [(int(i), float(s)) for i, s in rows]


def _filter_sql(chunk_filter: ChunkFilter | None) -> tuple[str, list[Any]]:
    """:meth:`ChunkFilter.where` in PostgreSQL: GLOB becomes an anchored regular expression."""
    if not chunk_filter:
        return "TRUE", []
    clauses: list[str] = []
    params: list[Any] = []
    if chunk_filter.languages:
        clauses.append("c.language = ANY(%s)")
        params.append(list(chunk_filter.languages))
    if chunk_filter.path_glob:
        glob = chunk_filter.path_glob
        if any(ch in glob for ch in "*?["):
            clauses.append("c.path ~ %s")
            params.append(glob_regex(glob))
        else:
            prefix = glob.removeprefix("./").rstrip("/")
            clauses.append("(c.path = %s OR left(c.path, %s) = %s)")
            params.extend([prefix, len(prefix) + 1, prefix + "/"])
    return " AND ".join(clauses), params


_ITERATIVE: dict[int, bool] = {}


def _iterative_scan(conn: Any) -> None:
    """pgvector 0.8+ keeps scanning the HNSW graph until a filtered query has its ``limit``
    rows; older versions return fewer. Enabled where the server has it."""
    key = id(conn)
    if _ITERATIVE.get(key) is False:
        return
    try:
        with conn.transaction():  # a savepoint: an unknown setting must not abort the caller
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
        _ITERATIVE[key] = True
    except Exception:  # noqa: BLE001  (an older pgvector: plain HNSW)
        _ITERATIVE[key] = False


def _vector_literal(query: Any) -> tuple[str, int]:
    """``query`` normalised, as a pgvector literal, and its dimension."""
    from knoxidx.retrieval.vectors import normalize

    vector = normalize(query).reshape(-1)
    return vector_literal(vector), int(vector.shape[0])
