"""What runs in a parse worker, and how one is started: a pool's task (a chunk of files, each
under a CPU bound), a file read once more in a worker of its own, and the error a file that
kills its worker is recorded with (:mod:`knoxidx.parse.parse_pool` schedules them)."""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import suppress
from pathlib import Path
from typing import Any

from knoxidx.core.files import NO_LIMIT, read_regular
from knoxidx.parse.extract import compiled_languages
from knoxidx.parse.reader import Job, ReadResult, file_hash, read_and_extract
from knoxidx.parse.worker_limits import (
    READ_SECONDS,
    READ_SECONDS_PER_MB,
    cpu_bound,
    die_with_parent,
    limit_worker_memory,
    worker_memory_mb,
)

log = logging.getLogger(__name__)

# what starting a pool raises where processes cannot start that way (or the pool broke idle)
CANNOT_START = (OSError, RuntimeError, BrokenProcessPool)


def new_pool(workers: int, method: str) -> ProcessPoolExecutor:
    """A pool of ``workers`` capped parse workers, started by ``method``."""
    return ProcessPoolExecutor(workers, mp_context=_context(method), initializer=start_worker,
                               initargs=(worker_memory_mb(), os.getpid()))


def start_worker(memory_mb: int, owner: int) -> None:
    """Run first in a pool's worker: its caps, and its end with ``owner``
    (``die_with_parent``)."""
    limit_worker_memory(memory_mb)
    die_with_parent(owner)


def _context(method: str) -> Any:
    """The multiprocessing context a parse worker starts from; a forkserver's preloads this
    module (and with it extraction and the grammars)."""
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload([__name__])
    return ctx


def read_chunk(jobs: list[Job], slot: tuple[str, int] | None = None) -> list[ReadResult]:
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
            with cpu_bound(cpu_seconds(job)):
                out.append(read_and_extract(job))
        return out
    finally:
        if fd >= 0:
            os.close(fd)


# A forked pool's chunks, each of one language, when they are claimed (``read_claimed``): set
# by the parent before its workers fork, so that each inherits them.
ROUTED: list[list[Job]] = []


def read_claimed(path: str) -> tuple[int, list[ReadResult]]:
    """Run in a forked parse worker, once per chunk of ``ROUTED``: claim one and read it,
    noting its progress as ``read_chunk`` does. The table of claims follows the begun counts
    in the file at ``path`` (``parse_pool._BegunMarks``). Returns the chunk's number with its
    results (-1: none was left, which happens only when the pool broke)."""
    import fcntl

    chunks = ROUTED
    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # (released when closed)
        k = _claim(fd, chunks)
    finally:
        os.close(fd)
    return (k, read_chunk(chunks[k], (path, k))) if k >= 0 else (k, [])


def claims_size(chunks: list[list[Job]]) -> int:
    """The bytes of the table of claims ``read_claimed`` reads after the begun counts: a byte
    per chunk (claimed), then a byte per language of ``chunk_languages`` (taken)."""
    return len(chunks) + len(chunk_languages(chunks))


def chunk_languages(chunks: list[list[Job]]) -> list[str]:
    return sorted({chunk[0][1].language for chunk in chunks})


def _claim(fd: int, chunks: list[list[Job]]) -> int:
    """The chunk this worker reads next, marked claimed: the first unclaimed one (they come
    largest files first) in a language it has compiled, else in one no worker has taken yet,
    else any. The parent compiled every language's queries before its pool forked (0.35 s
    on the benchmark corpus, on one core); now each worker compiles those of the chunks it
    claims, about half the languages, and shares one only at the end, when its chunks are
    what is left."""
    count = len(chunks)
    languages = chunk_languages(chunks)
    table = os.pread(fd, claims_size(chunks), 4 * count)
    claimed, taken = table[:count], table[count:]
    mine = compiled_languages()
    for rule in range(3):
        for k in range(count):
            if claimed[k]:
                continue
            which = languages.index(chunks[k][0][1].language)
            if (rule == 2 or (rule == 0 and languages[which] in mine)
                    or (rule == 1 and not taken[which])):
                os.pwrite(fd, b"\x01", 4 * count + k)
                os.pwrite(fd, b"\x01", 5 * count + which)
                return k
    return -1


def job_size(job: Job) -> int:
    return job[1].size


def cpu_seconds(job: Job) -> float:
    """The CPU a worker may spend reading ``job``'s file (see ``cpu_bound``)."""
    return READ_SECONDS + READ_SECONDS_PER_MB * job_size(job) / 1e6


def read_alone(root: Path, job: Job, forkserver: bool) -> list[ReadResult]:
    """``job`` read once more in a worker of its own: a plain process rather than a pool's, so
    that when the file kills this one too, its exit status tells how (a pool hides it), and
    the file is recorded as an error that says so. Started from the forkserver when
    ``forkserver`` (in a long-running process, as the round's workers were), or forked where
    that cannot start."""
    started = None
    if forkserver:
        try:
            started = _start_alone(job, "forkserver")
        except CANNOT_START as exc:
            log.warning("a parse worker could not start from the forkserver (%s); forking", exc)
    worker, receiver = started or _start_alone(job, "fork")
    try:
        results: list[ReadResult] | None = receiver.recv()
    except EOFError:  # the worker died before it sent anything
        results = None
    finally:
        receiver.close()
    worker.join()
    return results if results is not None else [worker_died(root, job, worker.exitcode)]


def _start_alone(job: Job, method: str) -> tuple[Any, Any]:
    """A started worker reading ``job`` and the end of the pipe its results come back on."""
    ctx = _context(method)
    receiver, sender = ctx.Pipe(duplex=False)
    worker = ctx.Process(target=run_alone, args=(sender, job, worker_memory_mb(), os.getpid()),
                         daemon=True)
    try:
        worker.start()
    except BaseException:
        receiver.close()
        raise
    finally:
        sender.close()  # the worker's copy only: recv() then ends when the worker does
    return worker, receiver


def run_alone(sender: Any, job: Job, memory_mb: int, owner: int) -> None:
    """Run in the worker :func:`read_alone` starts: capped, and ending with ``owner``, as a
    pool's workers are."""
    limit_worker_memory(memory_mb)
    die_with_parent(owner)
    sender.send(read_chunk([job]))
    sender.close()


def worker_died(root: Path, job: Job, exitcode: int | None) -> ReadResult:
    """The record of a file whose parse killed its worker on its own: an error that says how
    (``exitcode``: the worker's, as multiprocessing reports it), with the file's hash (so an
    unchanged file is not tried again by the next update)."""
    src = job[1]
    try:
        digest = file_hash(read_regular(root / src.path, NO_LIMIT))
    except OSError:
        digest = ""
    return ReadResult(src.path, src.language, src.size, src.mtime_ns, "error", digest,
                      f"the parse worker died on this file: {death_cause(exitcode, job)}; "
                      "not indexed")


def death_cause(exitcode: int | None, job: Job) -> str:
    """Why a parse worker died, from its exit status: a negative one is the signal that killed
    it. SIGXCPU is its CPU bound (``cpu_bound``); SIGKILL, sent from outside, most likely the
    kernel's out-of-memory killer; tree-sitter crashes or aborts when an allocation fails,
    which under the worker's address-space cap (``limit_worker_memory``) means its memory ran
    out."""
    if exitcode == -signal.SIGXCPU:
        return f"it ran past its CPU bound of {cpu_seconds(job):.0f} s"
    if exitcode == -signal.SIGKILL:
        return "SIGKILL, most likely from the out-of-memory killer"
    if exitcode is not None and exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return (f"{name}, most likely out of memory under its {worker_memory_mb():,} MB cap "
                "(KNOXIDX_WORKER_MEMORY_MB)")
    return f"it exited with status {exitcode} and no result"
