"""Retrieval's SQL over chunks: the chunks of each file, their FTS5 index, and the names and
declarations of the definitions they hold. The tables are ``store_schema``'s; the vectors, the
embedding cache and the pending work are ``embed_store``'s, the lexical and name searches
``lexical_rows``', both of which :class:`ChunkStore` extends.

Methods never commit: the caller owns the transaction (``transaction`` wraps a unit of work;
``commit`` is there for long runs that save progress batch by batch).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import NamedTuple

from knoxidx.core.errors import decoding_stored
from knoxidx.retrieval.chunker import Chunk, DefinitionLike
from knoxidx.retrieval.embed_store import EmbeddingRows
from knoxidx.retrieval.lexical_rows import ChunkFilter, LexicalRows
from knoxidx.retrieval.names import declaration_texts, name_rows
from knoxidx.retrieval.store_schema import NAMES_PER_CHUNK, create_schema, has_schema, schema_name
from knoxidx.retrieval.terms import index_text

# chunks whose declarations one query reads (one variable each, well under SQLite's limit)
_DECLARATION_BATCH = 200
_CHUNK_COLUMNS = (
    "id, path, start_line, end_line, language, symbol, kind, symbols, enclosing, signature, doc, "
    "header, token_count, content_hash, text"
)


@dataclass(frozen=True, slots=True)
class StoredChunk:
    id: int
    chunk: Chunk


class ChunkRows(NamedTuple):
    """What the store writes beside a chunk's own row, made where the chunk is made (a parse
    worker), so that the one writer only writes: :func:`chunk_rows`."""

    fts: tuple[str, str, str]  # fts_columns
    names: list[tuple[str, str]]  # names.name_rows
    declarations: list[str]  # names.declaration_texts


@dataclass(frozen=True, slots=True)
class FileUpdate:
    added: int  # new chunks, now pending
    kept: int  # unchanged content: vector kept
    removed: int


class ChunkStore(EmbeddingRows, LexicalRows):
    def __init__(self, conn: sqlite3.Connection, cache_schema: str = "main") -> None:
        self.conn = conn
        self._cache = f"{schema_name(cache_schema)}.embed_cache"

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
        rows: Sequence[ChunkRows] | None = None,
    ) -> FileUpdate:
        """Make ``path``'s chunks exactly ``chunks``; rows whose content hash survives keep their
        id and vector (only their position is updated); the rest become pending. ``rows``: the
        chunks' :func:`chunk_rows`, when a worker already made them."""
        old: dict[str, list[int]] = {}
        for chunk_id, content_hash in self.conn.execute(
            "SELECT id, content_hash FROM chunk WHERE path = ? ORDER BY id", (path,)
        ):
            old.setdefault(content_hash, []).append(chunk_id)
        if not old:  # a new file (every file of a first build): written in bulk
            self._insert_all(chunks, rows)
            return FileUpdate(added=len(chunks), kept=0, removed=0)
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
                self._insert_names(chunk_id, chunk, rows[n].names if rows is not None else None)
                texts = rows[n].declarations if rows is not None else declaration_texts(chunk)
                if self._declarations_changed(chunk_id, texts):
                    # embedded again: the chunk's own text comes from the cache
                    self.conn.execute(
                        "INSERT OR IGNORE INTO embed_pending (chunk_id) VALUES (?)", (chunk_id,))
                kept += 1
            else:
                self._insert_all([chunk], [rows[n]] if rows is not None else None)
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

    def places(self, ids: Iterable[int]) -> dict[int, tuple[str, int, int]]:
        """Each chunk's (path, start line, end line): what orders chunks tied on a score."""
        out: dict[int, tuple[str, int, int]] = {}
        id_list = list(ids)
        for start in range(0, len(id_list), 500):
            batch = id_list[start : start + 500]
            marks = ",".join("?" * len(batch))
            for chunk_id, path, start_line, end_line in self.conn.execute(
                f"SELECT id, path, start_line, end_line FROM chunk WHERE id IN ({marks})", batch
            ):
                out[chunk_id] = (path, start_line, end_line)
        return out

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

    def _insert_all(self, chunks: Sequence[Chunk], rows: Sequence[ChunkRows] | None) -> None:
        """Insert ``chunks`` as new, pending chunks, one statement per table. Their ids are the
        ones SQLite would give them one by one (the largest id + 1, ...: no AUTOINCREMENT),
        numbered here so that the rows of every table go in together."""
        if not chunks:
            return
        first = int(self.conn.execute("SELECT coalesce(max(id), 0) + 1 FROM chunk").fetchone()[0])
        made = rows if rows is not None else [chunk_rows(c) for c in chunks]
        ids = range(first, first + len(chunks))
        self.conn.executemany(
            "INSERT INTO chunk (id, path, start_line, end_line, language, symbol, kind, "
            "symbols, enclosing, signature, doc, header, token_count, content_hash, text) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(chunk_id, c.path, c.start_line, c.end_line, c.language, c.symbol, c.kind,
              json.dumps(c.symbols), json.dumps(c.enclosing), c.signature, c.doc, c.header,
              c.token_count, c.content_hash, c.text) for chunk_id, c in zip(ids, chunks, strict=True)])
        self.conn.executemany(
            "INSERT INTO chunk_fts (rowid, body, symbols, path) VALUES (?, ?, ?, ?)",
            [(chunk_id, *m.fts) for chunk_id, m in zip(ids, made, strict=True)])
        self.conn.executemany("INSERT INTO chunk_name (rowid, name, scope) VALUES (?, ?, ?)",
                              [(chunk_id * NAMES_PER_CHUNK + n, parts, scope)
                               for chunk_id, m in zip(ids, made, strict=True)
                               for n, (parts, scope) in enumerate(m.names[:NAMES_PER_CHUNK])])
        self.conn.executemany("INSERT INTO chunk_declaration (id, text) VALUES (?, ?)",
                              [(chunk_id * NAMES_PER_CHUNK + n, text)
                               for chunk_id, m in zip(ids, made, strict=True)
                               for n, text in enumerate(m.declarations[:NAMES_PER_CHUNK])])
        self.conn.executemany("INSERT INTO embed_pending (chunk_id) VALUES (?)",
                              [(chunk_id,) for chunk_id in ids])

    def _insert_names(self, chunk_id: int, chunk: Chunk,
                      names: list[tuple[str, str]] | None = None) -> int:
        base = chunk_id * NAMES_PER_CHUNK
        rows = [(base + n, parts, scope) for n, (parts, scope)
                in enumerate((name_rows(chunk) if names is None else names)[:NAMES_PER_CHUNK])]
        self.conn.executemany("INSERT INTO chunk_name (rowid, name, scope) VALUES (?, ?, ?)", rows)
        return len(rows)

    def _insert_declarations(self, chunk_id: int, texts: list[str]) -> None:
        base = chunk_id * NAMES_PER_CHUNK
        self.conn.executemany(
            "INSERT INTO chunk_declaration (id, text) VALUES (?, ?)",
            [(base + n, text) for n, text in enumerate(texts[:NAMES_PER_CHUNK])])

    def _declarations_changed(self, chunk_id: int, texts: list[str]) -> bool:
        """Write a kept chunk's declarations again if their texts changed (a renamed class
        holding an unchanged method, a chunker version that adds them); whether they did."""
        base = chunk_id * NAMES_PER_CHUNK
        old = [row[0] for row in self.conn.execute(
            "SELECT text FROM chunk_declaration WHERE id >= ? AND id < ? ORDER BY id",
            (base, base + NAMES_PER_CHUNK))]
        if old == texts[:NAMES_PER_CHUNK]:
            return False
        self._delete_declarations([chunk_id])
        self._insert_declarations(chunk_id, texts)
        self._bump_version()  # a kept matrix copy (vectors.load_matrix) still has the old ones
        return True

    def _delete_declarations(self, ids: Sequence[int]) -> None:
        self.conn.executemany(
            "DELETE FROM chunk_declaration WHERE id >= ? AND id < ?",
            [(i * NAMES_PER_CHUNK, (i + 1) * NAMES_PER_CHUNK) for i in ids],
        )

    def declarations(self, chunk_ids: Sequence[int]) -> dict[int, list[tuple[int, str]]]:
        """(declaration id, text) of each chunk's declarations, in order. One query per
        ``_DECLARATION_BATCH`` chunks (a range of ids each): the rerank asks this of each
        search's 60 chunks."""
        out: dict[int, list[tuple[int, str]]] = {}
        wanted = list(dict.fromkeys(chunk_ids))
        for start in range(0, len(wanted), _DECLARATION_BATCH):
            batch = wanted[start : start + _DECLARATION_BATCH]
            firsts = ",".join(["(?)"] * len(batch))
            for d, t in self.conn.execute(
                    f"WITH wanted(first) AS (VALUES {firsts}) SELECT d.id, d.text FROM wanted"
                    " JOIN chunk_declaration d ON d.id >= wanted.first AND d.id < wanted.first + ?"
                    " ORDER BY d.id", [i * NAMES_PER_CHUNK for i in batch] + [NAMES_PER_CHUNK]):
                out.setdefault(int(d) // NAMES_PER_CHUNK, []).append((int(d), str(t)))
        return {i: out[i] for i in wanted if i in out}  # in the order asked

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

def chunk_rows(chunk: Chunk) -> ChunkRows:
    return ChunkRows(fts_columns(chunk), name_rows(chunk), declaration_texts(chunk))


def fts_columns(chunk: Chunk) -> tuple[str, str, str]:
    """The full-text columns of a chunk: its text, symbols and path with identifiers split."""
    return (
        index_text(chunk.text),
        index_text(" ".join((*chunk.symbols, *chunk.enclosing))),
        index_text(chunk.path),
    )


def _row_to_chunk(row: Sequence[object]) -> Chunk:
    with decoding_stored("a stored chunk"):
        return _decode_chunk(row)


def _decode_chunk(row: Sequence[object]) -> Chunk:
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
