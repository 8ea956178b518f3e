"""Resolve many files on every core: the parent and forked children claim slices in turn.

The children inherit the preloaded workspace (every fact in memory, so no child touches the
database) and send their results back; the parent resolves too, and also writes every result.
Slices are claimed from a shared counter rather than dealt out in advance, so the parent,
which has the writing to do besides, simply claims fewer of them and nobody waits at the end.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import sqlite3
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from knoxidx.core.errors import KnoxidxError
from knoxidx.core.heap import frozen_heap
from knoxidx.core.model import EdgeType
from knoxidx.graph.dbfile import storage_error
from knoxidx.graph.resolve import FileResolution, Resolver
from knoxidx.graph.workspace import StoreWorkspace
from knoxidx.parse.worker_limits import die_with_parent

if TYPE_CHECKING:
    from knoxidx.graph.spool import ResolutionSpool

# Each slice takes this share of the paths left per process (guided scheduling): large slices
# first, whose files (a package's, in path order) share the resolver's warm caches, then ever
# smaller ones, so that the processes finish together (with equal slices of a twelfth, one
# process went on alone for up to a whole slice, ~0.5 s on the benchmark corpus).
SLICE_SHARE = 4
MIN_SLICE = 16
DRAIN_EVERY = 32  # files per batch a child sends, and the parent resolves between collecting
POLL_SECONDS = 0.5

# what children inherit
_FORKED: tuple[StoreWorkspace, list[list[str]], Any, ResolutionSpool | None,
              dict[str, int] | None] | None = None
IMPORTS = EdgeType.IMPORTS.value


def resolve_in_parallel(
    workspace: StoreWorkspace, paths: list[str], workers: int, first: Callable[[], None],
    spool: ResolutionSpool | None = None, ids: dict[str, int] | None = None,
) -> Iterator[FileResolution]:
    """Every path's resolution, in no particular order, from the parent and ``workers - 1``
    forked children. The parent runs ``first`` once the children have started: its own
    serial work, done while they resolve. With a ``spool`` (and the file ``ids``), the
    children write their rows into it and send back what the parent reads besides
    (``FileResolution.spooled``); a child that cannot write there fails the update."""
    global _FORKED
    slices = guided_slices(paths, workers)
    ctx = multiprocessing.get_context("fork")
    counter = ctx.Value("i", 0)
    results = ctx.Queue()
    _FORKED = (workspace, slices, counter, spool, ids)
    children = [ctx.Process(target=_child, args=(results, os.getpid()), daemon=True)
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
                for n, path in enumerate(slices[i], 1):
                    yield resolver.resolve_file(path)
                    if n % DRAIN_EVERY == 0 or n == len(slices[i]):
                        # what the children finished meanwhile, without waiting: their
                        # results would otherwise pile up in their memory
                        while running:
                            try:
                                batch = results.get_nowait()
                            except queue.Empty:
                                break
                            running -= batch is None
                            yield from _received(batch)
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
                yield from _received(batch)
        finally:
            for child in children:
                if child.is_alive():
                    child.terminate()
                child.join()
            results.close()
            _FORKED = None


def guided_slices(paths: list[str], workers: int) -> list[list[str]]:
    """``paths`` cut in order into slices of ``1 / (SLICE_SHARE * workers)`` of what is left
    (at least MIN_SLICE)."""
    slices = []
    start = 0
    while start < len(paths):
        size = max(MIN_SLICE, (len(paths) - start) // (SLICE_SHARE * workers))
        slices.append(paths[start : start + size])
        start += size
    return slices


def _claim(counter: Any) -> int:
    with counter.get_lock():
        i = counter.value
        counter.value = i + 1
    return int(i)


def _child(results: Any, parent: int) -> None:
    assert _FORKED is not None
    # Ctrl-C reaches the whole process group: the parent stops the children itself (and
    # rolls the update back); a child's own KeyboardInterrupt would only print a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent(parent)
    workspace, slices, counter, spool, ids = _FORKED
    resolver = Resolver(workspace)  # one for every slice: its caches stay warm
    writer = None
    try:
        writer = spool.writer() if spool is not None else None
        while (i := _claim(counter)) < len(slices):
            paths = slices[i]
            for start in range(0, len(paths), DRAIN_EVERY):  # a large first slice is not held
                batch = [resolver.resolve_file(p) for p in paths[start : start + DRAIN_EVERY]]
                if writer is None:
                    results.put([_plain(res) for res in batch])
                    continue
                assert ids is not None
                writer.write([(ids[res.path], res) for res in batch])
                results.put([_spooled(res) for res in batch])
        if writer is not None:
            writer.close()
    except (OSError, sqlite3.Error) as exc:  # the spool's disk is full, say
        if spool is None:  # not the spool's: the child dies, and the parent says so
            raise
        results.put(storage_error(exc, spool.path))
        return
    except KnoxidxError as exc:  # stored facts that do not decode: the parent raises it
        results.put(exc)
        return
    results.put(None)


def _received(batch: list[FileResolution] | KnoxidxError | None) -> list[FileResolution]:
    """A child's batch, or the error it stopped at, raised."""
    if isinstance(batch, KnoxidxError):
        raise batch
    return batch or []


def _spooled(res: FileResolution) -> FileResolution:
    """What the parent needs of a resolution whose rows are in the spool: its Imports edges
    (the module layer is built from them) and its error."""
    return FileResolution(
        res.path, [tuple(e) for e in res.edges if e[2] == IMPORTS],  # type: ignore[misc]
        error=res.error, spooled=True)


def _plain(res: FileResolution) -> FileResolution:
    """Edges and unresolved references as plain tuples for the trip to the parent: pickle
    writes a named tuple through a Python call per instance, a plain one in C (the writer only
    indexes them)."""
    res.edges = list(map(tuple, res.edges))  # type: ignore[arg-type]
    res.unresolved = list(map(tuple, res.unresolved))  # type: ignore[arg-type]
    return res
