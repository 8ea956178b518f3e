"""Which chunk store an index's retrieval side uses: the one over the same database as its
graph store (SQLite beside the graph, or the shared PostgreSQL store)."""

from __future__ import annotations

from typing import Any


def chunk_store_for(store: Any, cache_schema: str = "main") -> Any:
    """The retrieval store over the same database as the graph ``store``."""
    if hasattr(store, "url"):
        # psycopg is imported only for a PostgreSQL store
        from knoxidx.retrieval.pg_store import PgChunkStore

        return PgChunkStore(store.conn, store.repo)
    from knoxidx.retrieval.store import ChunkStore

    return ChunkStore(store.conn, cache_schema)
