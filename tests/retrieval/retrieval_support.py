"""Helpers shared by the retrieval tests (a unique module name: pytest puts test folders on
sys.path, and a second ``conftest`` elsewhere in tests/ must not shadow these)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import xxhash

from knoxidx.retrieval.chunker import Chunk
from knoxidx.retrieval.terms import terms
from knoxidx.retrieval.text_views import full_view

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
        return (
            np.stack([self._vector(t) for t in texts]) if texts else np.zeros((0, self.dimension))
        )

    def embed_query(self, text: str) -> np.ndarray:
        return self._vector(text)
