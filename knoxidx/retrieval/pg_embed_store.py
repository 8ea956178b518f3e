"""Retrieval's vectors in PostgreSQL: :class:`PgEmbeddingRows` is the part of
:class:`~knoxidx.retrieval.pg_store.PgChunkStore` that keeps the model and vector version, the
chunks' and declarations' vectors (pgvector, an HNSW index per dimension), the shared embedding
cache, and the pending and withheld chunks: the methods of
:class:`~knoxidx.retrieval.embed_store.EmbeddingRows`, for one repository of the shared store."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from knoxidx.retrieval.store_schema import NAMES_PER_CHUNK


class PgEmbeddingRows:
    conn: Any
    repo: str | None  # None: every repository of the store (reads only)

    @property
    def _repo(self) -> str:
        if self.repo is None:
            raise RuntimeError("writing chunks needs one repository")
        return self.repo

    def _scope(self, alias: str = "c") -> tuple[str, list[Any]]:
        return ("TRUE", []) if self.repo is None else (f"{alias}.repo = %s", [self.repo])

    def chunk_count(self) -> int:
        scope, args = self._scope()
        return int(self.conn.execute(
            f"SELECT count(*) FROM knoxidx.chunk c WHERE {scope}", args).fetchone()[0])

    # ---- vectors, cache, pending -------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self.conn.execute(
            "SELECT value FROM knoxidx.embed_meta WHERE repo = %s AND key = %s",
            (self.repo or "", key)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute(
            "INSERT INTO knoxidx.embed_meta VALUES (%s, %s, %s) ON CONFLICT (repo, key)"
            " DO UPDATE SET value = excluded.value", (self._repo, key, value))

    def recorded_model(self) -> str | None:
        if self.repo is None:  # every repository: the model they agree on, if they do
            models = [r[0] for r in self.conn.execute(
                "SELECT DISTINCT value FROM knoxidx.embed_meta WHERE key = 'model'")]
            return models[0] if len(models) == 1 else None
        return self.meta("model")

    def record_model(self, model_id: str, dimension: int) -> None:
        self.set_meta("model", model_id)
        self.set_meta("dimension", str(dimension))
        ensure_vector_index(self.conn, int(dimension))

    def vectors_version(self) -> int:
        return int(self.meta("vectors_version") or 0)

    def _bump_version(self) -> None:
        self.set_meta("vectors_version", str(self.vectors_version() + 1))

    def drop_vectors(self) -> int:
        count = self.chunk_count()
        self.conn.execute("DELETE FROM knoxidx.chunk_vector WHERE repo = %s", (self._repo,))
        self.conn.execute(
            "UPDATE knoxidx.chunk_declaration SET text_hash = '', dim = NULL, embedding = NULL"
            " WHERE repo = %s", (self._repo,))
        self.conn.execute(
            "INSERT INTO knoxidx.embed_pending (chunk_id, repo) SELECT id, repo FROM"
            " knoxidx.chunk WHERE repo = %s ON CONFLICT DO NOTHING", (self._repo,))
        self._bump_version()
        return count

    # ---- other models' vectors, kept for a switch back (SQLite: ``EmbeddingRows``) ---------

    def shelve_vectors(self, model: str) -> int:
        """Keep this repository's current vectors aside as ``model``'s; how many chunk ones."""
        import numpy as np

        repo = self._repo
        for table in ("embed_shelf", "embed_shelf_declaration"):
            self.conn.execute(f"DELETE FROM knoxidx.{table} WHERE repo = %s AND model = %s",
                              (repo, model))
        chunks = [
            (model, chunk_id, repo, content_hash, text_hash,
             np.asarray(json.loads(text), dtype="<f4").tobytes())
            for chunk_id, content_hash, text_hash, text in self.conn.execute(
                "SELECT v.chunk_id, c.content_hash, v.text_hash, v.embedding::text"
                " FROM knoxidx.chunk_vector v JOIN knoxidx.chunk c ON c.id = v.chunk_id"
                " WHERE v.repo = %s", (repo,))
        ]
        declarations = [
            (model, chunk_id, n, repo, text_hash,
             np.asarray(json.loads(text), dtype="<f4").tobytes())
            for chunk_id, n, text_hash, text in self.conn.execute(
                "SELECT chunk_id, n, text_hash, embedding::text FROM knoxidx.chunk_declaration"
                " WHERE repo = %s AND embedding IS NOT NULL", (repo,))
        ]
        with self.conn.cursor() as cur:
            cur.executemany("INSERT INTO knoxidx.embed_shelf VALUES (%s, %s, %s, %s, %s, %s)",
                            chunks)
            cur.executemany(
                "INSERT INTO knoxidx.embed_shelf_declaration VALUES (%s, %s, %s, %s, %s, %s)",
                declarations)
        return len(chunks)

    def restore_vectors(self, model: str, text_hash: Any) -> int:
        """Make ``model``'s kept vectors current where their chunk is unchanged (declarations:
        where their text hashes the same); how many chunks left the pending list."""
        import numpy as np

        repo = self._repo
        chunks = [
            (chunk_id, repo, hash_, len(blob) // 4,
             vector_literal(np.frombuffer(bytes(blob), dtype="<f4")))
            for chunk_id, hash_, blob in self.conn.execute(
                "SELECT s.chunk_id, s.text_hash, s.vector FROM knoxidx.embed_shelf s"
                " JOIN knoxidx.chunk c ON c.id = s.chunk_id AND c.content_hash = s.content_hash"
                " WHERE s.repo = %s AND s.model = %s", (repo, model))
        ]
        declarations = [
            (hash_, len(blob) // 4, vector_literal(np.frombuffer(bytes(blob), dtype="<f4")),
             chunk_id, n)
            for chunk_id, n, hash_, blob, text in self.conn.execute(
                "SELECT s.chunk_id, s.n, s.text_hash, s.vector, d.text"
                " FROM knoxidx.embed_shelf_declaration s JOIN knoxidx.chunk_declaration d"
                " ON d.chunk_id = s.chunk_id AND d.n = s.n WHERE s.repo = %s AND s.model = %s",
                (repo, model))
            if text_hash(text) == hash_
        ]
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO knoxidx.chunk_vector VALUES (%s, %s, %s, %s, %s::vector)"
                " ON CONFLICT (chunk_id) DO UPDATE SET text_hash = excluded.text_hash,"
                " dim = excluded.dim, embedding = excluded.embedding", chunks)
            cur.executemany(
                "UPDATE knoxidx.chunk_declaration SET text_hash = %s, dim = %s,"
                " embedding = %s::vector WHERE chunk_id = %s AND n = %s", declarations)
            cur.execute(
                "DELETE FROM knoxidx.embed_pending p WHERE p.repo = %s AND p.chunk_id IN"
                " (SELECT chunk_id FROM knoxidx.chunk_vector WHERE repo = %s) AND NOT EXISTS"
                " (SELECT 1 FROM knoxidx.chunk_declaration d WHERE d.chunk_id = p.chunk_id"
                " AND d.embedding IS NULL)", (repo, repo))
            done = cur.rowcount
            for table in ("embed_shelf", "embed_shelf_declaration"):
                cur.execute(f"DELETE FROM knoxidx.{table} WHERE repo = %s AND model = %s",
                            (repo, model))
        self._bump_version()
        return int(done)

    def model_coverage(self) -> list[dict[str, object]]:
        """Each model's vectors: the current one's, then those kept for a switch back."""
        current = self.recorded_model()
        out: list[dict[str, object]] = []
        if current is not None:
            out.append({"model": current, "chunks": self.vector_count(), "current": True})
        scope, args = self._scope("s")
        for model, count in self.conn.execute(
            "SELECT s.model, count(*) FROM knoxidx.embed_shelf s JOIN knoxidx.chunk c"
            f" ON c.id = s.chunk_id AND c.content_hash = s.content_hash WHERE {scope}"
            " GROUP BY s.model ORDER BY s.model", args
        ):
            if model != current:
                out.append({"model": str(model), "chunks": int(count), "current": False})
        return out

    def pending(self, limit: int, after: int = 0) -> list[int]:
        return [r[0] for r in self.conn.execute(
            "SELECT chunk_id FROM knoxidx.embed_pending WHERE repo = %s AND chunk_id > %s"
            " ORDER BY chunk_id LIMIT %s", (self._repo, after, limit))]

    def pending_count(self) -> int:
        scope, args = self._scope("p")
        return int(self.conn.execute(
            f"SELECT count(*) FROM knoxidx.embed_pending p WHERE {scope}", args).fetchone()[0])

    def note_pending_error(self, ids: Sequence[int], error: str) -> None:
        self.conn.execute(
            "UPDATE knoxidx.embed_pending SET attempts = attempts + 1, last_error = %s"
            " WHERE chunk_id = ANY(%s)", (error, list(ids)))

    # ---- withheld from a remote embedder (never-send files) -----------------------------------

    def withhold(self, ids: Sequence[int]) -> None:
        """Take ``ids`` off the pending list without a vector: their files may not be sent."""
        if not ids:
            return
        self.conn.execute(
            "INSERT INTO knoxidx.embed_withheld (chunk_id, repo) SELECT id, repo"
            " FROM knoxidx.chunk WHERE id = ANY(%s) ON CONFLICT DO NOTHING", (list(ids),))
        self.conn.execute("DELETE FROM knoxidx.embed_pending WHERE chunk_id = ANY(%s)",
                          (list(ids),))

    def release_withheld(self, allowed: Any) -> int:
        """Put back on the pending list the withheld chunks whose file ``allowed`` now."""
        rows = self.conn.execute(
            "SELECT w.chunk_id, c.path FROM knoxidx.embed_withheld w JOIN knoxidx.chunk c"
            " ON c.id = w.chunk_id WHERE w.repo = %s", (self._repo,)).fetchall()
        back = [chunk_id for chunk_id, path in rows if allowed(path)]
        if back:
            self.conn.execute("DELETE FROM knoxidx.embed_withheld WHERE chunk_id = ANY(%s)",
                              (back,))
            self.conn.execute(
                "INSERT INTO knoxidx.embed_pending (chunk_id, repo) SELECT id, repo"
                " FROM knoxidx.chunk WHERE id = ANY(%s) ON CONFLICT DO NOTHING", (back,))
        return len(back)

    def withheld(self) -> tuple[int, list[str]]:
        """How many chunks are withheld, and from which files."""
        scope, args = self._scope("c")
        rows = self.conn.execute(
            "SELECT c.path, count(*) FROM knoxidx.embed_withheld w JOIN knoxidx.chunk c"
            f" ON c.id = w.chunk_id WHERE {scope} GROUP BY c.path ORDER BY c.path", args
        ).fetchall()
        return sum(n for _, n in rows), [path for path, _ in rows]

    def cached(self, model: str, text_hashes: Sequence[str]) -> dict[str, bytes]:
        unique = list(dict.fromkeys(text_hashes))
        return {h: bytes(b) for h, b in self.conn.execute(
            "SELECT text_hash, vector FROM knoxidx.embed_cache WHERE model = %s"
            " AND text_hash = ANY(%s)", (model, unique))}

    def cache_size(self, model: str | None = None) -> int:
        if model is None:
            return int(self.conn.execute("SELECT count(*) FROM knoxidx.embed_cache").fetchone()[0])
        return int(self.conn.execute(
            "SELECT count(*) FROM knoxidx.embed_cache WHERE model = %s", (model,)).fetchone()[0])

    def declarations(self, chunk_ids: Sequence[int]) -> dict[int, list[tuple[int, str]]]:
        """(declaration id, text) of each chunk's declarations, in order; a declaration's id
        is chunk id x NAMES_PER_CHUNK + n, as in SQLite."""
        out: dict[int, list[tuple[int, str]]] = {}
        for chunk_id, n, text in self.conn.execute(
                "SELECT chunk_id, n, text FROM knoxidx.chunk_declaration"
                " WHERE chunk_id = ANY(%s) ORDER BY chunk_id, n", (list(chunk_ids),)):
            out.setdefault(int(chunk_id), []).append(
                (int(chunk_id) * NAMES_PER_CHUNK + int(n), str(text)))
        return out

    def save_vectors(self, model: str, items: Sequence[tuple[int, str, bytes]],
                     declarations: Sequence[tuple[int, str, bytes]] = ()) -> None:
        import numpy as np

        if not items:
            return
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO knoxidx.embed_cache VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                [(model, h, blob) for _, h, blob in (*items, *declarations)])
            if declarations:
                rows = []
                for declaration_id, text_hash, blob in declarations:
                    vector = np.frombuffer(blob, dtype="<f4")
                    literal = vector_literal(vector)
                    chunk_id, n = divmod(declaration_id, NAMES_PER_CHUNK)
                    rows.append((text_hash, int(vector.shape[0]), literal, chunk_id, n))
                cur.executemany(
                    "UPDATE knoxidx.chunk_declaration SET text_hash = %s, dim = %s,"
                    " embedding = %s::vector WHERE chunk_id = %s AND n = %s", rows)
            vector_rows = []
            for chunk_id, text_hash, blob in items:
                vector = np.frombuffer(blob, dtype="<f4")
                literal = vector_literal(vector)
                vector_rows.append((chunk_id, self._repo, text_hash, int(vector.shape[0]),
                                    literal))
            cur.executemany(
                "INSERT INTO knoxidx.chunk_vector VALUES (%s, %s, %s, %s, %s::vector)"
                " ON CONFLICT (chunk_id) DO UPDATE SET text_hash = excluded.text_hash,"
                " dim = excluded.dim, embedding = excluded.embedding", vector_rows)
            cur.execute("DELETE FROM knoxidx.embed_pending WHERE chunk_id = ANY(%s)",
                        ([i for i, _, _ in items],))
        self._bump_version()

    def all_vectors(self) -> tuple[list[int], list[bytes]]:
        import numpy as np

        scope, args = self._scope("v")
        ids: list[int] = []
        blobs: list[bytes] = []
        for chunk_id, text in self.conn.execute(
            f"SELECT chunk_id, embedding::text FROM knoxidx.chunk_vector v WHERE {scope}"
            " ORDER BY chunk_id", args,
        ):
            ids.append(int(chunk_id))
            blobs.append(np.asarray(json.loads(text), dtype="<f4").tobytes())
        return ids, blobs

    def all_declaration_vectors(self) -> tuple[list[int], list[bytes]]:
        import numpy as np

        scope, args = self._scope("d")
        ids: list[int] = []
        blobs: list[bytes] = []
        for chunk_id, n, text in self.conn.execute(
            "SELECT chunk_id, n, embedding::text FROM knoxidx.chunk_declaration d"
            f" WHERE embedding IS NOT NULL AND {scope} ORDER BY chunk_id, n", args,
        ):
            ids.append(int(chunk_id) * NAMES_PER_CHUNK + int(n))
            blobs.append(np.asarray(json.loads(text), dtype="<f4").tobytes())
        return ids, blobs

    def vector_count(self) -> int:
        scope, args = self._scope("v")
        return int(self.conn.execute(
            f"SELECT count(*) FROM knoxidx.chunk_vector v WHERE {scope}", args).fetchone()[0])

    def has_vectors(self) -> bool:
        scope, args = self._scope("v")
        return self.conn.execute(
            f"SELECT 1 FROM knoxidx.chunk_vector v WHERE {scope} LIMIT 1", args
        ).fetchone() is not None


def ensure_vector_index(conn: Any, dim: int) -> None:
    """The HNSW index for vectors of ``dim`` dimensions. Made by the first writer that embeds
    with such a model, or ahead by ``knoxidx store init --vector-dim`` (a writer role that does
    not own the table cannot create it)."""
    for table in ("chunk_vector", "chunk_declaration"):
        name = f"{table}_hnsw_{int(dim)}"
        if conn.execute("SELECT 1 FROM pg_indexes WHERE schemaname = 'knoxidx'"
                        " AND indexname = %s", (name,)).fetchone():
            continue
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {name} ON knoxidx.{table} USING hnsw"
            f" ((embedding::vector({int(dim)})) vector_cosine_ops) WHERE dim = {int(dim)}"
        )


def vector_literal(vector: Any) -> str:
    """A float32 vector as a pgvector literal, every float's value kept."""
    return "[" + ",".join(f"{x:.9g}" for x in vector.tolist()) + "]"
