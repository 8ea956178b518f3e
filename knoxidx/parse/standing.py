"""The standing parse worker: one capped worker that a long-running process (the watcher, a
server) keeps for all its small updates, started by a forkserver (:func:`standing_worker`)."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import contextmanager

from knoxidx.core.heap import resident_bytes_of
from knoxidx.parse.parse_worker import CANNOT_START, new_pool, read_chunk

log = logging.getLogger(__name__)
# How much the standing parse worker may grow over its size after its first batch before it is
# replaced (see Standing.retire_if_grown).
STANDING_GROWTH_MB = 256


class Standing:
    """One capped parse worker that outlives an update: started by a forkserver (a small,
    single-threaded process) rather than forked from the caller, because the caller is a
    long-running server with threads (forking one with threads may deadlock the child) whose
    heap a forked worker would keep a copy of as the parent changes it. Replaced when it
    dies, and once it has grown by ``STANDING_GROWTH_MB`` (``retire_if_grown``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pool: ProcessPoolExecutor | None = None
        self._pid: Future[int] | None = None  # the worker's process id, asked when it starts
        self._settled = -1  # its resident bytes after its first batch

    def pool(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = new_pool(1, "forkserver")
                self._pid = self._pool.submit(os.getpid)
                self._settled = -1
            return self._pool

    def retire_if_grown(self, pool: ProcessPoolExecutor) -> None:
        """After a batch: replace the worker (at the next batch) once it has grown by over
        ``STANDING_GROWTH_MB`` since its first. py-tree-sitter 0.26 never frees what a parse's
        read callback returns (a 66 kB Java file ending in an unclosed `/*` kept 240 kB a
        parse when reads returned slices of the source; the parse reads through a fixed
        window now, tree_parse._Window), and the allocator's fragmentation after pathological
        parses is not given back either: a worker that grows all the same goes."""
        pid = self._pid
        if self._pool is not pool or pid is None or not pid.done() or pid.exception():
            return
        resident = resident_bytes_of(pid.result())
        if resident < 0:
            return
        if self._settled < 0:
            self._settled = resident
        elif resident - self._settled > STANDING_GROWTH_MB << 20:
            log.info("the standing parse worker grew from %d to %d MB; replacing it",
                     self._settled >> 20, resident >> 20)
            self.discard(pool)

    def discard(self, pool: ProcessPoolExecutor | None) -> None:
        """Forget ``pool`` (None: whatever pool there is) and shut it down."""
        with self._lock:
            if pool is None or self._pool is pool:
                pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    def warm(self) -> None:
        """Start the worker now (in the background), not at the first update; if it cannot
        start, the first update says so and forks one instead."""
        try:
            self.pool().submit(read_chunk, [])
        except CANNOT_START:
            self.discard(None)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


class StandingSlot:
    """The process's standing worker while some ``standing_worker`` block is open."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._standing: Standing | None = None

    def get(self) -> Standing | None:
        return self._standing

    @contextmanager
    def hold(self) -> Iterator[Standing]:
        with self._lock:
            if self._standing is None:
                self._standing = Standing()
            self._users += 1
            standing = self._standing
        try:
            yield standing
        finally:
            with self._lock:
                self._users -= 1
                last = self._users == 0
                if last:
                    self._standing = None
            if last:
                standing.close()


STANDING = StandingSlot()


@contextmanager
def standing_worker() -> Iterator[None]:
    """While open (a watcher's life), small updates in this process parse in one standing
    capped worker rather than in a worker forked per update: no fork of a threaded server,
    and no fork's cost on each save."""
    with STANDING.hold() as standing:
        standing.warm()
        yield
