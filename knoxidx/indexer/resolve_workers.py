"""Resolve many files on every core: the parent and forked children claim slices in turn.

The children inherit the preloaded workspace (every fact in memory, so no child touches the
database) and send their results back; the parent resolves too, and also writes every result.
Slices are claimed from a shared counter rather than dealt out in advance, so the parent,
which has the writing to do besides, simply claims fewer of them and nobody waits at the end.
"""

from __future__ import annotations

import multiprocessing
import queue
import signal
from collections.abc import Callable, Iterator
from typing import Any

from knoxidx.errors import KnoxidxError
from knoxidx.graph.resolve import FileResolution, Resolver
from knoxidx.graph.workspace import StoreWorkspace
from knoxidx.indexer.heap import frozen_heap

# Slices per process: small enough to balance the load, large enough that a slice's files
# (one package, in path order) share the resolver's warm caches.
SLICES_PER_PROCESS = 12
MIN_SLICE = 16
POLL_SECONDS = 0.5

_FORKED: tuple[StoreWorkspace, list[list[str]], Any] | None = None  # what children inherit


def resolve_in_parallel(
    workspace: StoreWorkspace, paths: list[str], workers: int,
    first: Callable[[], None] = lambda: None,
) -> Iterator[FileResolution]:
    """Every path's resolution, in no particular order, from the parent and ``workers - 1``
    forked children. The parent runs ``first`` once the children have started: its own
    serial work, done while they resolve."""
    global _FORKED
    size = max(MIN_SLICE, -(-len(paths) // (workers * SLICES_PER_PROCESS)))
    slices = [paths[i : i + size] for i in range(0, len(paths), size)]
    ctx = multiprocessing.get_context("fork")
    counter = ctx.Value("i", 0)
    results = ctx.Queue()
    _FORKED = (workspace, slices, counter)
    children = [ctx.Process(target=_child, args=(results,), daemon=True)
                for _ in range(workers - 1)]
    # Out of the collector's sight, what the children inherit: its traversals would otherwise
    # touch (and so copy) every inherited page in each child.
    with frozen_heap():
        try:
            for child in children:
                child.start()
            first()
            resolver = Resolver(workspace)
            running = len(children)
            while (i := _claim(counter)) < len(slices):
                for path in slices[i]:
                    yield resolver.resolve_file(path)
                while running:  # what the children finished meanwhile, without waiting
                    try:
                        batch = results.get_nowait()
                    except queue.Empty:
                        break
                    running -= batch is None
                    yield from batch or ()
            del resolver
            while running:
                try:
                    batch = results.get(timeout=POLL_SECONDS)
                except queue.Empty:
                    if any(c.exitcode not in (None, 0) for c in children):
                        raise KnoxidxError(
                            "a resolver worker process died (out of memory?); the index is "
                            "unchanged, run `knoxidx index` again") from None
                    continue
                running -= batch is None
                yield from batch or ()
        finally:
            for child in children:
                if child.is_alive():
                    child.terminate()
                child.join()
            results.close()
            _FORKED = None


def _claim(counter: Any) -> int:
    with counter.get_lock():
        i = counter.value
        counter.value = i + 1
    return int(i)


def _child(results: Any) -> None:
    assert _FORKED is not None
    # Ctrl-C reaches the whole process group: the parent stops the children itself (and
    # rolls the update back); a child's own KeyboardInterrupt would only print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    workspace, slices, counter = _FORKED
    resolver = Resolver(workspace)  # one for every slice: its caches stay warm
    while (i := _claim(counter)) < len(slices):
        results.put([_plain(resolver.resolve_file(path)) for path in slices[i]])
    results.put(None)


def _plain(res: FileResolution) -> FileResolution:
    """Edges and unresolved references as plain tuples for the trip to the parent: pickle
    writes a named tuple through a Python call per instance, a plain one in C (the writer only
    indexes them)."""
    res.edges = list(map(tuple, res.edges))  # type: ignore[arg-type]
    res.unresolved = list(map(tuple, res.unresolved))  # type: ignore[arg-type]
    return res
