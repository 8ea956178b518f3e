"""``knoxidx.Index``: the product. The CLI, HTTP API and MCP server are thin faces over it and
return the shapes its methods return."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knoxidx.answers.questions import GraphQuestions
from knoxidx.core.errors import BadPathError, IndexNotFoundError
from knoxidx.core.paging import DEFAULT_LIMIT, Page
from knoxidx.graph.dbfile import storage_error
from knoxidx.graph.sqlite_schema import INDEX_DIR, find_index_root
from knoxidx.graph.store import SQLiteStore

if TYPE_CHECKING:
    from knoxidx.graph.protocol import GraphStore

# An update checks the whole database first only up to this size (~0.05 s): beyond it the
# check would cost more than a typical incremental update (see SQLiteStore.quick_check).
QUICK_CHECK_MAX_BYTES = 8 * 1024 * 1024


class Index(GraphQuestions):
    """The index of one repository: opening and updating it (here), its graph questions
    (:class:`~knoxidx.answers.questions.GraphQuestions`), search and context (:mod:`knoxidx.retrieval`),
    each a call that returns plain JSON-ready shapes."""

    def __init__(self, root: Path, store: GraphStore) -> None:
        self.root = root
        self.store = store
        self.q = store.queries()

    @classmethod
    def open(cls, path: str | Path = ".", *, create: bool = False, store: str | None = None,
             repo: str | None = None) -> Index:
        """The index of the repository at ``path``: its ``.knoxidx`` database, or with a
        PostgreSQL ``store`` URL, repository ``repo`` (default: the directory's name) there."""
        if store:
            return cls._open_shared(path, store, repo, create=create, readonly=False)
        start = Path(path)
        if not start.exists():
            raise BadPathError(f"no such directory: {path}")
        if create:
            if not start.is_dir():
                raise BadPathError(f"not a directory: {path}")
            root = start.resolve()
        else:
            found = find_index_root(start if start.is_dir() else start.parent)
            if found is None:
                raise IndexNotFoundError(
                    f"no knoxidx index at or above {start.resolve()}; run `knoxidx index` there"
                )
            root = found
        return cls(root, SQLiteStore.open(root, create=create))

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Index:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- writing -----------------------------------------------------------------------

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

    def search(self, query: str, *, k: int = 10, mode: str = "hybrid",
               language: str | None = None, path_glob: str | None = None,
               source_weights: Mapping[str, float] | None = None,
               depth: int | None = None) -> dict:
        """Where is the code that does X: hybrid lexical + vector + symbol search
        (``source_weights``: fusion weights of named sources, ``depth``: fused chunks whose
        definitions are reranked; both for this search only)."""
        from knoxidx.update.retrieval_steps import search

        return search(self, query, k=k, mode=mode, language=language, path_glob=path_glob,
                      source_weights=source_weights, depth=depth)

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

    # ---- the agent side: holding the lock, reading code, context (appended) ------------

    @classmethod
    def open_reader(cls, path: str | Path = ".") -> Index:
        """The index at or above ``path`` on a read-only connection: what the HTTP and MCP
        servers use, one per thread, while a watcher writes."""
        start = Path(path)
        found = find_index_root(start if start.is_dir() else start.parent)
        if found is None:
            raise IndexNotFoundError(
                f"no knoxidx index at or above {start.resolve()}; run `knoxidx index` there"
            )
        return cls(found, SQLiteStore.open(found, readonly=True))

    @classmethod
    def open_shared_reader(cls, url: str, repo: str | None, root: Path | None = None) -> Index:
        """Repository ``repo`` (None: every repository) of a PostgreSQL store, read-only.
        Its root (for reading source) is where it was indexed from, when that is on this
        machine, else ``root``."""
        from knoxidx.graph.pg_store import PgStore

        fallback = (root or Path.cwd()).resolve()
        store = PgStore.open(url, repo, create=False, readonly=True)
        return cls(store.recorded_root() or fallback, store)

    @classmethod
    def _open_shared(cls, path: str | Path, url: str, repo: str | None, *, create: bool,
                     readonly: bool) -> Index:
        from knoxidx.core.store_url import repo_id
        from knoxidx.graph.pg_store import PgStore

        root = Path(path).resolve()
        if create and not root.is_dir():
            raise BadPathError(f"not a directory: {path}")
        return cls(root, PgStore.open(url, repo_id(repo, root), create=create, readonly=readonly))

    @contextmanager
    def writer(self, *, wait: bool = False) -> Iterator[Index]:
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

    def status(self) -> dict:
        """Totals for a dashboard or an agent: files, nodes, edges, chunks, the embedding
        backlog, and when the index last changed."""
        from knoxidx.retrieval.egress import egress_status
        from knoxidx.retrieval.stores import chunk_store_for
        from knoxidx.update.graph_update import skipped_files

        counts = self.q.counts()
        chunks = chunk_store_for(self.store)
        retrieval = None
        if chunks.has_schema():
            retrieval = {"chunks": chunks.chunk_count(), "embedded": chunks.vector_count(),
                         "embedding_backlog": chunks.pending_count(),
                         "withheld": chunks.withheld()[0]}
        mtimes = [p.stat().st_mtime for p in (self.store.path,
                                             self.store.path.with_name(self.store.path.name
                                                                       + "-wal"))
                  if p.exists()]
        return {
            "root": str(self.root),
            "files": sum(counts["files"].values()),
            "files_by_status": counts["files"],
            "skipped": skipped_files(self.store, counts["files"]),
            "languages": counts["languages"],
            "lines": counts["lines"],
            "nodes": sum(counts["nodes"].values()),
            "edges": sum(counts["edges"].values()),
            "retrieval": retrieval,
            "extraction": self.extraction(),
            "egress": egress_status(self),
            "updated_at": datetime.fromtimestamp(max(mtimes), timezone.utc).isoformat(
                timespec="seconds") if mtimes else None,
        }

    def extraction(self) -> dict:
        """Which knoxidx extracted the facts of this index (``stored``: the engine fingerprint
        in its meta, see :mod:`knoxidx.parse.engine`) and this one's (``current``); ``stale``
        when they differ on an index of some ``files``: the next update reads them all again.
        Questions meanwhile answer from the facts as they are."""
        from knoxidx.parse.engine import ENGINE_META_KEY, engine_fingerprint

        stored = self.store.get_meta(ENGINE_META_KEY)
        current = engine_fingerprint()
        files = len(self.store.file_states())
        return {"stored": stored, "current": current, "stale": bool(files) and stored != current,
                "files": files}

    def stats(self) -> dict:
        from knoxidx.update.graph_update import skipped_files

        counts = super().stats()
        return {**counts, "skipped": skipped_files(self.store, counts["files"]),
                "extraction": self.extraction()}

    def embedding_coverage(self) -> dict | None:
        """How many chunks each embedding model has vectors for: the searched model's and
        those kept for a switch back (the ``embedder`` setting); None without chunk tables."""
        from knoxidx.retrieval.stores import chunk_store_for

        chunks = chunk_store_for(self.store)
        if not chunks.has_schema():
            return None
        return {"chunks": chunks.chunk_count(), "models": chunks.model_coverage()}

    def find_symbols(self, name: str, kind: str | None = None, *, path: str | None = None,
                     limit: int = DEFAULT_LIMIT, offset: int = 0,
                     min_complexity: int | None = None, returns: str | None = None,
                     param_type: str | None = None) -> dict:
        """:meth:`GraphQuestions.find_symbols`, each definition with its ``evolution`` (see
        :func:`knoxidx.history.answers.evolutions`) when the index holds a history."""
        answer = super().find_symbols(name, kind, path=path, limit=limit, offset=offset,
                                      min_complexity=min_complexity, returns=returns,
                                      param_type=param_type)
        # longer items: bound the page again
        if _add_evolution(self.store, self.root, answer["symbols"]):
            window, info = Page(limit, offset, kind, path).bound(answer["symbols"],
                                                                 answer["total"])
            answer.update(symbols=window, **info)
        return answer

    def node(self, node_id: int) -> dict:
        found = super().node(node_id)
        _add_evolution(self.store, self.root, [found])
        return found

    def describe(self, spec: str, *, limit: int = 20) -> dict:
        """Everything about the definition ``spec`` names in one answer: the node, where it
        sits, its calls, callers, types used and users, supertypes and subtypes (``limit``
        of each, with totals), and its evolution; see :mod:`knoxidx.answers.entity`."""
        from knoxidx.answers.entity import describe

        return describe(self, spec, limit=limit)

    def evolution_of_all(self) -> dict[int, dict]:
        """Every definition's ``evolution`` by node id (what ``knoxidx export`` writes on
        each); empty when the index holds no history."""
        from knoxidx.history.answers import evolutions

        return evolutions(self.store, self.root, self.q.all_nodes())

    def history(self, spec: str, *, limit: int = 50, offset: int = 0) -> dict:
        """The evolution of the definition ``spec`` names, from the git history read at the
        last update: created, the commits that changed its lines, totals, renames; see
        :mod:`knoxidx.history.answers`."""
        from knoxidx.history.answers import definition_history

        return definition_history(self.store, self.root, self.find(spec), limit=limit,
                                  offset=offset)

    def repo_map(self, max_tokens: int = 1024, path: str | None = None) -> dict:
        """The repository's most central definitions whose signatures fit ``max_tokens``,
        file by file (``path``: a glob or directory to map alone); see
        :mod:`knoxidx.answers.repo_map`."""
        from knoxidx.answers.repo_map import repo_map

        return repo_map(self, max_tokens, path)

    def goto(self, at: str, name: str | None = None) -> dict:
        """What the code at ``at`` (``path:line``) refers to: each name used there with the
        definitions the graph resolved it to, or why it has none; see
        :mod:`knoxidx.answers.goto`."""
        from knoxidx.answers.goto import goto

        return goto(self, at, name)

    def changes(self, base: str = "HEAD", *, depth: int = 3, limit: int = 50, offset: int = 0,
                kind: str | None = None, path: str | None = None) -> dict:
        """The definitions the work tree changed since the commit ``base`` (modified, added,
        removed, with the calls a removal leaves unresolved) and a page of what they may
        break, the tests among it; see :mod:`knoxidx.answers.changes`."""
        from knoxidx.answers.changes import changes

        return changes(self, base, depth, limit=limit, offset=offset, kind=kind, path=path)

    def hotspots(self, *, path: str | None = None, since_days: int | None = 90,
                 kind: str | None = None, limit: int = 20, offset: int = 0) -> dict:
        """Definitions and files ranked by recent change frequency times size; see
        :mod:`knoxidx.history.answers`."""
        from knoxidx.history.answers import hotspots

        return hotspots(self.store, self.root, path=path, since_days=since_days, kind=kind, limit=limit,
                        offset=offset)

    def egress(self, days: int = 30) -> dict:
        """What was sent to remote services (requests, chunks, bytes, files) by day, and the
        chunks withheld as never-send; see :mod:`knoxidx.retrieval.egress`."""
        from knoxidx.retrieval.egress import egress_report

        return egress_report(self, days)

    def read_source(self, path: str, start: int | None = None, end: int | None = None,
                    max_lines: int | None = None) -> dict:
        """Lines of a repository file (``path`` relative to the root), refusing anything
        outside the root or not part of the indexed tree, and never-send files; secrets in
        them masked. See :mod:`knoxidx.parse.source` and :mod:`knoxidx.retrieval.disclosure`."""
        from knoxidx.parse.source import MAX_SOURCE_LINES, read_source
        from knoxidx.retrieval.disclosure import Disclosure

        return read_source(self.root, path, start, end, max_lines or MAX_SOURCE_LINES,
                           disclosure=Disclosure.for_root(self.root))

    def context(self, query: str, max_tokens: int = 8000, *, weights: Any = None) -> dict:
        """The code an agent should read to answer ``query``, packed into ``max_tokens``
        tokens: search hits, then what the graph says they depend on and what depends on
        them, ranked; see :mod:`knoxidx.answers.context`."""
        from knoxidx.answers.context import build_context

        return build_context(self, query, max_tokens=max_tokens, weights=weights)


def _add_evolution(store: Any, root: Path, nodes: list[dict]) -> bool:
    """Give each node its ``evolution``, when the index holds a history; whether any got one."""
    from knoxidx.history.answers import evolutions

    found = evolutions(store, root, nodes)
    for node in nodes:
        if node.get("id") in found:
            node["evolution"] = found[node["id"]]
    return bool(found)


def _note_root(store: Any, root: Path) -> None:
    if hasattr(store, "set_root"):  # a shared store remembers where each repository lives
        store.set_root(root)
