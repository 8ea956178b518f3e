"""The retrieval side of :class:`knoxidx.index.Index`: what ``update``, ``search`` and ``embed``
call. Everything here works on the index's own connection and under its writer lock (taken by
``Index``); nothing heavy is imported until a model is needed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any

from knoxidx.retrieval.backends import select_embedder
from knoxidx.retrieval.embedder import Embedder
from knoxidx.retrieval.errors import SearchIndexMissingError
from knoxidx.retrieval.searcher import searcher_for
from knoxidx.retrieval.store import ChunkStore
from knoxidx.retrieval.store_schema import attach_cache, has_schema
from knoxidx.retrieval.stores import chunk_store_for

# The embedding cache lives in its own file beside the index, so that `knoxidx index
# --rebuild` (or a schema change that rebuilds the index) does not throw vectors away.
CACHE_FILE = "embeddings.db"
CACHE_SCHEMA = "kx_cache"
EMBED_BATCH = 32  # chunks per committed batch: what an interrupted run can lose


def refresh_retrieval(index: Any, *, jobs: int | None, progress: Any,
                      session: Any = None, budget: Any = None,
                      premade: Any = None) -> dict[str, Any]:
    """Bring chunks and full-text search up to date with the graph, in the caller's transaction
    (so a batch's graph and chunks commit together). The files to re-chunk are found by
    comparing stored content hashes, which also repairs a run killed before its chunks were
    written. ``budget`` and ``premade``: the chunks the parse workers made (see
    ``refresh_chunks``)."""
    # here, not at the top: it brings the parse workers, which a search does not need
    from knoxidx.update.chunk_refresh import refresh_chunks

    store = chunk_store_for(index.store)
    refresh = refresh_chunks(index, store, jobs=jobs, progress=progress, session=session,
                             budget=budget, premade=premade)
    return {
        "files_chunked": refresh.files_chunked,
        "files_removed": refresh.files_removed,
        "chunks": store.chunk_count(),
        "added": refresh.added,
        "kept": refresh.kept,
        "removed": refresh.removed,
        "errors": refresh.errors,
        "timings": {"chunk": round(refresh.seconds, 4)},
        "embedded": 0,
        "from_cache": 0,
        "pending": store.pending_count(),
        "seconds": round(refresh.seconds, 4),
    }


def embed_into(report: dict[str, Any], index: Any, *, progress: Any) -> None:
    """Embed the pending chunks after a refresh (committed batch by batch, so an interrupted
    run keeps what it did) and add the figures to the refresh's ``report``."""
    add_embed_figures(report, embed_pending_chunks(index, progress=progress, limit=None))


def add_embed_figures(report: dict[str, Any], done: dict[str, Any]) -> None:
    """Fold what an embedding run did (``embed_pending_chunks``'s answer) into a refresh's
    ``report``."""
    report["embedded"] = done["embedded"]
    report["from_cache"] = done["from_cache"]
    report["stopped"] = done["stopped"]
    report["withheld"] = done["withheld"]
    report["pending"] = done["pending"]
    report["timings"]["embed"] = done["seconds"]
    report["seconds"] = round(report["seconds"] + done["seconds"], 4)


def remote_embedding_refused(index: Any) -> str:
    """Why a configured remote embedder is not used now (offline mode), "" if it may be: the
    local model is then NOT used instead, since its vectors would replace the remote ones."""
    from knoxidx.core.config import EMBEDDER_ENV
    from knoxidx.retrieval.backends import is_offline
    from knoxidx.retrieval.egress import index_services

    config, _ = index_services(index)
    choice = (config.get("embedder") or os.environ.get(EMBEDDER_ENV) or "local").strip().lower()
    if choice == "voyage" and is_offline(config, os.environ):
        return ("offline: Voyage is the configured embedder, so no chunk is embedded now; "
                "search uses words and names for the new ones until `knoxidx embed` runs "
                "online")
    return ""


def search(index: Any, query: str, *, k: int, mode: str, language: str | None,
           path_glob: str | None,
           source_weights: Mapping[str, float] | None = None,
           depth: int | None = None) -> dict[str, Any]:
    return searcher_for(index).search(
        query, k=k, mode=mode, language=language, path_glob=path_glob,
        source_weights=source_weights, depth=depth,
    )


def embed_pending_chunks(index: Any, *, progress: Any, limit: int | None,
                         embedder: Embedder | None = None) -> dict[str, Any]:
    """Embed chunks still pending (at most ``limit``), committing every ``EMBED_BATCH``; a later
    run resumes where an interrupted one stopped, and the cache means nothing is embedded
    twice. Reports ``("embed", done, total)`` to ``progress``."""
    from knoxidx.update.embedding_refresh import embed_pending

    if limit is not None and limit < 0:
        from knoxidx.retrieval.errors import SearchInputError

        raise SearchInputError(f"limit must be 0 or more, not {limit}")
    if hasattr(index.store, "url"):  # PostgreSQL: the cache is a table shared by all repos
        store = chunk_store_for(index.store)
    else:
        store = _local_cached_store(index)
    if not store.has_schema():
        raise SearchIndexMissingError(
            f"the index at {index.root} has no chunks to embed (built with --graph-only?);"
            " run `knoxidx index` first"
        )
    if embedder is None:
        from knoxidx.retrieval.egress import index_services

        config, egress = index_services(index)
        embedder = select_embedder(config, egress=egress)
    t0 = time.perf_counter()

    def report_progress(done: int, total: int) -> None:
        if progress is not None:
            progress("embed", done, total)

    result = embed_pending(
        store, embedder, batch_size=EMBED_BATCH, limit=limit, progress=report_progress
    )
    seconds = time.perf_counter() - t0
    return {
        "model": embedder.model_id,
        "embedded": result.embedded,
        "from_cache": result.from_cache,
        "declarations": result.declarations,
        "pending": result.pending,
        "chunks": store.chunk_count(),
        "stopped": result.stopped,
        "model_switch": result.model_switch,
        "withheld": result.withheld,
        "seconds": round(seconds, 4),
        "chunks_per_second": round((result.embedded + result.from_cache) / seconds, 2)
        if seconds > 0 else 0.0,
    }


def _local_cached_store(index: Any) -> ChunkStore:
    """The SQLite chunk store with the embedding cache ATTACHed from its own file."""
    conn = index.store.conn
    if has_schema(conn):
        attach_cache(conn, str(index.store.path.parent / CACHE_FILE), CACHE_SCHEMA)
    return ChunkStore(conn, cache_schema=CACHE_SCHEMA)
