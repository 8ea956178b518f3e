"""What every embedder is: a model id, a dimension, the text it embeds for a chunk, and vectors.

``model_id`` names the model *and* the view of the chunk it embeds: an index records it, and a
different id means every vector is re-made.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from knoxidx.retrieval.chunker import Chunk

if TYPE_CHECKING:
    import numpy as np


class Embedder(Protocol):
    model_id: str
    dimension: int

    def document_text(self, chunk: Chunk) -> str:
        """What is embedded for ``chunk`` (its cache key is this text's hash)."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 rows, one per text."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """One unit-length float32 vector."""
        ...
