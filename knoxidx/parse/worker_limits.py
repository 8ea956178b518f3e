"""The caps a parse worker runs under: its address space (tree-sitter's error recovery can
allocate without bound on a few kB of mangled code) and the CPU one file may take (its query
cursor can run for hours on a pathological file). A worker that hits one dies alone, and the
pool records its file as an error (:mod:`knoxidx.parse.parse_worker`)."""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from knoxidx.core.config import ConfigError
from knoxidx.core.heap import address_space_bytes, process_alive
from knoxidx.core.limits import WHOLE_NUMBER

# What a parse worker may allocate beyond its size when it starts (see limit_worker_memory).
WORKER_MEMORY_MB = 1024
WORKER_MEMORY_ENV = "KNOXIDX_WORKER_MEMORY_MB"
# The CPU one file may take in a parse worker, read to facts (see cpu_bound): 5x and more the
# parse's own deadline; the slowest file of the benchmark corpus takes well under a second.
READ_SECONDS = 10.0
READ_SECONDS_PER_MB = 20.0


def worker_memory_mb() -> int:
    """What a parse worker may allocate beyond its size at start, in MiB (read in the caller,
    so that a worker started by the forkserver obeys the caller's environment)."""
    text = os.environ.get(WORKER_MEMORY_ENV, "").strip()
    if not text:
        return WORKER_MEMORY_MB
    if not WHOLE_NUMBER.fullmatch(text) or int(text) < 1:  # a traceback, or a cap below zero
        raise ConfigError(f"${WORKER_MEMORY_ENV} must be a whole number of MiB above 0 in the "
                          f"digits 0-9, not {text!r}")
    return int(text)


def limit_worker_memory(extra_mb: int | None = None) -> None:
    """Cap a parse worker's address space at what it has now plus ``extra_mb`` (default
    ``worker_memory_mb()``): tree-sitter's error recovery can allocate without bound on a few
    kB of mangled code (2.9 GB for 6.4 kB, found by bench.fuzz), and a capped worker dies of it
    alone instead of the machine running out of memory. ``KNOXIDX_WORKER_MEMORY_MB`` sets the
    cap. (Free heap the worker inherits from its parent counts as its size: it may reuse that
    as well.)"""
    size = address_space_bytes()
    try:
        import resource

        # a worker killed by its caps (this one, cpu_bound's) leaves no core file behind
        resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
        extra = (worker_memory_mb() if extra_mb is None else extra_mb) << 20
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        soft = size + extra
        if size >= 0 and (hard == resource.RLIM_INFINITY or soft < hard):
            resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    except (ImportError, OSError, ValueError):
        pass  # no /proc, no limits: the worker runs uncapped, as before


@contextmanager
def cpu_bound(seconds: float) -> Iterator[None]:
    """Kill this process (SIGXCPU, no core file) if the block uses over ``seconds`` of CPU.

    The parse has a deadline of its own (``tree_parse.parse_budget``), but nothing else a worker
    does had one: tree-sitter's query cursor can take hours on a few kB (a Go struct swallowing
    thousands of names, found by bench.fuzz), and a worker that never returns hung the whole
    update. Killed, it costs its file alone (``_read_chunks``). Where rlimits are missing the
    block runs unbounded."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        usage = resource.getrusage(resource.RUSAGE_SELF)
        limit = int(usage.ru_utime + usage.ru_stime + seconds) + 1
        if hard != resource.RLIM_INFINITY:
            limit = min(limit, hard)
        resource.setrlimit(resource.RLIMIT_CPU, (limit, hard))
    except (ImportError, OSError, ValueError):
        yield
        return
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def end_with(owner: int) -> None:
    """End this worker when process ``owner`` (the one that made its pool) ends. A pool's
    worker waits for work on a queue whose write end it holds too, so an owner killed outright
    (SIGKILL, the OOM killer) left its workers waiting for ever: ~35 MB each, and beside a
    standing worker its forkserver, whose pipe the worker keeps open."""
    def wait() -> None:
        try:
            fd = os.pidfd_open(owner)  # Linux 5.3+: readable once the process has ended
        except (AttributeError, OSError):
            while process_alive(owner):
                time.sleep(1.0)
        else:
            select.select([fd], [], [])
        os._exit(0)

    try:
        threading.Thread(target=wait, name="knoxidx-owner", daemon=True).start()
    except RuntimeError:  # no thread near the memory cap: the worker works as before
        pass


# prctl(2)'s option that asks the kernel to send a signal when the parent dies (linux/prctl.h)
PR_SET_PDEATHSIG = 1


def die_with_parent(owner: int) -> None:
    """Run first in every worker process: it ends when ``owner`` (the process that started
    it) does, however that ends. An indexer killed outright (SIGKILL, the OOM killer) left a
    forked resolver worker waiting on a lock its parent died holding, and with it the index's
    write lock, for good. On Linux the kernel kills the worker when its parent dies
    (``PR_SET_PDEATHSIG``: no traceback, nothing written after); ``end_with`` watches
    ``owner`` besides (every platform, and a worker whose parent is a forkserver). SIGTERM
    ends the worker as by default: a server's handler, inherited by a fork, ignored it, and
    ``Pool.terminate()`` then waited on that worker for ever."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass  # no prctl: end_with alone
    end_with(owner)  # (which also ends it at once if ``owner`` died before the prctl)


def may_fork() -> bool:
    """Whether this process may fork a worker that runs on in its copy of the parent: only
    while it has one thread. A fork copies a lock another thread holds, held for good: a
    server's reader inside SQLite, a thread writing a log line; the child then waits on it for
    ever, and the update that waits on the child hangs holding the write lock. A process with
    threads (a server, a watcher) starts its workers from a forkserver, or works alone."""
    return threading.active_count() == 1
