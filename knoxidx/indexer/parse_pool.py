"""Reading and extracting the files an update needs, on every core: a pool of forked workers,
each handed files in chunks of about equal bytes, largest first; one worker for a few files.
Parsing never runs in the calling process (see ``limit_worker_memory``)."""

from __future__ import annotations

import logging
import multiprocessing
import os
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from knoxidx.graph.layout import Layout
from knoxidx.graph.sqlite_schema import FileState
from knoxidx.indexer.discovery import SourceFile
from knoxidx.indexer.extract import prepare
from knoxidx.indexer.heap import resident_bytes_of
from knoxidx.indexer.reader import ReadResult, file_hash, read_and_extract
from knoxidx.indexer.worker_limits import (
    READ_SECONDS,
    READ_SECONDS_PER_MB,
    cpu_bound,
    limit_worker_memory,
    worker_memory_mb,
)

log = logging.getLogger(__name__)
Progress = Callable[[str, int, int], None]
# Below this many files, more than one worker process costs more than it saves.
POOL_THRESHOLD = 48
# What a parse worker is handed at a time: up to this many bytes of files (one large file
# alone), at most this many files.
CHUNK_BYTES = 256 * 1024
CHUNK_FILES = 64
# How much the standing parse worker may grow over its size after its first batch before it is
# replaced (see _Standing.retire_if_grown).
STANDING_GROWTH_MB = 256


def read_all(
    root: Path, jobs: list[SourceFile], known: dict[str, FileState], layout: Layout,
    workers: int, progress: Progress | None,
) -> Iterator[ReadResult]:
    args = [(str(root), f, known[f.path].hash if f.path in known else None, layout)
            for f in jobs]
    total = len(args)
    if total == 0:
        return
    standing = None
    if workers <= 1 or total < POOL_THRESHOLD:
        # Few files (an edit, a watcher's batch) or --jobs 1: one worker, not this process.
        # A file whose parse runs away (see limit_worker_memory) then costs that file, not the
        # caller: a watcher killed by the OOM killer, or an update that dies on the same file
        # every time it is run. A fork costs +30 ms on a one-file update (0.118 -> 0.147 s
        # median on the benchmark corpus, BENCHMARKS.md); a long-running process keeps one
        # worker standing instead (see ``standing_worker``).
        workers = 1
        standing = _STANDING.get()
    # Largest files first, in chunks of about equal bytes: the last chunks are a few small
    # files, so no worker finishes long after the other, and the first results come as soon
    # as one large file is read (results arrive in any order anyway).
    args.sort(key=_job_size, reverse=True)
    chunks = sized_chunks(args, _job_size, CHUNK_BYTES, CHUNK_FILES)
    # inside a watcher (a threaded server), even a large batch's pool starts from the
    # forkserver rather than from a fork of the server
    method = "forkserver" if _STANDING.get() is not None else "fork"
    if method == "fork":
        prepare({job[1].language for job in args})  # the forked workers inherit them compiled
    done = 0
    for results in _read_chunks(root, chunks, workers, standing, method):
        for result in results:
            yield result
        reported, done = done, done + len(results)
        if progress and (done // 64 > reported // 64 or done == total):
            progress("parse", done, total)


def _read_chunks(root: Path, chunks: list[list[tuple]], workers: int,
                 standing: _Standing | None = None,
                 method: str = "fork") -> Iterator[list[ReadResult]]:
    """Every chunk's results, in any order, from ``workers`` forked processes.

    A worker that dies (the OOM killer; tree-sitter aborting when its memory limit, below, is
    reached; its CPU bound; any crash in C) takes the chunks in flight with it, and
    multiprocessing.Pool then waited for their results for ever: the update hung. Here the pool
    reports itself broken. Each worker notes which file of its chunk it has begun
    (``_BegunMarks``), so the suspects are the files begun and not finished when it broke, at
    most one a worker: each is read again alone, and one that kills a worker of its own is
    recorded as an error; every other file of the broken chunks goes to a new pool, so the rest
    of the update goes on. A file that kills its worker costs it twice (its chunk, then alone;
    three times before, when every file of the broken chunks was a suspect: 33 s against 22 s
    for a mangled Go file whose parse runs on to its 10 s bound, found by bench.fuzz)."""
    pending = chunks
    while pending:
        broken: list[list[tuple]] = []
        if any(len(chunk) > 1 for chunk in pending):
            with _BegunMarks(len(pending)) as marks:
                yield from _pool_round(pending, workers, broken, standing, method, marks)
                begun = marks.read()
        else:  # one file a chunk (an edit, a watcher's save): each is its own suspect
            yield from _pool_round(pending, workers, broken, standing, method)
            begun = [1] * len(pending)
        if not broken:
            return
        position = {id(chunk): n for n, chunk in enumerate(pending)}
        suspects: list[tuple] = []
        others: list[tuple] = []
        for chunk in broken:
            started = begun[position[id(chunk)]]
            if started:  # files before it were finished (their results lost with the worker)
                suspects.append(chunk[started - 1])
                others.extend(chunk[: started - 1] + chunk[started:])
            else:
                others.extend(chunk)
        if not suspects:  # no file begun on record (no marks): find the one the old way
            yield from _one_by_one(root, others, workers, standing, method)
            return
        for job in suspects:
            died: list[list[tuple]] = []
            yield from _pool_round([[job]], 1, died, standing, method)
            if died:
                yield [_worker_died(root, job)]
        others.sort(key=_job_size, reverse=True)
        pending = sized_chunks(others, _job_size, CHUNK_BYTES, CHUNK_FILES)


def _one_by_one(root: Path, jobs: list[tuple], workers: int, standing: _Standing | None,
                method: str) -> Iterator[list[ReadResult]]:
    """``jobs`` each its own task; those in flight at a break are then read alone, and one that
    kills a worker of its own is recorded as an error."""
    suspects: list[list[tuple]] = []
    yield from _pool_round([[job] for job in jobs], workers, suspects, standing, method)
    for single in suspects:
        died: list[list[tuple]] = []
        yield from _pool_round([single], 1, died, standing, method)
        if died:
            yield [_worker_died(root, single[0])]


class _BegunMarks:
    """A file the parent shares with its parse workers: for the n-th chunk of a round, a 4-byte
    count of the files of it the worker has begun (0: none). A worker that dies leaves its
    count behind, which names the file it died on. Unavailable (no ``pwrite``, no temporary
    file): every count reads 0."""

    def __init__(self, chunks: int) -> None:
        self.chunks = chunks
        self.path: str | None = None

    def __enter__(self) -> _BegunMarks:
        if hasattr(os, "pwrite"):
            try:
                fd, self.path = tempfile.mkstemp(prefix="knoxidx-begun-")
                with os.fdopen(fd, "wb") as fh:
                    fh.write(bytes(4 * self.chunks))
            except OSError:
                self.path = None
        return self

    def __exit__(self, *exc: object) -> None:
        if self.path is not None:
            with suppress(OSError):
                os.unlink(self.path)

    def slot(self, n: int) -> tuple[str, int] | None:
        """What the worker of chunk ``n`` is handed to note its progress in."""
        return (self.path, n) if self.path is not None else None

    def read(self) -> list[int]:
        data = b""
        if self.path is not None:
            with suppress(OSError), open(self.path, "rb") as fh:
                data = fh.read()
        # (a count cut short or missing reads 0)
        return [int.from_bytes(data[4 * n : 4 * n + 4], "little") for n in range(self.chunks)]


def _pool_round(chunks: list[list[tuple]], workers: int, broken: list[list[tuple]],
                standing: _Standing | None = None, method: str = "fork",
                marks: _BegunMarks | None = None) -> Iterator[list[ReadResult]]:
    """The results of the chunks the standing worker, when given, or else a pool of
    ``workers`` started by ``method`` ("fork" or "forkserver") finished; those it could not,
    because a worker died, are added to ``broken``. Where the standing worker or the
    forkserver cannot start (no Unix sockets, a sandbox), a forked pool does the work."""
    if standing is not None:
        started = _start(standing.pool, chunks,
                         "the standing parse worker is not available (%s); forking one", marks)
        if started is not None:
            yield from _results(started[1], broken)
            if broken:
                standing.discard(started[0])
            else:
                standing.retire_if_grown(started[0])
            return
        standing.discard(None)
    elif method == "forkserver":
        started = _start(lambda: _executor(workers, "forkserver"), chunks,
                         "parse workers could not start from the forkserver (%s); forking",
                         marks)
        if started is not None:
            with started[0]:
                yield from _results(started[1], broken)
            return
    with _executor(workers, "fork") as pool:
        yield from _results(_submit(pool, chunks, marks), broken)


def _start(make: Callable[[], ProcessPoolExecutor], chunks: list[list[tuple]], why: str,
           marks: _BegunMarks | None = None,
           ) -> tuple[ProcessPoolExecutor, dict[Any, list[tuple]]] | None:
    """A pool from ``make`` with ``chunks`` submitted (which starts its workers), or None when
    it cannot start, logged with ``why`` (a format for the error)."""
    pool = None
    try:
        pool = make()
        return pool, _submit(pool, chunks, marks)
    except _CANNOT_START as exc:
        log.warning(why, exc)
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        return None


# what starting a pool raises where processes cannot start that way (or the pool broke idle)
_CANNOT_START = (OSError, RuntimeError, BrokenProcessPool)


def _executor(workers: int, method: str) -> ProcessPoolExecutor:
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(["knoxidx.indexer.parse_pool"])
    return ProcessPoolExecutor(workers, mp_context=ctx, initializer=limit_worker_memory,
                               initargs=(worker_memory_mb(),))


def _submit(pool: ProcessPoolExecutor, chunks: list[list[tuple]],
            marks: _BegunMarks | None = None) -> dict[Any, list[tuple]]:
    return {pool.submit(_read_chunk, chunk, marks.slot(n) if marks else None): chunk
            for n, chunk in enumerate(chunks)}


def _results(futures: dict[Any, list[tuple]],
             broken: list[list[tuple]]) -> Iterator[list[ReadResult]]:
    for future in as_completed(futures):
        try:
            yield future.result()
        except BrokenProcessPool:
            broken.append(futures[future])


class _Standing:
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
                self._pool = _executor(1, "forkserver")
                self._pid = self._pool.submit(os.getpid)
                self._settled = -1
            return self._pool

    def retire_if_grown(self, pool: ProcessPoolExecutor) -> None:
        """After a batch: replace the worker (at the next batch) once it has grown by over
        ``STANDING_GROWTH_MB`` since its first. py-tree-sitter 0.26 never frees what a parse's
        read callback returns after its first read, and error recovery reads again from a
        token that runs to the end of the file: a 66 kB Java file ending in an unclosed `/*`
        (a comment being typed) kept 240 kB a parse, in a worker that lives as long as the
        watcher. Growth from fragmentation after pathological parses goes the same way."""
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
            self.pool().submit(_read_chunk, [])
        except _CANNOT_START:
            self.discard(None)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


class _StandingSlot:
    """The process's standing worker while some ``standing_worker`` block is open."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._standing: _Standing | None = None

    def get(self) -> _Standing | None:
        return self._standing

    @contextmanager
    def hold(self) -> Iterator[_Standing]:
        with self._lock:
            if self._standing is None:
                self._standing = _Standing()
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


_STANDING = _StandingSlot()


@contextmanager
def standing_worker() -> Iterator[None]:
    """While open (a watcher's life), small updates in this process parse in one standing
    capped worker rather than in a worker forked per update: no fork of a threaded server,
    and no fork's cost on each save."""
    with _STANDING.hold() as standing:
        standing.warm()
        yield


def _worker_died(root: Path, job: tuple) -> ReadResult:
    """The record of a file whose parse killed its worker on its own: an error, with the
    file's hash (so an unchanged file is not tried again by the next update)."""
    _, src, _, _ = job
    try:
        digest = file_hash((root / src.path).read_bytes())
    except OSError:
        digest = ""
    return ReadResult(src.path, src.language, src.size, src.mtime_ns, "error", digest,
                      "the parse worker died on this file (out of memory or CPU time?); "
                      "not indexed")


def sized_chunks(items: list, size: Callable[[Any], int], max_bytes: int,
                 max_items: int) -> list[list]:
    """``items`` cut in order into runs of at least ``max_bytes`` (the last one may be short)
    and at most ``max_items``: an item as large as ``max_bytes`` goes alone."""
    chunks: list[list] = []
    current: list = []
    total = 0
    for item in items:
        current.append(item)
        total += size(item)
        if total >= max_bytes or len(current) >= max_items:
            chunks.append(current)
            current, total = [], 0
    if current:
        chunks.append(current)
    return chunks


def _read_chunk(jobs: list[tuple], slot: tuple[str, int] | None = None) -> list[ReadResult]:
    """Run in a parse worker: each file under a CPU bound (``cpu_bound``), its start noted in
    ``slot`` (``_BegunMarks``) first."""
    fd = -1
    if slot is not None:
        with suppress(OSError):
            fd = os.open(slot[0], os.O_WRONLY)
    try:
        out = []
        for begun, job in enumerate(jobs, 1):
            if fd >= 0:
                os.pwrite(fd, begun.to_bytes(4, "little"), 4 * slot[1])  # type: ignore[index]
            with cpu_bound(READ_SECONDS + READ_SECONDS_PER_MB * _job_size(job) / 1e6):
                out.append(read_and_extract(job))
        return out
    finally:
        if fd >= 0:
            os.close(fd)


def _job_size(job: tuple[str, SourceFile, str | None, Layout]) -> int:
    return job[1].size
