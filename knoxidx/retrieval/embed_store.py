"""The embedding side of the chunk store's SQL: which model the vectors belong to and their
version, each chunk's and declaration's vector, the embedding cache, and the chunks still
pending or withheld from a remote embedder (tables: ``store_schema``).

Methods never commit: the caller owns the transaction (see ``ChunkStore.transaction``).
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from knoxidx.core.errors import decoding_stored
from knoxidx.retrieval.store_schema import NAMES_PER_CHUNK


class EmbeddingRows:
    """The embedding tables of one connection (:class:`~knoxidx.retrieval.store.ChunkStore`
    is one, with the chunks)."""

    conn: sqlite3.Connection
    _cache: str  # the embedding cache's table, with its schema (it may be ATTACHed)

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
        with decoding_stored("the vectors' version"):
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

    # ---- other models' vectors, kept for a switch back ---------------------------------------

    def shelve_vectors(self, model: str) -> int:
        """Keep the current vectors aside as ``model``'s (replacing what was kept for it), with
        the content hash of each chunk they were made from; how many chunk vectors."""
        self.conn.execute("DELETE FROM embed_shelf WHERE model = ?", (model,))
        self.conn.execute("DELETE FROM embed_shelf_declaration WHERE model = ?", (model,))
        self.conn.execute(
            "INSERT INTO embed_shelf (model, chunk_id, content_hash, text_hash, vector) "
            "SELECT ?, v.chunk_id, c.content_hash, v.text_hash, v.vector "
            "FROM chunk_vector v JOIN chunk c ON c.id = v.chunk_id", (model,))
        self.conn.execute(
            "INSERT INTO embed_shelf_declaration (model, id, text_hash, vector) "
            "SELECT ?, id, text_hash, vector FROM chunk_declaration WHERE vector IS NOT NULL",
            (model,))
        row = self.conn.execute("SELECT count(*) FROM embed_shelf WHERE model = ?", (model,))
        return int(row.fetchone()[0])

    def restore_vectors(self, model: str, text_hash: Callable[[str], str]) -> int:
        """Make ``model``'s kept vectors the current ones where they still fit: a chunk's
        whose content hash is unchanged, a declaration's whose text hashes the same
        (``text_hash``). A chunk leaves the pending list once it and all its declarations
        have a vector again; the rest are embedded as usual. How many chunks left it."""
        self.conn.execute(
            "INSERT OR REPLACE INTO chunk_vector (chunk_id, text_hash, vector) "
            "SELECT s.chunk_id, s.text_hash, s.vector FROM embed_shelf s "
            "JOIN chunk c ON c.id = s.chunk_id AND c.content_hash = s.content_hash "
            "WHERE s.model = ?", (model,))
        declarations = [
            (hash_, blob, declaration_id)
            for declaration_id, hash_, blob, text in self.conn.execute(
                "SELECT s.id, s.text_hash, s.vector, d.text FROM embed_shelf_declaration s "
                "JOIN chunk_declaration d ON d.id = s.id WHERE s.model = ?", (model,))
            if text_hash(text) == hash_
        ]
        self.conn.executemany(
            "UPDATE chunk_declaration SET text_hash = ?, vector = ? WHERE id = ?", declarations)
        # integer division: a declaration's id is its chunk's id x NAMES_PER_CHUNK + n
        done = self.conn.execute(
            "DELETE FROM embed_pending WHERE chunk_id IN (SELECT chunk_id FROM chunk_vector) "
            "AND chunk_id NOT IN (SELECT id / ? FROM chunk_declaration WHERE vector IS NULL)",
            (NAMES_PER_CHUNK,)).rowcount
        self.conn.execute("DELETE FROM embed_shelf WHERE model = ?", (model,))
        self.conn.execute("DELETE FROM embed_shelf_declaration WHERE model = ?", (model,))
        self._bump_version()
        return int(done)

    def model_coverage(self) -> list[dict[str, object]]:
        """Each model's vectors in this index: the current one's, then those kept for a switch
        back (counting only chunks still as they were embedded), as ``model``, ``chunks``
        (embedded), ``current``."""
        current = self.recorded_model()
        out: list[dict[str, object]] = []
        if current is not None:
            out.append({"model": current, "chunks": self.vector_count(), "current": True})
        if not self._has_table("embed_shelf"):  # an index from before, opened read-only
            return out
        for model, count in self.conn.execute(
            "SELECT s.model, count(*) FROM embed_shelf s JOIN chunk c ON c.id = s.chunk_id "
            "AND c.content_hash = s.content_hash GROUP BY s.model ORDER BY s.model"
        ):
            if model != current:
                out.append({"model": str(model), "chunks": int(count), "current": False})
        return out

    def pending(self, limit: int, after: int = 0) -> list[int]:
        rows = self.conn.execute(
            "SELECT chunk_id FROM embed_pending WHERE chunk_id > ? ORDER BY chunk_id LIMIT ?",
            (after, limit),
        )
        return [row[0] for row in rows]

    def chunk_count(self) -> int:
        """How many chunks there are (each embedded, pending or withheld)."""
        return int(self.conn.execute("SELECT count(*) FROM chunk").fetchone()[0])

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
