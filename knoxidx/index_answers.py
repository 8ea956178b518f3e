"""What a :class:`knoxidx.Index` answers beyond the graph alone
(:class:`~knoxidx.answers.questions.GraphQuestions`): its status, search and context, each
definition's evolution from the git history, and the answers built on the graph (describe,
repo map, goto, changes, hotspots), each a call that returns a plain JSON-ready shape."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from knoxidx.answers.questions import GraphQuestions
from knoxidx.core.paging import DEFAULT_LIMIT, Page

if TYPE_CHECKING:
    from knoxidx.graph.protocol import GraphStore


class IndexAnswers(GraphQuestions):
    """The answering side of :class:`knoxidx.Index`, over its ``root``, ``store`` and ``q``."""

    store: GraphStore

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

