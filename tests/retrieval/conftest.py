from __future__ import annotations

import sqlite3
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
import xxhash

sys.path.insert(0, str(Path(__file__).parent))

from knoxidx.retrieval.chunker import Chunk  # noqa: E402
from knoxidx.retrieval.embedders import LocalEmbedder, full_view  # noqa: E402
from knoxidx.retrieval.store import ChunkStore, create_schema  # noqa: E402
from knoxidx.retrieval.terms import terms  # noqa: E402

SITE_PACKAGES = Path(np.__file__).resolve().parent.parent


class HashEmbedder:
    """Deterministic bag-of-words vectors: fast, and similar texts get similar vectors."""

    dimension = 64

    def __init__(self, model_id: str = "test/hash") -> None:
        self.model_id = model_id
        self.calls: list[list[str]] = []

    def document_text(self, chunk: Chunk) -> str:
        return full_view(chunk)

    def _vector(self, text: str) -> np.ndarray:
        v = np.zeros(self.dimension, dtype=np.float32)
        for term in terms(text):
            v[xxhash.xxh32_intdigest(term.encode()) % self.dimension] += 1.0
        n = np.linalg.norm(v)
        return v / n if n else v + 1.0 / np.sqrt(self.dimension)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dimension))

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)


@pytest.fixture
def conn() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:")
    create_schema(connection)
    yield connection
    connection.close()


@pytest.fixture
def store(conn: sqlite3.Connection) -> ChunkStore:
    return ChunkStore(conn)


@pytest.fixture(scope="session")
def local_embedder() -> LocalEmbedder:
    embedder = LocalEmbedder()
    embedder.model  # load once for the whole session
    return embedder
