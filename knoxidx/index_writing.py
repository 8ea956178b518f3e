"""How a :class:`knoxidx.Index` writes: an update (a first build in a scratch database, else one
transaction for the graph, its chunks and the history's new commits), the embedding of pending
chunks, and the single-writer lock that both take, or that a watcher holds for its life."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from knoxidx.graph.dbfile import storage_error
from knoxidx.graph.sqlite_schema import INDEX_DIR
from knoxidx.graph.store import SQLiteStore

if TYPE_CHECKING:
    from knoxidx.graph.protocol import GraphReads, GraphStore

# An update checks the whole database first only up to this size (~0.05 s): beyond it the
# check would cost more than a typical incremental update (see SQLiteStore.quick_check).
QUICK_CHECK_MAX_BYTES = 8 * 1024 * 1024

_Writing = TypeVar("_Writing", bound="IndexWriting")


class IndexWriting:
    """The writing side of :class:`knoxidx.Index`, over its ``root``, ``store`` and ``q``."""

    root: Path
    store: GraphStore
    q: GraphReads

    def update(self, *, jobs: int | None = None, max_bytes: int | None = None,
               progress: Any = None, wait: bool = False, retrieval: bool = True,
               embed: bool = False, rebuild: bool = False, history: bool = True) -> Any:
        """Bring the index up to date: the graph and, unless ``retrieval`` is off, chunks and
        lexical search for the changed files, and unless ``history`` is off, the new commits
        of the git history, in one transaction; with ``embed`` the pending chunks are
        embedded afterwards (interruptible, resumed by a later run)."""
        lock = self._take_write_lock(wait)
        try:
            if rebuild:  # under the lock: never drop an index another writer is using
                self._forget_session()
                self.store.reset()
            else:  # never write into a damaged database: it would spread the damage
                self.store.quick_check(max_bytes=QUICK_CHECK_MAX_BYTES)
            if isinstance(self.store, SQLiteStore) and self.store.is_empty():
                return self._first_build(jobs=jobs, max_bytes=max_bytes, progress=progress,
                                         retrieval=retrieval, embed=embed, history=history)
            return self._update_locked(jobs=jobs, max_bytes=max_bytes, progress=progress,
                                       retrieval=retrieval, embed=embed, history=history)
        except sqlite3.Error as exc:  # a full disk or damage met mid-update, said plainly
            raise storage_error(exc, self.store.path) from None
        finally:
            lock.release()

    def _first_build(self, *, jobs: int | None, max_bytes: int | None, progress: Any,
                     retrieval: bool, embed: bool, history: bool = True) -> Any:
        """An empty index is built in a scratch database without a journal and renamed into
        place when complete (see ``SQLiteStore.open_scratch``): a reader meanwhile finds the
        empty index, then the whole one; a killed build leaves the empty index as it was."""
        main = self.store
        assert isinstance(main, SQLiteStore)
        scratch = main.open_scratch()
        self._forget_session()
        self.store, self.q = scratch, scratch.queries()
        try:
            report = self._update_locked(jobs=jobs, max_bytes=max_bytes, progress=progress,
                                         retrieval=retrieval, embed=False, history=history)
        except BaseException:
            scratch.discard()
            self.store, self.q = main, main.queries()
            raise
        self.store = main
        try:
            main.install(scratch)
        finally:  # a new connection, whether or not the rename happened
            self.q = main.queries()
        self._forget_session()
        from knoxidx.retrieval.vectors import forget_matrices

        forget_matrices(main.path.parent)
        if retrieval and embed:  # committed batch by batch, into the installed index
            from knoxidx.update.retrieval_steps import embed_into

            embed_into(report.retrieval, self, progress=progress)
        return report

    def _update_locked(self, *, jobs: int | None, max_bytes: int | None, progress: Any,
                       retrieval: bool, embed: bool, discovered: Any = None,
                       history: bool = True) -> Any:
        from knoxidx.core.config import load_settings
        from knoxidx.parse.discovery import DEFAULT_MAX_BYTES
        from knoxidx.update.graph_update import update_index

        session = self._writer_session()
        keep_minified = load_settings(self.root).index_minified  # (read anew: a watcher's too)
        budget = None
        if retrieval:  # the parse workers chunk what they extract, the retrieval phase writes
            from knoxidx.retrieval.chunker import ChunkBudget

            budget = ChunkBudget()
        def write_chunks(report: Any) -> None:
            """Chunks and full-text search in step with the files just written (they need no
            edge): done while the resolvers resolve."""
            from knoxidx.update.retrieval_steps import refresh_retrieval

            report.retrieval = refresh_retrieval(self, jobs=jobs, progress=progress,
                                                 session=session, budget=budget,
                                                 premade=report.chunked)
            report.chunked = {}  # written: not kept for the rest of the update

        # One update is one transaction: a reader sees the graph and the chunks of one state.
        try:
            with self.store.transaction():
                _note_root(self.store, self.root)
                report = update_index(self.root, self.store, jobs=jobs,
                                      max_bytes=max_bytes or DEFAULT_MAX_BYTES,
                                      progress=progress, discovered=discovered, session=session,
                                      walk_cache=self._walk_cache(), chunk_budget=budget,
                                      alongside_resolution=write_chunks if retrieval else None,
                                      keep_minified=keep_minified)
                if retrieval and not report.retrieval:  # (an update that resolved nothing)
                    write_chunks(report)
                report.history = self._refresh_history(history)
        except BaseException:
            self._forget_session()  # rolled back: what it remembers ran ahead of the tables
            raise
        if retrieval and embed:  # committed batch by batch: an interrupted run keeps its work
            from knoxidx.update.retrieval_steps import embed_into

            embed_into(report.retrieval, self, progress=progress)
        return report

    def _refresh_history(self, wanted: bool) -> dict:
        """The new commits of the repository's history, read inside the update's transaction
        (see :mod:`knoxidx.history.refresh`); unwanted, a stored history is dropped rather
        than left to go stale."""
        from knoxidx.history.tables import tables_of

        tables = tables_of(self.store)
        assert tables is not None  # (a writer's store is one repository's)
        if not wanted:
            tables.drop()
            return {"available": False, "reason": "no history: --no-history"}
        from knoxidx.history.refresh import refresh_history

        return refresh_history(self.root, tables)

    def embed(self, *, progress: Any = None, limit: int | None = None,
              wait: bool = False) -> dict:
        """Embed the chunks still pending (under the writer lock)."""
        from knoxidx.update.retrieval_steps import embed_pending_chunks

        lock = self._take_write_lock(wait)
        try:
            self._forget_session()  # it writes through this connection outside an update
            return embed_pending_chunks(self, progress=progress, limit=limit)
        finally:
            lock.release()

    def _take_write_lock(self, wait: bool) -> Any:
        """The writer lock, held, with this Index on the database file now at the index's
        path: the writer it waited for may have renamed a new one over the file it opened."""
        lock = self.store.write_lock()
        lock.acquire(wait=wait)
        try:
            if isinstance(self.store, SQLiteStore) and self.store.reopen_if_replaced():
                self._forget_session()  # it describes the old file's tables
                self.q = self.store.queries()
        except BaseException:
            lock.release()
            raise
        return lock

    def _walk_cache(self) -> Path | None:
        """Where updates keep the walk's directory listings: beside a ``.knoxidx`` index (a
        PostgreSQL store without one walks everything)."""
        from knoxidx.parse.walk_cache import CACHE_NAME

        folder = self.root / INDEX_DIR
        return folder / CACHE_NAME if folder.is_dir() else None

    def _writer_session(self) -> Any:
        """What this Index remembers between its own updates (see
        :mod:`knoxidx.update.session`); None for a store that cannot say when another
        connection wrote."""
        session = getattr(self, "_session", None)
        if session is None:
            from knoxidx.update.session import WriterSession

            if not WriterSession.supports(self.store):
                return None
            session = self._session = WriterSession()
        return session

    def _forget_session(self) -> None:
        session = getattr(self, "_session", None)
        if session is not None:
            session.clear()

    @contextmanager
    def writer(self: _Writing, *, wait: bool = False) -> Iterator[_Writing]:
        """Hold the single-writer lock until the block ends (a watcher holds it for its whole
        life); inside, :meth:`update_held` updates without taking it again, and any other
        writer gets :class:`IndexLockedError`."""
        if getattr(self, "_held_lock", None) is not None:
            raise RuntimeError("this Index already holds the writer lock")
        lock = self._take_write_lock(wait)
        self._held_lock: Any = lock
        try:
            self.store.quick_check()  # once per watcher's life: whatever the size
            yield self
        finally:
            self._held_lock = None
            lock.release()

    def update_held(self, *, jobs: int | None = None, max_bytes: int | None = None,
                    progress: Any = None, retrieval: bool = True, embed: bool = False,
                    discovered: Any = None, history: bool = True) -> Any:
        """:meth:`update` for a caller that already holds the lock through :meth:`writer`."""
        if getattr(self, "_held_lock", None) is None:
            raise RuntimeError("update_held() needs the writer lock: use `with index.writer():`")
        return self._update_locked(jobs=jobs, max_bytes=max_bytes, progress=progress,
                                   retrieval=retrieval, embed=embed, discovered=discovered,
                                   history=history)


def _note_root(store: Any, root: Path) -> None:
    if hasattr(store, "set_root"):  # a shared store remembers where each repository lives
        store.set_root(root)
