"""``knoxidx.Index``: the product. The CLI, HTTP API and MCP server are thin faces over it and
return the shapes its methods return."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knoxidx.errors import (
    AmbiguousSymbolError,
    BadPathError,
    IndexNotFoundError,
    SymbolNotFoundError,
)
from knoxidx.graph import traverse
from knoxidx.graph.dbfile import storage_error
from knoxidx.graph.model import EdgeType
from knoxidx.graph.sqlite_schema import INDEX_DIR, find_index_root
from knoxidx.graph.store import SQLiteStore

if TYPE_CHECKING:
    from knoxidx.graph.protocol import GraphStore

_PATH_LINE = re.compile(r"^(?P<path>.+):(?P<line>\d+)$")
CALL_TYPES = (EdgeType.CALLS.value,)
# An update checks the whole database first only up to this size (~0.05 s): beyond it the
# check would cost more than a typical incremental update (see SQLiteStore.quick_check).
QUICK_CHECK_MAX_BYTES = 8 * 1024 * 1024


class Index:
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
               embed: bool = False, rebuild: bool = False) -> Any:
        """Bring the index up to date: the graph and, unless ``retrieval`` is off, chunks and
        lexical search for the changed files, in one transaction; with ``embed`` the pending
        chunks are embedded afterwards (interruptible, resumed by a later run)."""
        lock = self.store.write_lock()
        lock.acquire(wait=wait)
        try:
            if rebuild:  # under the lock: never drop an index another writer is using
                self._forget_session()
                self.store.reset()
            else:  # never write into a damaged database: it would spread the damage
                self.store.quick_check(max_bytes=QUICK_CHECK_MAX_BYTES)
            if isinstance(self.store, SQLiteStore) and self.store.is_empty():
                return self._first_build(jobs=jobs, max_bytes=max_bytes, progress=progress,
                                         retrieval=retrieval, embed=embed)
            return self._update_locked(jobs=jobs, max_bytes=max_bytes, progress=progress,
                                       retrieval=retrieval, embed=embed)
        except sqlite3.Error as exc:  # a full disk or damage met mid-update, said plainly
            raise storage_error(exc, self.store.path) from None
        finally:
            lock.release()

    def _first_build(self, *, jobs: int | None, max_bytes: int | None, progress: Any,
                     retrieval: bool, embed: bool) -> Any:
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
                                         retrieval=retrieval, embed=False)
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
            from knoxidx.retrieval.api import embed_into

            embed_into(report.retrieval, self, progress=progress)
        return report

    def _update_locked(self, *, jobs: int | None, max_bytes: int | None, progress: Any,
                       retrieval: bool, embed: bool, discovered: Any = None) -> Any:
        from knoxidx.indexer.discovery import DEFAULT_MAX_BYTES
        from knoxidx.indexer.pipeline import update_index

        session = self._writer_session()
        # One update is one transaction: a reader sees the graph and the chunks of one state.
        try:
            with self.store.transaction():
                _note_root(self.store, self.root)
                report = update_index(self.root, self.store, jobs=jobs,
                                      max_bytes=max_bytes or DEFAULT_MAX_BYTES,
                                      progress=progress, discovered=discovered, session=session,
                                      walk_cache=self._walk_cache())
                if retrieval:
                    from knoxidx.retrieval.api import refresh_retrieval

                    report.retrieval = refresh_retrieval(self, jobs=jobs, progress=progress,
                                                         session=session)
        except BaseException:
            self._forget_session()  # rolled back: what it remembers ran ahead of the tables
            raise
        if retrieval and embed:  # committed batch by batch: an interrupted run keeps its work
            from knoxidx.retrieval.api import embed_into

            embed_into(report.retrieval, self, progress=progress)
        return report

    def search(self, query: str, *, k: int = 10, mode: str = "hybrid",
               language: str | None = None, path_glob: str | None = None) -> dict:
        """Where is the code that does X: hybrid lexical + vector + symbol search."""
        from knoxidx.retrieval.api import search

        return search(self, query, k=k, mode=mode, language=language, path_glob=path_glob)

    def embed(self, *, progress: Any = None, limit: int | None = None,
              wait: bool = False) -> dict:
        """Embed the chunks still pending (under the writer lock)."""
        from knoxidx.retrieval.api import embed_pending_chunks

        lock = self.store.write_lock()
        lock.acquire(wait=wait)
        try:
            self._forget_session()  # it writes through this connection outside an update
            return embed_pending_chunks(self, progress=progress, limit=limit)
        finally:
            lock.release()

    def _walk_cache(self) -> Path | None:
        """Where updates keep the walk's directory listings: beside a ``.knoxidx`` index (a
        PostgreSQL store without one walks everything)."""
        from knoxidx.indexer.walk_cache import CACHE_NAME

        folder = self.root / INDEX_DIR
        return folder / CACHE_NAME if folder.is_dir() else None

    def _writer_session(self) -> Any:
        """What this Index remembers between its own updates (see
        :mod:`knoxidx.indexer.session`); None for a store that cannot say when another
        connection wrote."""
        session = getattr(self, "_session", None)
        if session is None:
            from knoxidx.indexer.session import WriterSession

            if not WriterSession.supports(self.store):
                return None
            session = self._session = WriterSession()
        return session

    def _forget_session(self) -> None:
        session = getattr(self, "_session", None)
        if session is not None:
            session.clear()

    # ---- finding symbols ---------------------------------------------------------------

    def symbols(self, name: str, kind: str | None = None, limit: int = 50) -> list[dict]:
        """Exact name matches, else qualified-name suffix, else prefix matches; a NAME with
        ``*`` or ``?`` is a wildcard pattern over names instead (``resolve*``, ``*Error``)."""
        if "*" in name or "?" in name:
            pattern = _like_escaped(name).replace("*", "%").replace("?", "_")
            return [_public(h) for h in self.q.nodes_like(pattern, kind, limit)]
        hits = self.q.nodes_named(name, kind, limit)
        if not hits:
            hits = [h for h in self.q.nodes_with_suffix(name, limit) if not kind or h["kind"] == kind]
        if not hits:
            hits = self.q.nodes_like(_like_escaped(name) + "%", kind, limit)
        return [_public(h) for h in hits]

    def find(self, spec: str) -> dict:
        """A SYMBOL: a name, a qualified name, or ``path:line``. Ambiguity is an error that
        lists the candidates, never a silent pick."""
        match = _PATH_LINE.match(spec)
        if match:
            path, line = match["path"], int(match["line"])
            if line > 2**31:  # no file has that many lines (and SQLite's integers end at 2**63)
                raise SymbolNotFoundError(f"no definition at {spec}")
            node = self.q.node_at(path, line) or (
                self.q.file_node(path) if line <= 1 else None
            )
            if node is None:
                raise SymbolNotFoundError(f"no definition at {spec}")
            return node
        hits = self.q.nodes_qualified(spec)
        if not hits:
            hits = [h for h in self.q.nodes_named(spec) if h["kind"] != "Module"] or \
                self.q.nodes_named(spec)
        if not hits:
            hits = self.q.nodes_with_suffix(spec)
        if not hits:
            near = self.symbols(spec, limit=5)
            hint = f"; did you mean {', '.join(h['qualified_name'] for h in near)}?" if near else ""
            raise SymbolNotFoundError(f"no symbol {spec!r} in the index{hint}")
        if len(hits) > 1:
            candidates = [_public(h) for h in hits]
            listing = "; ".join(
                f"{c['qualified_name']} ({c['kind']}, {c['path']}:{c['start_line']})"
                for c in candidates[:10]
            )
            raise AmbiguousSymbolError(
                f"{spec!r} names {len(hits)} symbols: {listing}; pass a qualified name or path:line",
                candidates,
            )
        return hits[0]

    # ---- graph questions ---------------------------------------------------------------

    def callers(self, spec: str, depth: int = 1) -> dict:
        node = self.find(spec)
        hits = traverse.walk(self._q_of(node), node["id"], "in", CALL_TYPES, depth)
        out = {"symbol": _public(node), "callers": hits}
        if hasattr(self.q, "external_callers"):  # a shared store: other repositories too
            from knoxidx.shared import external_callers

            out["external_callers"] = external_callers(self, node)
        return out

    def callees(self, spec: str, depth: int = 1) -> dict:
        node = self.find(spec)
        hits = traverse.walk(self._q_of(node), node["id"], "out", CALL_TYPES, depth)
        return {"symbol": _public(node), "callees": hits}

    def refs(self, spec: str) -> dict:
        node = self.find(spec)
        return {"symbol": _public(node),
                "incoming": traverse.incoming_by_type(self._q_of(node), node)}

    def deps(self, target: str, reverse: bool = False, depth: int = 1) -> dict:
        node = self._file_or_module(target)
        types = (EdgeType.IMPORTS.value, EdgeType.DEPENDS_ON.value)
        hits = traverse.walk(self._q_of(node), node["id"], "in" if reverse else "out", types,
                             depth)
        out = {"symbol": _public(node), "reverse": reverse, "dependencies": hits}
        if reverse and hasattr(self.q, "external_importers"):
            from knoxidx.shared import external_importers

            out["external_importers"] = external_importers(self, node)
        return out

    def impact(self, spec: str, depth: int = 3) -> dict:
        """What may break if ``spec`` changes: transitive callers, users, subclasses and
        importers, nearest first, with the files they live in."""
        node = self.find(spec)
        hits = traverse.walk(self._q_of(node), node["id"], "in", traverse.IMPACT_TYPES, depth)
        files = sorted({h["path"] for h in hits if h["path"]})
        return {"symbol": _public(node), "impacted": hits, "files": files}

    def stats(self) -> dict:
        return {"root": str(self.root), **self.q.counts()}

    def _file_or_module(self, target: str) -> dict:
        path = target
        candidate = Path(target)
        if candidate.is_absolute():
            try:
                path = candidate.resolve().relative_to(self.root).as_posix()
            except ValueError:
                raise BadPathError(f"{target} is outside the indexed repository") from None
        node = self.q.file_node(path.removeprefix("./"))
        if node is not None:
            return node
        modules = self.q.module_nodes(target)
        if len(modules) == 1:
            return modules[0]
        if len(modules) > 1:
            raise AmbiguousSymbolError(
                f"{target!r} names {len(modules)} modules", [_public(m) for m in modules]
            )
        raise SymbolNotFoundError(f"no indexed file or module {target!r}")

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
        index = cls._open_shared(root or Path.cwd(), url, repo, create=False, readonly=True,
                                 resolve_repo=False)
        index.root = index.store.recorded_root() or index.root
        return index

    @classmethod
    def _open_shared(cls, path: str | Path, url: str, repo: str | None, *, create: bool,
                     readonly: bool, resolve_repo: bool = True) -> Index:
        from knoxidx.graph.pg_store import PgStore
        from knoxidx.store_url import repo_id

        root = Path(path).resolve()
        if create and not root.is_dir():
            raise BadPathError(f"not a directory: {path}")
        if resolve_repo:
            repo = repo_id(repo, root)
        return cls(root, PgStore.open(url, repo, create=create, readonly=readonly))

    def _q_of(self, node: dict) -> Any:
        """The queries for walks from ``node``: edges join within one repository."""
        repo = node.get("repo")
        return self.q.scoped(repo) if repo is not None else self.q

    @contextmanager
    def writer(self, *, wait: bool = False) -> Iterator[Index]:
        """Hold the single-writer lock until the block ends (a watcher holds it for its whole
        life); inside, :meth:`update_held` updates without taking it again, and any other
        writer gets :class:`IndexLockedError`."""
        if getattr(self, "_held_lock", None) is not None:
            raise RuntimeError("this Index already holds the writer lock")
        lock = self.store.write_lock()
        lock.acquire(wait=wait)
        self._held_lock: Any = lock
        try:
            self.store.quick_check()  # once per watcher's life: whatever the size
            yield self
        finally:
            self._held_lock = None
            lock.release()

    def update_held(self, *, jobs: int | None = None, max_bytes: int | None = None,
                    progress: Any = None, retrieval: bool = True, embed: bool = False,
                    discovered: Any = None) -> Any:
        """:meth:`update` for a caller that already holds the lock through :meth:`writer`."""
        if getattr(self, "_held_lock", None) is None:
            raise RuntimeError("update_held() needs the writer lock: use `with index.writer():`")
        return self._update_locked(jobs=jobs, max_bytes=max_bytes, progress=progress,
                                   retrieval=retrieval, embed=embed, discovered=discovered)

    def node(self, node_id: int) -> dict:
        """One node by its id (the ``id`` field of every answer)."""
        node = self.q.nodes_by_id([node_id]).get(node_id)
        if node is None:
            raise SymbolNotFoundError(f"no node with id {node_id} in the index")
        return _public(node)

    def status(self) -> dict:
        """Totals for a dashboard or an agent: files, nodes, edges, chunks, the embedding
        backlog, and when the index last changed."""
        from knoxidx.graph.protocol import chunk_store_for
        from knoxidx.retrieval.egress import egress_status

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
            "languages": counts["languages"],
            "lines": counts["lines"],
            "nodes": sum(counts["nodes"].values()),
            "edges": sum(counts["edges"].values()),
            "retrieval": retrieval,
            "egress": egress_status(self),
            "updated_at": datetime.fromtimestamp(max(mtimes), timezone.utc).isoformat(
                timespec="seconds") if mtimes else None,
        }

    def egress(self, days: int = 30) -> dict:
        """What was sent to remote services (requests, chunks, bytes, files) by day, and the
        chunks withheld as never-send; see :mod:`knoxidx.retrieval.egress`."""
        from knoxidx.retrieval.egress import egress_report

        return egress_report(self, days)

    def read_source(self, path: str, start: int | None = None, end: int | None = None,
                    max_lines: int | None = None) -> dict:
        """Lines of a repository file (``path`` relative to the root), refusing anything
        outside the root or not part of the indexed tree; see :mod:`knoxidx.source`."""
        from knoxidx.source import MAX_SOURCE_LINES, read_source

        return read_source(self.root, path, start, end, max_lines or MAX_SOURCE_LINES)

    def context(self, query: str, max_tokens: int = 8000, *, weights: Any = None) -> dict:
        """The code an agent should read to answer ``query``, packed into ``max_tokens``
        tokens: search hits, then what the graph says they depend on and what depends on
        them, ranked; see :mod:`knoxidx.retrieval.context`."""
        from knoxidx.retrieval.context import build_context

        return build_context(self, query, max_tokens=max_tokens, weights=weights)


def _note_root(store: Any, root: Path) -> None:
    if hasattr(store, "set_root"):  # a shared store remembers where each repository lives
        store.set_root(root)


def _public(node: dict) -> dict:
    return {k: v for k, v in node.items() if k not in ("file_id", "parent_id", "start_byte",
                                                      "end_byte")}


def _like_escaped(text: str) -> str:
    """``text`` matching itself in a LIKE pattern with ``ESCAPE '\\'``."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
