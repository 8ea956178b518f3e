"""Read-only access to an index for the servers, safe beside a writer.

sqlite3 connections belong to the thread that opened them, so :class:`ReaderPool` keeps a
fixed set of threads, each with its own read-only :class:`~knoxidx.index.Index`. Every call
runs inside one read transaction: it sees one committed state of the index, old or new,
while a watcher commits (WAL). A connection whose database file was replaced (a rebuild) is
reopened on the next call.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from knoxidx.api.schemas import InputError
from knoxidx.core.store_url import repo_id
from knoxidx.graph.dbfile import file_identity, storage_error
from knoxidx.graph.sqlite_schema import INDEX_DIR
from knoxidx.index import Index
from knoxidx.watch_presence import watcher_elsewhere

T = TypeVar("T")
DEFAULT_READERS = 4


class ReaderPool:
    def __init__(self, root: Path, workers: int = DEFAULT_READERS, *,
                 store_url: str | None = None, repo: str | None = None) -> None:
        """``store_url``: a PostgreSQL store, whose repository ``repo`` (None: every one)
        answers unless a call names another."""
        self.root = root
        self.store_url = store_url
        self.repo = repo
        self._local = threading.local()
        self._executor = ThreadPoolExecutor(max_workers=workers,
                                            thread_name_prefix="knoxidx-reader")

    async def run(self, fn: Callable[[Index], T], repo: str | None = None) -> T:
        """``fn(index)`` on a reader thread, in one read transaction; ``repo`` picks a
        repository of a shared store (``*``: all of them)."""
        future = self._executor.submit(self._call, fn, repo)
        return await asyncio.wrap_future(future)

    def call(self, fn: Callable[[Index], T]) -> T:
        """The same, blocking (for callers outside an event loop)."""
        return self._executor.submit(self._call, fn).result()

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)

    def _call(self, fn: Callable[[Index], T], repo: str | None = None) -> T:
        if self.store_url is not None:
            key = self.repo if repo is None else repo
            index = self._shared_index(key)
            try:
                with index.store.read_snapshot():
                    return fn(index)
            finally:
                if index.store.broken:  # the server went away: reconnect next call
                    self._local.shared.pop(None if key in (None, "*", "") else key, None)
                    index.close()
        if repo is not None:
            raise InputError("'repo' needs a shared store (serve --store postgresql://...)")
        index = self._index()
        try:
            with index.store.read_snapshot():  # one snapshot for every query of this call
                return fn(index)
        except sqlite3.Error as exc:  # damage met by a query: HTTP and MCP say so, with the fix
            raise storage_error(exc, index.store.path) from None

    def _shared_index(self, repo: str | None) -> Index:
        key = None if repo in (None, "*", "") else repo
        cache: dict[str | None, Index] = getattr(self._local, "shared", None) or {}
        self._local.shared = cache
        index = cache.get(key)
        if index is None:
            if key is not None:
                repo_id(key, None)  # a malformed id is the caller's error, not a query
            index = cache[key] = Index.open_shared_reader(self.store_url or "", key, self.root)
        return index

    def _index(self) -> Index:
        index: Index | None = getattr(self._local, "index", None)
        identity = file_identity(index.store.path) if index is not None else None
        if index is not None and identity == self._local.identity:
            return index
        if index is not None:
            index.close()
        index = Index.open_reader(self.root)
        self._local.index = index
        self._local.identity = file_identity(index.store.path)
        return index


def status_of(index: Index, watcher: Any) -> dict[str, Any]:
    """``Index.status()`` plus what the watcher is doing: the one running in this process, or
    else one that another process runs (``knoxidx watch``; ``watcher.process: "separate"``)."""
    data = index.status()
    retrieval = data["retrieval"] or {}  # what search's vectors cover: a watcher embeds the rest
    data["chunks_embedded"] = retrieval.get("embedded")
    data["chunks_pending"] = retrieval.get("embedding_backlog")
    if watcher is not None:
        state = watcher.snapshot()
    else:
        state = watcher_elsewhere(index.root / INDEX_DIR)
    data["phase"] = state["phase"] if state else "not watching"
    data["progress"] = state["progress"] if state else None
    data["watcher"] = state
    return data
