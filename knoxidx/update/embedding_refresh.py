"""Keeping chunks and vectors up to date, incrementally and without losing work.

1. ``update_file`` replaces a file's chunks; only chunks whose content hash changed become
   *pending*.
2. ``embed_pending`` embeds pending chunks batch by batch, with their declarations (see
   ``names.declaration_texts``), through the cache first (keyed by model and the hash of the
   exact text embedded), committing after each batch. When the
   service is down (breaker open, retries exhausted) it stops and leaves the rest pending with
   the error noted: a later run picks them up. A chunk leaves the pending list only in the same
   transaction that stores its vector, so nothing is lost and nothing is embedded twice.
3. ``ensure_model``: an index searches one model's vectors. If the embedder's ``model_id``
   differs from the recorded one, the current vectors are kept aside under their model id,
   those kept earlier for the new model come back where their chunk is unchanged, the other
   chunks become pending, and the returned message says so: switching between the local
   model and Voyage re-embeds only what changed meanwhile.
4. A remote embedder (one with an ``egress`` gate) never sees chunks of never-send files: they
   are *withheld* (off the pending list, no vector: lexical and symbol search still find them)
   rather than embedded locally, because one index holds one model's vectors. When the
   patterns change, chunks whose file is allowed again go back to pending.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import xxhash

from knoxidx.retrieval.chunker import Chunk
from knoxidx.retrieval.embedder import Embedder
from knoxidx.retrieval.errors import CircuitOpenError, RetriesExhaustedError, ServiceError
from knoxidx.retrieval.store import ChunkStore, FileUpdate
from knoxidx.retrieval.vectors import to_blob

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EmbedReport:
    embedded: int  # chunk vectors made by the model in this run
    from_cache: int  # chunk vectors found in the cache
    pending: int  # chunks still waiting (0 when done)
    stopped: str  # why the run stopped early, "" if it finished
    model_switch: str = ""  # set when the model changed and every chunk is being re-embedded
    withheld: int = 0  # chunks of never-send files kept from a remote embedder in this run
    declarations: int = 0  # declaration vectors made by the model (not in the cache)


def text_hash(text: str) -> str:
    return xxhash.xxh3_128_hexdigest(text.encode("utf-8", errors="surrogatepass"))


def update_file(store: ChunkStore, path: str, chunks: Sequence[Chunk]) -> FileUpdate:
    return store.replace_file(path, chunks)


def ensure_model(store: ChunkStore, embedder: Embedder) -> str | None:
    """Record the embedder's model; on a change, drop old vectors and say so."""
    recorded = store.recorded_model()
    if recorded == embedder.model_id:
        return None
    store.record_model(embedder.model_id, embedder.dimension)
    if recorded is None:
        return None
    store.shelve_vectors(recorded)
    count = store.drop_vectors()
    restored = store.restore_vectors(embedder.model_id, text_hash)
    message = (
        f"the index's vectors were made by {recorded} (kept for a switch back); "
        f"{restored} of {count} chunks have {embedder.model_id} vectors from before, "
        f"embedding the other {count - restored} (cached vectors are reused where the text "
        "matches)"
    )
    log.warning(message)
    return message


def embed_pending(
    store: ChunkStore,
    embedder: Embedder,
    *,
    batch_size: int = 64,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> EmbedReport:
    """Embed pending chunks (at most ``limit``); see the module docstring. Each batch is one
    transaction, written after the model call: an interrupted run loses at most the batch in
    flight."""
    egress = getattr(embedder, "egress", None)  # remote embedders carry their gate
    with store.transaction():
        store.ensure_schema()  # an index made before embed_withheld
        if hasattr(store, "ensure_vectors_token"):  # SQLite: an index made before tokens
            store.ensure_vectors_token()
        switch = ensure_model(store, embedder) or ""
        if egress is not None:
            store.release_withheld(egress.policy.allows)
    embedded = from_cache = done = withheld = declarations = 0
    after = 0
    stopped = ""
    total = store.pending_count()
    if limit is not None:
        total = min(total, limit)
    if progress is not None:
        progress(0, total)
    while limit is None or done < limit:
        size = batch_size if limit is None else min(batch_size, limit - done)
        ids = store.pending(size, after=after)
        if not ids:
            break
        after = ids[-1]
        rows = store.get(ids)
        if egress is not None:
            refused = [i for i in ids if i in rows and not egress.policy.allows(rows[i].chunk.path)]
            if refused:
                with store.transaction():
                    store.withhold(refused)
                withheld += len(refused)
                rows = {i: row for i, row in rows.items() if i not in set(refused)}
        texts = {i: embedder.document_text(rows[i].chunk) for i in ids if i in rows}
        hashes = {i: text_hash(t) for i, t in texts.items()}
        # each chunk's declarations (names.declaration_texts) are embedded with it
        declared = {
            d: (t, rows[i].chunk.path)
            for i, found in store.declarations(list(texts)).items() for d, t in found
        }
        declaration_hashes = {d: text_hash(t) for d, (t, _) in declared.items()}
        known = store.cached(embedder.model_id,
                             [*hashes.values(), *declaration_hashes.values()])
        wanted: dict[str, str] = {}
        wanted_paths: dict[str, str] = {}
        for i, h in hashes.items():
            if h not in known:
                wanted.setdefault(h, texts[i])
                wanted_paths.setdefault(h, rows[i].chunk.path)
        chunk_texts = len(wanted)
        for d, h in declaration_hashes.items():
            if h not in known:
                wanted.setdefault(h, declared[d][0])
                wanted_paths.setdefault(h, declared[d][1])
        try:
            if not wanted:
                fresh = None
            elif egress is not None:
                fresh = embedder.embed_documents(  # type: ignore[call-arg]
                    list(wanted.values()), paths=list(wanted_paths.values())
                )
            else:
                fresh = embedder.embed_documents(list(wanted.values()))
        except (CircuitOpenError, RetriesExhaustedError, ServiceError) as exc:
            stopped = str(exc)
            with store.transaction():
                store.note_pending_error(ids, stopped)
            log.warning("embedding stopped, %d chunks left pending: %s", store.pending_count(), exc)
            break
        if fresh is not None:
            for h, vector in zip(wanted, fresh, strict=True):
                known[h] = to_blob(vector)
        with store.transaction():
            store.save_vectors(embedder.model_id, [(i, h, known[h]) for i, h in hashes.items()],
                               [(d, h, known[h]) for d, h in declaration_hashes.items()])
        embedded += chunk_texts
        from_cache += len(hashes) - chunk_texts
        declarations += len(wanted) - chunk_texts
        done += len(ids)
        if progress is not None:
            progress(done, total)
    return EmbedReport(embedded, from_cache, store.pending_count(), stopped, switch, withheld,
                       declarations)
