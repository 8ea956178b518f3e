"""Reading and extracting the files an update needs, on every core: a pool of forked workers,
each handed files in chunks of about equal bytes, largest first."""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from knoxidx.graph.layout import Layout
from knoxidx.graph.store import FileState
from knoxidx.indexer.discovery import SourceFile
from knoxidx.indexer.extract import prepare
from knoxidx.indexer.reader import ReadResult, read_and_extract

Progress = Callable[[str, int, int], None]
# Below this many files, worker processes cost more than they save.
POOL_THRESHOLD = 48
# What a parse worker is handed at a time: up to this many bytes of files (one large file
# alone), at most this many files.
CHUNK_BYTES = 256 * 1024
CHUNK_FILES = 64


def read_all(
    root: Path, jobs: list[SourceFile], known: dict[str, FileState], layout: Layout,
    workers: int, progress: Progress | None,
) -> Iterator[ReadResult]:
    args = [(str(root), f, known[f.path].hash if f.path in known else None, layout)
            for f in jobs]
    total = len(args)
    if workers <= 1 or total < POOL_THRESHOLD:
        for i, a in enumerate(args, 1):
            yield read_and_extract(a)
            if progress and (i % 64 == 0 or i == total):
                progress("parse", i, total)
        return
    # Largest files first, in chunks of about equal bytes: the last chunks are a few small
    # files, so no worker finishes long after the other, and the first results come as soon
    # as one large file is read (results arrive in any order anyway).
    args.sort(key=_job_size, reverse=True)
    chunks = sized_chunks(args, _job_size, CHUNK_BYTES, CHUNK_FILES)
    prepare({job[1].language for job in args})  # the workers inherit them compiled
    ctx = multiprocessing.get_context("fork")
    done = 0
    with ctx.Pool(workers) as pool:
        for results in pool.imap_unordered(_read_chunk, chunks):
            for result in results:
                yield result
            reported, done = done, done + len(results)
            if progress and (done // 64 > reported // 64 or done == total):
                progress("parse", done, total)


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


def _read_chunk(jobs: list[tuple]) -> list[ReadResult]:
    return [read_and_extract(job) for job in jobs]


def _job_size(job: tuple[str, SourceFile, str | None, Layout]) -> int:
    return job[1].size
