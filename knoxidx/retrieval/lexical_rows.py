"""The searches the chunk store answers in SQL: lexical (FTS5 BM25 over the chunks' text,
symbols and path) and by definition name (BM25 over stemmed name parts), each optionally
restricted by a :class:`ChunkFilter`; and the document frequencies the rerank weighs words by.
:class:`~knoxidx.retrieval.store.ChunkStore` extends :class:`LexicalRows`."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from knoxidx.retrieval.store_schema import NAMES_PER_CHUNK

_FTS_WEIGHTS = (1.0, 4.0, 2.0)  # body, symbols, path


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


class LexicalRows:
    """The searches of one connection's chunk tables."""

    conn: sqlite3.Connection
    chunk_count: Callable[[], int]  # EmbeddingRows's, beside this in ChunkStore

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
