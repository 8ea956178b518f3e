"""Keeping chunks and full-text search in step with the graph.

Which files to (re-)chunk is decided from what is stored, not from what the caller says
changed: ``chunk_source`` records, per file, the content hash its chunks were made from, and it
is compared with the graph's ``files.hash``. So a run that was killed after the graph committed
but before the chunks did is finished by the next one, and an index built with
``--graph-only`` gets its chunks on the next plain ``knoxidx index``.

Chunking (counting tokens, splitting identifiers for FTS5, the names and declarations rows)
mostly happens in the parse workers, on the bytes and facts they have just extracted
(``chunk_source``, handed over as ``premade``), overlapping the graph's writes: on 2 cores a
second pass after the graph cost as much again as the graph. What they did not chunk (a
changed chunker, an index built with ``--graph-only``, a run killed before its chunks were
written) is chunked here, in worker processes when there are many files (see
``_pool_method``). The parent only writes, all of it in one transaction: lexical search sees
the old chunks or the new ones, never half.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import xxhash

from knoxidx.core.files import NO_LIMIT, read_regular
from knoxidx.parse.engine import engine_fingerprint
from knoxidx.parse.standing import STANDING
from knoxidx.parse.worker_limits import die_with_parent, may_fork
from knoxidx.retrieval.chunker import Chunk, ChunkBudget, chunk_file
from knoxidx.retrieval.store import ChunkRows, ChunkStore, chunk_rows

if TYPE_CHECKING:
    from knoxidx.graph.protocol import IndexedGraph

Progress = Callable[[str, int, int], None]
# Bump when chunk_file's output (or what the store derives from it) changes for the same
# input: every file is then re-chunked (chunks whose content is unchanged keep their vectors).
# 3: the names source's table (``chunk_name``); 4: its name parts leave out letters and numbers;
# 5: the declarations source's texts (``chunk_declaration``); 6: a window's overlap stops at its
# middle (a run of blank lines gave a window per line); 7: a line over the budget is cut within
# the line; 8: the names' stems join an adverb to its word (``terms.word_stem``); 9: a file
# named after its directory (``clone/main.go``) gives its definitions the directory's name;
# 10: only Rust's and JavaScript's source folders are passed over for it (``numpy/lib``)
CHUNKER_VERSION = "10"
# Below this many files a pool costs more than it saves (fork + tokenizer load per worker).
POOL_THRESHOLD = 24
# ... and a pool started by the forkserver (in a watcher: see _pool_method), whose workers
# import the chunker afresh: ~1.1 s more a batch. Measured in a watcher on 2 cores, batch
# medians: 40 files 0.56 s chunked here, 0.76 s forked, 1.80 s from the forkserver; 400
# files 4.3 s here, 4.6 s from the forkserver.
FORKSERVER_POOL_THRESHOLD = 1000


@dataclass(slots=True)
class ChunkRefresh:
    files_chunked: int = 0
    files_removed: int = 0
    added: int = 0  # new chunks (pending embedding)
    kept: int = 0  # unchanged chunks (vector kept)
    removed: int = 0  # chunks dropped
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class ChunkedFile:
    path: str
    chunks: list[Chunk]
    # made in a worker, so the writer only writes; None in this process: the store makes them
    # for the chunks it inserts (an edit keeps most of a file's chunks, whose rows stay)
    rows: list[ChunkRows] | None
    source_hash: str  # the graph's hash if the file on disk still has it, else "" (redo later)
    error: str = ""  # chunking failed: the old chunks stay, the file is retried next run
    gone: bool = False  # deleted since the graph read it


def chunker_id(budget: ChunkBudget) -> str:
    """What the chunks depend on besides the file: chunker version, budget, tokenizer, and the
    engine that extracted the definitions they are cut along (a file whose bytes did not change
    but whose definitions did, after an upgrade, is chunked again: one key for both)."""
    from knoxidx.retrieval.tokens import TOKENIZER_FILE_ENV

    tokenizer = os.environ.get(TOKENIZER_FILE_ENV)
    if tokenizer is None:
        from knoxidx.retrieval.model_files import tokenizer_path

        tokenizer = str(tokenizer_path())
    size = Path(tokenizer).stat().st_size
    return (f"{CHUNKER_VERSION}:{budget}:{Path(tokenizer).parent.name}:{size}:"
            f"{engine_fingerprint()}")


def refresh_chunks(
    index: IndexedGraph,
    store: ChunkStore,
    *,
    jobs: int | None = None,
    progress: Progress | None = None,
    budget: ChunkBudget | None = None,
    session: Any = None,
    premade: Mapping[str, ChunkedFile] | None = None,
) -> ChunkRefresh:
    """Re-chunk every file whose content changed since its chunks were made, drop the chunks
    of files no longer indexed; one transaction. ``session``: the writer's
    :class:`~knoxidx.update.session.WriterSession`, whose copies of the indexed hashes and the
    chunk sources stand for reading both tables again (every write below is reported to it).
    ``premade``: files the parse workers chunked as they extracted them (``chunk_source``, with
    this ``budget``), by path; one whose hash is the graph's is not chunked again."""
    t0 = time.perf_counter()
    budget = budget or ChunkBudget()
    refresh = ChunkRefresh()
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    wanted_id = chunker_id(budget)
    with store.transaction():
        store.ensure_schema()
        rechunk_all = store.meta("chunker") != wanted_id
        if rechunk_all:
            store.forget_sources()
            if session is not None:
                session.chunk_sources_forgotten()
            store.set_meta("chunker", wanted_id)
        if session is not None:
            indexed = session.ok_hashes(index.store)
            sources = session.chunk_sources(store)
        else:
            indexed = index.store.ok_file_hashes()
            sources = store.sources()
        # after forget_sources, a file removed in this update has chunks but no source: the
        # chunk table's own paths say which (read only then: a whole-table scan per update)
        stored = set(sources) | set(store.paths()) if rechunk_all else set(sources)
        for path in sorted(stored - set(indexed)):
            refresh.removed += store.remove_file(path)
            refresh.files_removed += 1
            if session is not None:
                session.chunk_source_removed(path)
        todo = sorted((p, h) for p, h in indexed.items() if sources.get(p) != h)
        for result in _chunk_all(index, todo, workers, budget, progress, premade or {}):
            if result.error:
                refresh.errors.append(f"{result.path}: {result.error}")
                continue
            if result.gone:
                refresh.removed += store.remove_file(result.path)
                refresh.files_removed += 1
                if session is not None:
                    session.chunk_source_removed(result.path)
                continue
            update = store.replace_file(result.path, result.chunks, result.rows)
            store.set_source(result.path, result.source_hash)
            if session is not None:
                session.chunk_source_set(result.path, result.source_hash)
            refresh.files_chunked += 1
            refresh.added += update.added
            refresh.kept += update.kept
            refresh.removed += update.removed
    refresh.seconds = time.perf_counter() - t0
    return refresh


# ---- chunking, in this process or in workers -------------------------------------------------


def _chunk_all(
    index: IndexedGraph,
    todo: Sequence[tuple[str, str]],
    workers: int,
    budget: ChunkBudget,
    progress: Progress | None,
    premade: Mapping[str, ChunkedFile],
) -> Iterator[ChunkedFile]:
    ready = [premade[path] for path, digest in todo
             if path in premade and premade[path].source_hash == digest]
    if ready:
        done = {result.path for result in ready}
        todo = [(path, digest) for path, digest in todo if path not in done]
        yield from ready
    total = len(todo)
    if progress is not None:
        progress("chunk", 0, total)
    root = str(index.root)
    load_facts = index.store.load_facts
    method = _pool_method(total) if workers > 1 and total >= POOL_THRESHOLD else None
    if method is None:
        results: Iterator[ChunkedFile] = (
            chunk_one(root, path, digest, load_facts(path), budget, with_rows=False)
            for path, digest in todo
        )
        yield from _with_progress(results, total, progress)
        return
    # Workers get the definitions from here rather than opening the database themselves: a
    # forked child must not touch SQLite state inherited from its parent (about 0.3 s for
    # Django's 1,000 files, against seconds of chunking).
    jobs = [(root, path, digest, load_facts(path), budget) for path, digest in todo]
    # tokenizers warns (and drops its thread pool) in a child forked after the parent used it
    if "tokenizers" in sys.modules:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    ctx = multiprocessing.get_context(method)
    batch = max(1, min(16, total // (workers * 8) or 1))
    with ctx.Pool(min(workers, total), initializer=die_with_parent,
                  initargs=(os.getpid(),)) as pool:
        yield from _with_progress(pool.imap_unordered(_chunk_job, jobs, batch), total, progress)


def _pool_method(files: int) -> str | None:
    """How the workers chunking ``files`` files start; None: chunk in this process. Never
    by a fork of a process with threads (a server's watcher): a fork copies the locks other
    threads hold, and a worker that inherited the server's do-nothing SIGTERM handler
    outlived Pool.terminate(), which then waited on it for ever, the write lock held. A
    watcher's workers for a large batch start from the forkserver its standing parse worker
    came from; any other process with threads chunks alone (a forkserver's worker imports the
    caller's main module again, which a script without a main guard does not survive)."""
    if may_fork():
        return "fork"
    if STANDING.get() is not None and files >= FORKSERVER_POOL_THRESHOLD:
        return "forkserver"
    return None


def _with_progress(
    results: Iterator[ChunkedFile], total: int, progress: Progress | None
) -> Iterator[ChunkedFile]:
    for i, result in enumerate(results, 1):
        yield result
        if progress is not None and (i % 16 == 0 or i == total):
            progress("chunk", i, total)


def _chunk_job(job: tuple[str, str, str, Any, ChunkBudget]) -> ChunkedFile:
    return chunk_one(*job)


def chunk_one(
    root: str, path: str, expected_hash: str, facts: Any, budget: ChunkBudget,
    with_rows: bool = True,
) -> ChunkedFile:
    """Chunk one indexed file from its source on disk and the definitions the graph stored
    (``facts``: its FileFacts, None if it has none any more). Never raises: a failure is
    reported and the file retried by the next update."""
    if facts is None:
        return ChunkedFile(path, [], [], "", gone=True)
    try:  # a FIFO put in the file's place is not waited on
        source = read_regular(os.path.join(root, path), NO_LIMIT)
    except FileNotFoundError:
        return ChunkedFile(path, [], [], "", gone=True)
    except OSError as exc:
        return ChunkedFile(path, [], [], "", error=f"unreadable: {exc.strerror or exc}")
    # if the file changed since the graph read it, its definitions may not match: chunk it
    # anyway (the chunker ignores definitions outside the file) and redo it next update
    same = xxhash.xxh3_128_hexdigest(source) == expected_hash
    return chunk_source(path, source, expected_hash if same else "", facts, budget, with_rows)


def chunk_source(
    path: str, source: bytes, source_hash: str, facts: Any, budget: ChunkBudget,
    with_rows: bool = True,
) -> ChunkedFile:
    """Chunk ``source``, the bytes whose hash is ``source_hash`` ("": not the graph's), with
    its ``facts``; a parse worker calls it with the bytes and facts it has just extracted.
    Never raises."""
    try:
        chunks = chunk_file(path, source, facts.language, facts.defs, budget=budget)
        return ChunkedFile(
            path, chunks, [chunk_rows(c) for c in chunks] if with_rows else None, source_hash
        )
    except Exception as exc:  # noqa: BLE001  (one file's failure must not lose the others)
        return ChunkedFile(path, [], [], "", error=f"{type(exc).__name__}: {exc}")
