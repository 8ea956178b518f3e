"""``knoxidx watch``: keep an index up to date while files change.

A :class:`Watcher` holds the index's single-writer lock for its whole life, starts with an
ordinary update (which also repairs whatever a crashed watcher or an editor session left
behind), then waits for file events from watchdog's native observer (inotify on Linux). Events
are filtered where they arrive, with discovery's own rules (:mod:`knoxidx.parse.watch_filter`),
so changes under ``.git``, ``.knoxidx``, ``node_modules`` or ignored paths never schedule
anything; the big skipped directories at the top of the repository are not even watched.
Relevant paths are debounced: after ``debounce_ms`` of quiet (or ``max_delay_ms`` of steady
events) the batch is applied as ONE incremental update (one transaction), and while
``.git/index.lock`` exists (git is mid-operation) the batch waits for it.

The update compares files with the index by size and mtime, so a batch need not describe each
change exactly: an editor's atomic save (temp file, rename), a deleted or moved directory, or a
``git checkout`` of thousands of files all come out right. For a batch of plain file events
the update is told which files to look at again instead of walking the tree
(:class:`~knoxidx.parse.watch_filter.DiscoveryCache`); a directory event, an ignore file, a
manifest or a layout config makes it walk the whole tree, and so does an idle watcher every
``reconcile_s`` seconds (events the kernel dropped). A failed update is retried with backoff;
a corrupt index stops the watcher.

When no change is waiting, the watcher embeds the pending chunks a small batch at a time at low
priority (:mod:`knoxidx.update.background_embed`): a change that arrives is applied after the
batch in flight, never after the whole backlog. ``$KNOXIDX_EMBED=0`` turns that off.
"""

from __future__ import annotations

import gc
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from knoxidx.core.errors import (
    CorruptIndexError,
    IndexGoneError,
    IndexNotFoundError,
    KnoxidxError,
)
from knoxidx.core.heap import release_free_memory
from knoxidx.graph.dbfile import storage_error
from knoxidx.graph.sqlite_schema import INDEX_DIR
from knoxidx.parse.standing import standing_worker
from knoxidx.parse.watch_filter import DiscoveryCache, RepoPathFilter
from knoxidx.watch_events import PendingChanges, Watches, observe, unwatched_warning
from knoxidx.watch_log import Emit
from knoxidx.watch_presence import WatcherPresence
from knoxidx.watch_status import DEFAULT_DEBOUNCE_MS, BatchReport, WatchStatus, now

if TYPE_CHECKING:
    from knoxidx.watch_embedding import SpareTimeEmbedding

GIT_HOLD_S = 30.0  # the longest a batch waits for a git operation to finish
RETRY_DELAYS_S = (1.0, 2.0, 5.0, 10.0, 30.0)
DEFAULT_RECONCILE_S = 120.0  # an idle watcher re-walks the tree this often (missed events)
# ... and this often when the kernel's inotify limits left part of the tree unwatched
LIMITED_RECONCILE_S = 5.0
# A batch of at most this many paths runs with Python's cyclic collector paused (see _apply).
GC_PAUSED_BATCH_PATHS = 64
SAMPLE_PATHS = 20

log = logging.getLogger(__name__)


class UpdateAbandoned(Exception):
    """Raised inside an update the watcher was told to abandon (see ``request_stop``)."""


class _Batch(NamedTuple):
    # start | changes | reconcile | resync (only the watches change) | embed (a batch of chunks)
    reason: str
    paths: list[str]
    events: int
    full_scan: bool


class Watcher:
    def __init__(self, root: str | os.PathLike[str], *, debounce_ms: int = DEFAULT_DEBOUNCE_MS,
                 max_delay_ms: int | None = None, retrieval: bool = True,
                 jobs: int | None = None, wait: bool = False,
                 reconcile_s: float = DEFAULT_RECONCILE_S, emit: Emit | None = None,
                 store: str | None = None, repo: str | None = None,
                 limited_reconcile_s: float = LIMITED_RECONCILE_S,
                 embed: bool | None = None) -> None:
        self.root = Path(root)
        self.store, self.repo = store, repo  # a shared PostgreSQL store's URL and repository
        self.debounce = debounce_ms / 1000
        self.max_delay = (max_delay_ms / 1000) if max_delay_ms else max(10 * self.debounce, 2.0)
        self.retrieval = retrieval
        # embed pending chunks in spare time: unless told, as `knoxidx index` does
        self.embed = retrieval and (embed if embed is not None else _embedding_default())
        self.jobs = jobs
        self.wait = wait
        self.reconcile_s = reconcile_s
        self.limited_reconcile_s = limited_reconcile_s
        self.emit: Emit = emit or (lambda event, data: None)
        self.status = WatchStatus(root=str(self.root), debounce_ms=debounce_ms)
        self._status_lock = threading.Lock()
        self._changes = PendingChanges()
        self._stop = threading.Event()
        self._abort = threading.Event()  # abandon the update in progress (see request_stop)
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._totals: tuple[int, int] | None = None
        self._batches = 0
        self._index_file: tuple[int, int] | None = None  # (device, inode) after the last batch
        self._discovery: DiscoveryCache  # made in run(), for the index's root
        self._presence: WatcherPresence | None = None  # how other processes see it runs
        self._embedding: SpareTimeEmbedding | None = None  # while the index is open

    # ---- running -----------------------------------------------------------------------

    def start(self, timeout: float = 60.0) -> None:
        """Run in a background thread; returns once the lock is held and events are being
        watched (the first update may still be running), or raises why it could not start."""
        self._thread = threading.Thread(target=self._run_in_thread, name="knoxidx-watch",
                                        daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError("the watcher did not start in time")
        if self._failure is not None:
            raise self._failure

    def stop(self, timeout: float | None = 30.0, grace_s: float | None = None) -> bool:
        """Stop the watcher's thread (see :meth:`request_stop` for ``grace_s``); whether it
        ended within ``timeout``."""
        self.request_stop(grace_s)
        with self._changes.cond:
            self._changes.cond.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)
            return not self._thread.is_alive()
        return True

    def request_stop(self, grace_s: float | None = None) -> None:
        """Safe from a signal handler: the loop ends after the update in progress; with
        ``grace_s``, an update still running that long after is abandoned (rolled back: the
        next start finds its changes again), so that the process ends in bounded time."""
        self._stop.set()  # (seen within half a second by an idle loop)
        if grace_s is not None and not self._abort.is_set():
            timer = threading.Timer(grace_s, self._abort.set)
            timer.daemon = True
            timer.start()

    def snapshot(self) -> dict[str, Any]:
        with self._status_lock:
            data = asdict(self.status)
        with self._changes.cond:
            data["pending_paths"] = len(self._changes.paths)
        return data

    def _run_in_thread(self) -> None:
        try:
            self.run()
        except BaseException as exc:  # noqa: BLE001  (re-raised by start(), shown in the status)
            self._failure = exc
            self._set(phase="failed", error=f"{type(exc).__name__}: {exc}")
            self.emit("error", {"error": str(exc), "fatal": True})
        finally:
            self._ready.set()

    def run(self) -> None:
        """Block until :meth:`stop` (or :meth:`request_stop`); raises IndexLockedError when
        another process writes the index."""
        from knoxidx.index import Index

        if self.store:
            index = Index.open(self.root, create=True, store=self.store, repo=self.repo)
        else:
            try:
                index = Index.open(self.root)
            except IndexNotFoundError:
                index = Index.open(self.root, create=True)
        with index, index.writer(wait=self.wait), standing_worker(), self._shown(index):
            self.status.root = str(index.root)
            filt = RepoPathFilter(index.root)
            self._discovery = DiscoveryCache(filt)
            observer, watches = observe(filt, self._changes)
            try:
                self.emit("start", {"root": str(index.root), "debounce_ms": round(
                    self.debounce * 1000), "watched_dirs": len(watches.current) + (
                    watches.root_watch is not None)})
                self._check_limits(watches)
                self._ready.set()
                self._set(phase="reconciling")
                self._totals = _totals(index)  # so the first line shows what it changed
                self._start_embedding(index)
                self._apply(index, _Batch("start", [], 0, True))
                self._loop(index, watches)
            except UpdateAbandoned:
                log.info("stopped mid-update: the update rolled back, and the next start "
                         "applies its changes")
            finally:
                if self._embedding is not None:
                    self._embedding.close()
                    self._embedding = None
                gc.unfreeze()  # what _apply froze goes back to the collector
                observer.stop()
                observer.join(timeout=5)
                with self._changes.cond:
                    left = len(self._changes.paths)
                self._set(phase="stopped", progress=None)
                self.emit("stop", {"pending_paths": left})

    @contextmanager
    def _shown(self, index: Any) -> Iterator[None]:
        """Other processes reading a local index see that this watcher runs (``/status``)."""
        if self.store or not (index.root / INDEX_DIR).is_dir():
            yield
            return
        presence = WatcherPresence(index.root / INDEX_DIR)
        presence.claim()
        self._presence = presence
        try:
            yield
        finally:
            self._presence = None
            presence.release()

    def _check_limits(self, watches: Watches) -> None:
        """Say so, once, when the kernel's inotify limits leave part of the tree unwatched:
        the watcher keeps going, and re-walks the tree every ``limited_reconcile_s`` instead
        (it used to stop with a traceback, or miss the changes there until the next
        reconcile)."""
        limited = watches.limited()
        if limited and not self.status.watch_limited:
            self.emit("warning", {"message": unwatched_warning(watches,
                                                               self.limited_reconcile_s)})
        self._set(watch_limited=limited)

    def _loop(self, index: Any, watches: Watches) -> None:
        failures = 0
        not_before = 0.0
        while not self._stop.is_set():
            batch = self._wait_batch(not_before)
            if batch is None:
                continue
            if batch.reason == "resync":
                watches.sync()
                self._check_limits(watches)
                continue
            if batch.reason == "embed":  # (only ever due while the embedding runs)
                assert self._embedding is not None
                self._embedding.step()
                continue
            try:
                self._apply(index, batch)
                failures = 0
            except (CorruptIndexError, IndexGoneError, UpdateAbandoned):
                raise
            except Exception as exc:  # logged, and the batch retried: never lost
                if isinstance(exc, sqlite3.DatabaseError):
                    said = storage_error(exc, index.store.path)
                    if isinstance(said, CorruptIndexError):  # damage stops the watcher
                        raise said from None
                    exc = said  # a full disk: retried, and said plainly
                delay = RETRY_DELAYS_S[min(failures, len(RETRY_DELAYS_S) - 1)]
                failures += 1
                if not isinstance(exc, KnoxidxError):  # a known one's message says it all
                    log.exception("update failed")
                self._set(phase="pending", error=f"{type(exc).__name__}: {exc}")
                self.emit("error", {"error": f"{type(exc).__name__}: {exc}", "fatal": False,
                                    "retry_in_s": delay, "paths": len(batch.paths)})
                self._changes.add(batch.paths, full_scan=True)
                not_before = time.monotonic() + delay

    def _wait_batch(self, not_before: float) -> _Batch | None:
        """The next thing to do: ``resync`` the watches at once when a top-level directory
        came or went; a batch of ``changes`` once due (after ``debounce`` of quiet, or
        ``max_delay`` after its first event, not while git holds its index lock, up to
        GIT_HOLD_S); a ``reconcile`` when idle for ``reconcile_s``. None when stopping."""
        changes = self._changes
        git_lock = self.root / ".git" / "index.lock"
        idle_since = time.monotonic()
        with changes.cond:
            while not self._stop.is_set():
                now = time.monotonic()
                if changes.resync:  # watch a new top-level directory now, not at the batch:
                    changes.resync = False  # the rest of a burst inside it then counts
                    return _Batch("resync", [], 0, True)
                if not changes.paths:
                    if self._embedding is not None and self._embedding.due():
                        return _Batch("embed", [], 0, False)  # spare time: one small batch
                    every = self.reconcile_s
                    if self.status.watch_limited:
                        every = min(every or self.limited_reconcile_s, self.limited_reconcile_s)
                    if every and now - idle_since >= every:
                        return _Batch("reconcile", [], 0, True)
                    changes.cond.wait(0.5)
                    continue
                self._set(phase="pending")
                quiet, age = now - changes.last, now - changes.first
                if (quiet >= self.debounce or age >= self.max_delay) and now >= not_before:
                    if age < GIT_HOLD_S and git_lock.exists():
                        changes.cond.wait(self.debounce)
                        continue
                    return _Batch("changes", *changes.take())
                wait = max(self.debounce - quiet, not_before - now)
                if age < self.max_delay:
                    wait = min(wait, self.max_delay - age)
                changes.cond.wait(min(max(wait, 0.005), 0.5))
        return None

    # ---- one batch ---------------------------------------------------------------------

    def _apply(self, index: Any, batch: _Batch) -> None:
        """One update for ``batch``. Garbage collection is kept off a small batch's path: on the
        whole corpus the cyclic collector ran ~25 ms per one-file batch (with a ~70 ms
        full collection every few batches) over objects the batch was about to free by
        reference counting anyway. The heap that exists between batches (caches, the writer
        session, the server's state) is frozen out of the collector's sight after every batch
        that was not paused, and a paused batch leaves its collections to after it is done."""
        self._check_index_file(index)
        pause = (batch.reason == "changes" and len(batch.paths) <= GC_PAUSED_BATCH_PATHS
                 and gc.isenabled())
        if pause:
            gc.disable()
        try:
            self._apply_batch(index, batch)
        finally:
            if pause:
                gc.enable()
            else:  # a large batch or the start: collect its garbage, then freeze what lives on
                gc.collect()
                gc.freeze()

    def _apply_batch(self, index: Any, batch: _Batch) -> None:
        self._set(phase="indexing", progress=None, error="")
        t0 = time.perf_counter()
        found = None if batch.full_scan else self._discovery.patched(batch.paths)
        how = "incremental" if found is not None else "full"
        if batch.reason == "start":  # the one update that may find another knoxidx's facts
            extraction = index.extraction()
            if extraction["stale"]:
                from knoxidx.update.graph_update import EXTRACTION_CHANGED

                self.emit("notice", {"message": f"{EXTRACTION_CHANGED}: re-reading all "
                                                f"{extraction['files']} files"})
        report = index.update_held(
            jobs=self.jobs, retrieval=self.retrieval, embed=False, progress=self._progress,
            discovered=found if found is not None else self._discovery.full(),
        )
        release_free_memory()  # what the batch freed goes back to the system
        ms = (time.perf_counter() - t0) * 1000
        touched = report.changed or report.removed or report.resolved
        totals = _totals(index) if self._totals is None or touched else self._totals
        before = self._totals or totals
        self._totals = totals
        retrieval = report.retrieval or {}
        self._batches += 1 if batch.reason != "start" else 0
        result = BatchReport(
            batch=self._batches, reason=batch.reason, discovery=how, events=batch.events,
            paths=len(batch.paths), sample=tuple(sorted(batch.paths)[:SAMPLE_PATHS]),
            changed=report.changed, added=report.added, removed=report.removed,
            resolved=report.resolved, nodes=totals[0], edges=totals[1],
            nodes_delta=totals[0] - before[0], edges_delta=totals[1] - before[1],
            chunks_added=retrieval.get("added", 0), chunks_removed=retrieval.get("removed", 0),
            ms=round(ms, 1),
        )
        self._index_file = _file_identity(index)
        if self._embedding is not None and (retrieval.get("added") or batch.reason == "start"):
            self._embedding.refresh()  # new chunks to embed
        self._set(phase="idle", progress=None, batches=self._batches,
                  last_batch=result.as_dict(), last_update=now())
        if batch.reason != "reconcile" or touched:
            self.emit("batch", result.as_dict())
        for warning in report.errors[:20]:
            self.emit("warning", {"message": warning})

    # ---- embedding in spare time -------------------------------------------------------

    def _start_embedding(self, index: Any) -> None:
        if not self.embed:
            self._set(embedding="off")
            return
        from knoxidx.watch_embedding import SpareTimeEmbedding

        self._embedding = SpareTimeEmbedding(index, emit=self.emit, show=self._set,
                                             should_yield=self._change_waits)

    def _change_waits(self) -> bool:
        """Whether the embedding should give way: a change to apply, or a stop."""
        return bool(self._changes.paths) or self._changes.resync or self._stop.is_set()

    # ---- the index file, progress and status -------------------------------------------

    def _check_index_file(self, index: Any) -> None:
        """Stop when the index file this watcher writes is no longer the one on disk (``rm -rf
        .knoxidx``, ``git clean -xdf``): it went on writing into the deleted file, idle and
        content, while every reader found no index."""
        if self._index_file is not None and _file_identity(index) != self._index_file:
            raise IndexGoneError(
                f"the index {index.store.path} was deleted or replaced while this watcher "
                "held it; start `knoxidx watch` again, which rebuilds it")

    def _progress(self, phase: str, done: int, total: int) -> None:
        if self._abort.is_set():  # (called often in every phase of an update)
            raise UpdateAbandoned("the watcher was stopped mid-update")
        self._set(progress={"phase": phase, "done": done, "total": total})

    def _set(self, **values: Any) -> None:
        with self._status_lock:
            for key, value in values.items():
                setattr(self.status, key, value)
            presence = self._presence if values.keys() - {"progress"} else None
            state = asdict(self.status) if presence is not None else None
        if presence is not None and state is not None:
            presence.publish(state)


def _file_identity(index: Any) -> tuple[int, int] | None:
    """The (device, inode) of a SQLite index's file, (0, 0) when it is gone; None for a store
    without one (PostgreSQL)."""
    from knoxidx.graph.store import SQLiteStore

    if not isinstance(index.store, SQLiteStore):
        return None
    try:
        st = os.stat(index.store.path)
    except OSError:
        return (0, 0)
    return (st.st_dev, st.st_ino)


def _embedding_default() -> bool:
    """Whether a watcher embeds in spare time unless told: $KNOXIDX_EMBED=0 says no."""
    from knoxidx.core.config import EMBED_ENV, falsy

    return not falsy(os.environ.get(EMBED_ENV))


def _totals(index: Any) -> tuple[int, int]:
    """Nodes and edges in the index (for the per-batch deltas)."""
    return index.q.totals()
