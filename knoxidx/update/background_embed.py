"""Embedding in a watcher's spare time (``knoxidx watch``, ``serve --watch``, ``mcp --watch``).

The watcher's own thread runs :meth:`BackgroundEmbedding.step` only when no file change is
waiting, so a graph update never queues behind a long embedding pass: each step embeds one
small batch, sized from the measured time per chunk to take about :data:`STEP_TARGET_S`, and
commits it. The model runs on one dedicated thread at the lowest CPU priority with a single
onnxruntime thread, so a query or a parse worker of the same machine goes first; the watcher's
thread only waits for it, and stops waiting as soon as a change arrives (``should_yield``):
the batch is then dropped uncommitted (its chunks stay pending) and the change applied.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

STEP_TARGET_S = 0.3  # how long one batch's model call should take
MAX_STEP_CHUNKS = 32
FIRST_STEP_CHUNKS = 2  # before a measurement: the model's load is in the first step
RETRY_AFTER_S = 60.0  # after a failed step (the remote service down): wait this long
BACKGROUND_THREADS = 1  # onnxruntime threads: one core at most, at the lowest priority
YIELD_POLL_S = 0.02  # how often a wait for the model looks for a change to apply


def _lowest_priority() -> None:
    """Make the calling thread the last to get a CPU (Linux: a thread's nice value is its own;
    elsewhere the call may apply to the process, which only the embedding thread calls it)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):  # no per-thread priority here: run at normal priority
        pass


class Yielded(Exception):
    """A change arrived while a batch was being embedded: the batch is dropped."""


class _LowPriorityModel:
    """An embedder whose document embedding runs on the low-priority thread, waited for only
    while ``should_yield()`` says no; everything else (model id, document text, the egress
    gate) is the embedder's own."""

    def __init__(self, embedder: Any, pool: concurrent.futures.ThreadPoolExecutor,
                 should_yield: Callable[[], bool]) -> None:
        self._embedder, self._pool, self._should_yield = embedder, pool, should_yield

    def __getattr__(self, name: str) -> Any:
        return getattr(self._embedder, name)

    def embed_documents(self, texts: Any, **kwargs: Any) -> Any:
        future = self._pool.submit(self._embedder.embed_documents, texts, **kwargs)
        while True:
            try:
                return future.result(timeout=YIELD_POLL_S)
            except concurrent.futures.TimeoutError:
                if self._should_yield():  # the call runs on to its end, its result unused
                    future.cancel()
                    raise Yielded from None


class BackgroundEmbedding:
    """The pending chunks of one open index, embedded a small batch per :meth:`step` on the
    caller's writer connection (the caller holds the writer lock)."""

    def __init__(self, index: Any, should_yield: Callable[[], bool] = lambda: False) -> None:
        self.index = index
        self.should_yield = should_yield
        self.yielded = 0  # batches dropped for a change
        self.disabled = ""  # why it does nothing (offline with a remote embedder), else ""
        self.pending = 0
        self.embedded = 0
        self._batch = FIRST_STEP_CHUNKS
        self._not_before = 0.0
        self._embedder: Any = None
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    def due(self) -> bool:
        """Whether a step has work now (pending chunks, not disabled, not backing off)."""
        return bool(self.pending) and not self.disabled and time.monotonic() >= self._not_before

    def refresh_counts(self) -> None:
        """Read how many chunks are embedded and pending (after an update changed them)."""
        from knoxidx.retrieval.stores import chunk_store_for

        store = chunk_store_for(self.index.store)
        if not store.has_schema():
            self.pending = self.embedded = 0
            return
        self.pending, self.embedded = store.pending_count(), store.vector_count()

    def step(self) -> dict[str, Any]:
        """Embed one batch and commit it; returns ``embed_pending_chunks``'s answer."""
        from knoxidx.update.retrieval_steps import embed_pending_chunks

        embedder = self._embedder or self._make_embedder()
        if embedder is None:
            return {}
        t0 = time.perf_counter()
        try:
            done = embed_pending_chunks(self.index, progress=None, limit=self._batch,
                                        embedder=embedder)
        except Yielded:  # nothing of the batch was written: its chunks stay pending
            self.yielded += 1
            return {}
        except Exception:
            self._not_before = time.monotonic() + RETRY_AFTER_S
            raise
        seconds = time.perf_counter() - t0
        made = done["embedded"] + done["from_cache"]
        if done["stopped"]:
            self._not_before = time.monotonic() + RETRY_AFTER_S
        elif made:
            per_chunk = seconds / made
            self._batch = max(1, min(MAX_STEP_CHUNKS, int(STEP_TARGET_S / per_chunk)))
        self.pending = done["pending"]
        self.embedded += made
        return done

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def _make_embedder(self) -> Any:
        from knoxidx.retrieval.backends import LocalEmbedder, select_embedder
        from knoxidx.retrieval.egress import index_services
        from knoxidx.update.retrieval_steps import remote_embedding_refused

        self.disabled = remote_embedding_refused(self.index)
        if self.disabled:
            return None
        config, egress = index_services(self.index)
        embedder = select_embedder(config, egress=egress)
        if isinstance(embedder, LocalEmbedder):
            embedder.threads = BACKGROUND_THREADS  # before its model loads
        self._pool = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="knoxidx-embed", initializer=_lowest_priority)
        self._embedder = _LowPriorityModel(embedder, self._pool, self.should_yield)
        return self._embedder
