"""Reading and extracting the files an update needs, on every core: a pool of forked workers
reading files in chunks of about equal bytes, largest first, each worker claiming chunks in
the languages whose queries it has compiled (``parse_worker.read_claimed``); one worker for a
few files. Parsing never runs in the calling process (see ``limit_worker_memory``)."""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from contextlib import suppress
from pathlib import Path
from typing import Any

from knoxidx.core.file_state import FileState
from knoxidx.graph.layout import Layout
from knoxidx.parse import parse_worker
from knoxidx.parse.discovery import SourceFile
from knoxidx.parse.extract import prepare
from knoxidx.parse.parse_worker import CANNOT_START, job_size, new_pool, read_alone, read_chunk
from knoxidx.parse.reader import ReadResult
from knoxidx.parse.standing import STANDING, Standing
from knoxidx.parse.worker_limits import may_fork

log = logging.getLogger(__name__)
Progress = Callable[[str, int, int], None]
# Below this many files, more than one worker process costs more than it saves.
POOL_THRESHOLD = 48
# What a parse worker is handed at a time: up to this many bytes of files (one large file
# alone), at most this many files.
CHUNK_BYTES = 256 * 1024
CHUNK_FILES = 64


def read_all(
    root: Path, jobs: list[SourceFile], known: dict[str, FileState], layout: Layout,
    workers: int, progress: Progress | None, names: bool = True, chunker: Any = None,
    keep_minified: bool = False,
) -> Iterator[ReadResult]:
    """Each file of ``jobs`` read and extracted; ``names``: whether the results need their
    definition names (``ReadResult.names``); ``chunker``: what makes each extracted file's
    retrieval chunks in the worker too (``reader.Job``; ``ReadResult.chunked``);
    ``keep_minified``: extract minified files too, not skip them (``reader.looks_minified``)."""
    args = [(str(root), f, known[f.path].hash if f.path in known else None, layout, names,
             chunker, keep_minified) for f in jobs]
    total = len(args)
    if total == 0:
        return
    standing = None
    if workers <= 1 or total < POOL_THRESHOLD:
        # Few files (an edit, a watcher's batch) or --jobs 1: one worker, not this process.
        # A file whose parse runs away (see limit_worker_memory) then costs that file, not the
        # caller: a watcher killed by the OOM killer, or an update that dies on the same file
        # every time it is run. A fork costs ~30 ms on a one-file update, so a long-running
        # process keeps one worker standing instead (see ``standing_worker``).
        workers = 1
        standing = STANDING.get()
    # Largest files first, in chunks of about equal bytes: the last chunks are a few small
    # files, so no worker finishes long after the other, and the first results come as soon
    # as one large file is read (results arrive in any order anyway).
    args.sort(key=job_size, reverse=True)
    # inside a watcher, or any process with threads (see may_fork), even a large batch's pool
    # starts from the forkserver rather than from a fork of the process
    method = "forkserver" if STANDING.get() is not None or not may_fork() else "fork"
    routed = method == "fork" and workers > 1 and hasattr(os, "pread")
    if method == "fork" and not routed:
        # one worker: it inherits them compiled, and so do the next update's in a long-lived
        # process; a pool's workers each compile the languages of the chunks they claim
        prepare({job[1].language for job in args})
    done = 0
    for results in _read_chunks(root, _chunks(args, routed), workers, standing, method,
                                routed):
        for result in results:
            yield result
        reported, done = done, done + len(results)
        if progress and (done // 64 > reported // 64 or done == total):
            progress("parse", done, total)


def _chunks(jobs: list[tuple], routed: bool) -> list[list[tuple]]:
    """``jobs`` (largest first) in chunks of about equal bytes; ``routed``: each chunk of one
    language (see ``parse_worker.read_claimed``), the chunks still largest files first."""
    if not routed:
        return sized_chunks(jobs, job_size, CHUNK_BYTES, CHUNK_FILES)
    by_language: dict[str, list[tuple]] = {}
    for job in jobs:
        by_language.setdefault(job[1].language, []).append(job)
    chunks = [chunk for same in by_language.values()
              for chunk in sized_chunks(same, job_size, CHUNK_BYTES, CHUNK_FILES)]
    chunks.sort(key=lambda chunk: job_size(chunk[0]), reverse=True)
    return chunks


def _read_chunks(root: Path, chunks: list[list[tuple]], workers: int,
                 standing: Standing | None = None, method: str = "fork",
                 routed: bool = False) -> Iterator[list[ReadResult]]:
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
        if routed or any(len(chunk) > 1 for chunk in pending):
            with _BegunMarks(pending, claims=routed) as marks:
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
            yield read_alone(root, job, _from_forkserver(standing, method))
        others.sort(key=job_size, reverse=True)
        pending = _chunks(others, routed)


def _one_by_one(root: Path, jobs: list[tuple], workers: int, standing: Standing | None,
                method: str) -> Iterator[list[ReadResult]]:
    """``jobs`` each its own task; those in flight at a break are then read alone, and one that
    kills a worker of its own is recorded as an error."""
    suspects: list[list[tuple]] = []
    yield from _pool_round([[job] for job in jobs], workers, suspects, standing, method)
    for single in suspects:
        yield read_alone(root, single[0], _from_forkserver(standing, method))


def _from_forkserver(standing: Standing | None, method: str) -> bool:
    """Whether a worker of this update starts from the forkserver (a long-running process
    that must not fork itself) rather than by a fork."""
    return standing is not None or method == "forkserver"


class _BegunMarks:
    """A file the parent shares with its parse workers: for the n-th chunk of a round, a 4-byte
    count of the files of it the worker has begun (0: none). A worker that dies leaves its
    count behind, which names the file it died on. Unavailable (no ``pwrite``, no temporary
    file): every count reads 0. With ``claims``, the table a forked pool's workers claim the
    chunks by follows (``parse_worker.read_claimed``, ``parse_worker.claims_size``)."""

    def __init__(self, chunks: list[list[tuple]], claims: bool = False) -> None:
        self.chunks = len(chunks)
        self.path: str | None = None
        self.size = 4 * self.chunks + (parse_worker.claims_size(chunks) if claims else 0)
        self.claims = claims

    def __enter__(self) -> _BegunMarks:
        if hasattr(os, "pwrite"):
            try:
                fd, self.path = tempfile.mkstemp(prefix="knoxidx-begun-")
                with os.fdopen(fd, "wb") as fh:
                    fh.write(bytes(self.size))
                    if self.claims:
                        self.claims = _lockable(fh.fileno())
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


def _lockable(fd: int) -> bool:
    """Whether the workers can lock the file of claims (a temporary directory whose file
    system refuses ``flock`` makes a pool's workers take chunks in turn, as before claims)."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
    except OSError as exc:
        log.warning("parse workers take chunks in turn: the temporary directory refuses "
                    "file locks (%s)", exc)
        return False
    return True


def _pool_round(chunks: list[list[tuple]], workers: int, broken: list[list[tuple]],
                standing: Standing | None = None, method: str = "fork",
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
        started = _start(lambda: new_pool(workers, "forkserver"), chunks,
                         "parse workers could not start from the forkserver (%s); forking",
                         marks)
        if started is not None:
            with started[0]:
                yield from _results(started[1], broken)
            return
    if marks is not None and marks.claims and marks.path is not None:
        yield from _claimed_round(chunks, workers, broken, marks.path)
        return
    with new_pool(workers, "fork") as pool:
        yield from _results(_submit(pool, chunks, marks), broken)


def _claimed_round(chunks: list[list[tuple]], workers: int, broken: list[list[tuple]],
                   path: str) -> Iterator[list[ReadResult]]:
    """``_pool_round`` for a forked pool whose workers claim the chunks themselves
    (``parse_worker.read_claimed``, the table at ``path``): as many tasks as chunks, each
    answering which chunk it read; those not answered when the pool broke are ``broken``."""
    parse_worker.ROUTED = chunks  # inherited by the workers, forked at the first submit
    done: set[int] = set()
    try:
        with new_pool(workers, "fork") as pool:
            futures = [pool.submit(parse_worker.read_claimed, path) for _ in chunks]
            for future in as_completed(futures):
                try:
                    k, results = future.result()
                except BrokenProcessPool:
                    continue
                if k >= 0:
                    done.add(k)
                    yield results
    finally:
        parse_worker.ROUTED = []
    broken.extend(chunk for k, chunk in enumerate(chunks) if k not in done)


def _start(make: Callable[[], ProcessPoolExecutor], chunks: list[list[tuple]], why: str,
           marks: _BegunMarks | None = None,
           ) -> tuple[ProcessPoolExecutor, dict[Any, list[tuple]]] | None:
    """A pool from ``make`` with ``chunks`` submitted (which starts its workers), or None when
    it cannot start, logged with ``why`` (a format for the error)."""
    pool = None
    try:
        pool = make()
        return pool, _submit(pool, chunks, marks)
    except CANNOT_START as exc:
        log.warning(why, exc)
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        return None


def _submit(pool: ProcessPoolExecutor, chunks: list[list[tuple]],
            marks: _BegunMarks | None = None) -> dict[Any, list[tuple]]:
    return {pool.submit(read_chunk, chunk, marks.slot(n) if marks else None): chunk
            for n, chunk in enumerate(chunks)}


def _results(futures: dict[Any, list[tuple]],
             broken: list[list[tuple]]) -> Iterator[list[ReadResult]]:
    for future in as_completed(futures):
        try:
            yield future.result()
        except BrokenProcessPool:
            broken.append(futures[future])



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


