"""``Index.search``: validated arguments in, the result shape out.

A :class:`Searcher` belongs to one open index and keeps what is costly to make between queries
(the embedder with its loaded model, the vector matrix): ``knoxidx search --batch`` and a
long-lived server reuse one. Symbol names found in the graph are fused in as a third source, so
that a query naming a function finds its definition first.

The result is ``{"query", "mode", "results": [{"path", "start_line", "end_line", "symbol",
"kind", "score", "snippet", "language", "sources"}], "pending_embeddings", "note", "withheld",
"masked"}``: ``mode`` is the mode actually used (``vector`` falls back to ``lexical`` while
nothing is embedded) and ``note`` says why, "" otherwise. ``score`` is the
reciprocal-rank-fusion score (higher is better, comparable within one answer only). Results
of never-send files are withheld and snippets masked (:mod:`.disclosure`): ``withheld`` counts
the first, ``masked`` the secrets masked by kind.
"""

from __future__ import annotations

import math
import re
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from knoxidx.core.path_glob import absolute_filter_problem
from knoxidx.languages.registry import LANGUAGE_ALIASES
from knoxidx.retrieval.backends import select_embedder, select_reranker
from knoxidx.retrieval.disclosure import Disclosure
from knoxidx.retrieval.egress import index_services
from knoxidx.retrieval.embedder import Embedder
from knoxidx.retrieval.errors import (
    RetrievalError,
    SearchIndexMissingError,
    SearchInputError,
)
from knoxidx.retrieval.hybrid_search import SOURCES, VECTOR_SOURCES, HybridSearch, SearchResult
from knoxidx.retrieval.lexical_rows import ChunkFilter
from knoxidx.retrieval.sources import SymbolHit
from knoxidx.retrieval.stores import chunk_store_for
from knoxidx.retrieval.units import CODE_KINDS

if TYPE_CHECKING:
    from knoxidx.graph.protocol import IndexedGraph

MODES = ("hybrid", "lexical", "vector")
# what answers without vectors: every source that matches words ("lexical" mode, and hybrid
# while nothing is embedded yet)
LEXICAL_SOURCES = ("lexical", "symbol", "names", "identifiers")
MAX_K = 100
MAX_DEPTH = 200  # fused chunks reranked at most: each source reads 50
DEFINITIONS_CACHED = 2000  # files whose definitions a searcher keeps between searches
MAX_QUERY_CHARS = 2000
# A name defined more often than this says little about where to look ("get", "run").
COMMON_NAME = 25
_SYMBOL_KINDS = ("Function", "Class", "Interface", "Type", "Constant", "Variable")
_KIND_ORDER = {kind: i for i, kind in enumerate(_SYMBOL_KINDS)}
_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$]*)*")


# A bracket expression as SQLite's GLOB reads it: `[`, an optional `^`, a `]` taken literally
# when first, then anything up to the closing `]`. A `[` that matches nothing of this is open.
# a line of a comment, as the five languages write one
_COMMENT_LINE = re.compile(r"^\s*(//|/\*|\*|#)")
_UNCLOSED_BRACKET = re.compile(r"\[(?!\^?\]?[^\]]*\])")


def validate(
    query: Any, k: Any, mode: Any, language: Any, path_glob: Any
) -> tuple[str, ChunkFilter]:

    """Check the arguments (raising :class:`SearchInputError` with what is allowed); return the
    stripped query and the filter."""
    if not isinstance(query, str) or not query.strip():
        raise SearchInputError("the search query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise SearchInputError(f"the search query is longer than {MAX_QUERY_CHARS} characters")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise SearchInputError(f"k must be a whole number from 1 to {MAX_K}, not {k!r}")
    if mode not in MODES:
        raise SearchInputError(f"unknown search mode {mode!r}; use one of {', '.join(MODES)}")
    languages: tuple[str, ...] = ()
    if language is not None:
        key = str(language).strip().lower()
        if key not in LANGUAGE_ALIASES:
            raise SearchInputError(
                f"unknown language {language!r}; use one of {', '.join(LANGUAGE_ALIASES)}"
            )
        languages = LANGUAGE_ALIASES[key]
    if path_glob is not None and (not isinstance(path_glob, str) or not path_glob.strip()):
        raise SearchInputError("the path glob is empty")
    glob = path_glob.strip() if path_glob else None
    absolute = absolute_filter_problem(glob) if glob else None
    if absolute:
        raise SearchInputError(absolute)
    if glob and _UNCLOSED_BRACKET.search(glob):
        # SQLite's GLOB backtracks without end on `*[a-*[a-...` (seconds per row): refuse it
        raise SearchInputError(f"the path glob {glob[:80]!r} has a '[' without its ']'")
    return query.strip(), ChunkFilter(languages, glob)


def validate_source_weights(weights: Any) -> dict[str, float]:
    """Per-search fusion weights: a mapping of source names to finite weights of 0 or more
    (raising :class:`SearchInputError` with what is allowed)."""
    if weights is None:
        return {}
    if not isinstance(weights, Mapping):
        raise SearchInputError(f"source weights must map source names to numbers, not "
                               f"{type(weights).__name__}")
    out: dict[str, float] = {}
    for name, weight in weights.items():
        if name not in SOURCES:
            raise SearchInputError(f"unknown search source {name!r}; use one of "
                                   f"{', '.join(SOURCES)}")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) \
                or not math.isfinite(weight) or weight < 0:
            raise SearchInputError(f"the weight of source {name!r} must be a finite number of "
                                   f"0 or more, not {weight!r}")
        out[name] = float(weight)
    return out


class Searcher:
    def __init__(self, index: IndexedGraph, embedder: Embedder | None = None) -> None:
        self.index = index
        self.store = chunk_store_for(index.store)
        self._embedder = embedder
        self._embedder_error = ""
        self._hybrid: HybridSearch | None = None
        self._last_hits: list[SymbolHit] = []
        # path -> (version, definitions, the last line of the file's header)
        self._definitions: dict[str, tuple[str, list[Any], int]] = {}

    # ---- lazily made parts ---------------------------------------------------------------------

    def embedder(self) -> Embedder | None:
        """The query embedder (selected once; its model loads on the first vector query)."""
        if self._embedder is None and not self._embedder_error:
            config, egress = index_services(self.index)
            try:
                self._embedder = select_embedder(config, egress=egress, interactive=True)
            except RetrievalError as exc:
                self._embedder_error = str(exc)
        return self._embedder

    @property
    def every_repo(self) -> bool:
        """Searching every repository of a shared store (no one repository chosen)."""
        return getattr(self.store, "repo", "") is None

    def hybrid(self) -> HybridSearch:
        if self._hybrid is None:
            config, egress = index_services(self.index)
            try:
                reranker = select_reranker(config, egress=egress, interactive=True)
            except RetrievalError:
                reranker = None
            # Over every repository of a shared store a path names no one file: results stay
            # chunks there (the definition rerank needs each file's definitions).
            self._hybrid = HybridSearch(
                self.store, None, symbol_source=self.graph_symbols, reranker=reranker,
                definitions=None if self.every_repo else self.file_definitions,
            )
        return self._hybrid

    # ---- searching -----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        k: int = 10,
        mode: str = "hybrid",
        language: str | None = None,
        path_glob: str | None = None,
        source_weights: Mapping[str, float] | None = None,
        depth: int | None = None,
    ) -> dict[str, Any]:
        """``source_weights``: the fusion weight of the sources it names, for this search
        only (the others keep :data:`~knoxidx.retrieval.hybrid_search.SOURCE_WEIGHTS`).
        ``depth``: how many fused chunks hybrid search reranks the definitions of (None: 60,
        :class:`~knoxidx.retrieval.rerank_weights.RerankWeights`)."""
        query, chunk_filter = validate(query, k, mode, language, path_glob)
        fusion = validate_source_weights(source_weights)
        if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int)
                                  or not 1 <= depth <= MAX_DEPTH):
            raise SearchInputError(
                f"depth must be a whole number from 1 to {MAX_DEPTH}, not {depth!r}")
        self._last_hits = []
        if not self.store.has_schema():
            raise SearchIndexMissingError(
                f"the index at {self.index.root} has no search data (built with --graph-only?);"
                " run `knoxidx index` to add it"
            )
        pending = self.store.pending_count()
        used, note = mode, ""
        sources: tuple[str, ...] = LEXICAL_SOURCES
        hybrid = self.hybrid()
        hybrid.embedder = None
        if mode != "lexical":
            why_not = self._why_no_vectors(pending)
            if why_not:
                note = why_not
                if mode == "vector":
                    used, note = "lexical", f"{why_not}: showing lexical results instead"
                else:
                    note = f"{why_not}: showing lexical, symbol and name results only"
            else:
                hybrid.embedder = self._embedder
                sources = VECTOR_SOURCES if mode == "vector" else SOURCES
                if pending:  # embedding is under way (or was interrupted): say what it covers
                    note = self._coverage_note(pending)
        disclosure = Disclosure.for_root(self.index.root)
        # the definition rerank belongs to hybrid search (fusion, then rerank); the single-source
        # modes only narrow each chunk to its best definition
        results, withheld = _shown(hybrid, disclosure, query, k, sources=sources,
                                   chunk_filter=chunk_filter, definition_rerank=mode == "hybrid",
                                   source_weights=fusion, depth=depth)
        if "vector" in hybrid.skipped:
            reason = hybrid.skipped["vector"]
            if mode == "vector":
                used, note = "lexical", f"vector search failed ({reason}): lexical results"
                reranker = hybrid.reranker
                if hybrid.service_failed():  # the service that just failed is not asked again
                    hybrid.reranker = None
                try:
                    results, withheld = _shown(hybrid, disclosure, query, k,
                                               sources=LEXICAL_SOURCES, chunk_filter=chunk_filter,
                                               definition_rerank=False, source_weights=fusion)
                finally:
                    hybrid.reranker = reranker
            else:
                note = f"vector search failed ({reason}): lexical, symbol and name results only"
        if "rerank" in hybrid.skipped:
            note = "; ".join(filter(None, [note, f"rerank skipped ({hybrid.skipped['rerank']})"]))
        shown, _, masked = disclosure.search_results([self._describe(r) for r in results])
        return {
            "query": query,
            "mode": used,
            "results": shown,
            "pending_embeddings": pending,
            "note": note,
            "withheld": withheld,
            "masked": dict(masked),
        }

    def _coverage_note(self, pending: int) -> str:
        """``N of M chunks embedded``, counted without reading the vector table (counting its
        rows reads every page: ~100 ms at 44k vectors)."""
        embeddable = self.store.chunk_count() - self.store.withheld()[0]
        return (f"{embeddable - pending} of {embeddable} chunks embedded; vector results cover "
                "those (`knoxidx index`, `knoxidx embed` or a watcher embeds the rest)")

    def _why_no_vectors(self, pending: int) -> str:
        embedder = self.embedder()
        if embedder is None:
            return f"no query embedder ({self._embedder_error})"
        if not self.store.has_vectors():
            return f"no chunk is embedded yet ({pending} pending; run `knoxidx embed`)"
        recorded = self.store.recorded_model()
        if recorded is not None and recorded != embedder.model_id:
            return (
                f"the index's vectors were made by {recorded}, not {embedder.model_id}"
                " (run `knoxidx embed` to re-embed)"
            )
        return ""

    def _describe(self, result: SearchResult) -> dict[str, Any]:
        """The result as a dict, naming the definition the match is in: the one a symbol hit
        named, else the innermost one around the best-matching line (a chunk may hold several
        small functions), else the chunk's first. Names are the graph's qualified names, which
        ``knoxidx callers`` and friends accept."""
        out = result_dict(result)
        q = self.index.q
        if self.every_repo:
            out["repo"] = self.store.repos_of([result.chunk_id]).get(result.chunk_id)
            q = q.scoped(out["repo"])
        hit_line = next((hit.line for hit in self._last_hits if hit.path == result.path
                         and result.start_line <= hit.line <= result.end_line), None)
        if result.definitions:
            held = self._held_nodes(q, result)
            out["definitions"] = [node["qualified_name"] if node else name
                                  for name, node in zip(result.definitions, held, strict=True)]
            lead = held[result.definitions.index(result.lead)] \
                if result.lead in result.definitions else None
            if hit_line is None and lead is not None:
                # several small definitions kept whole: the rerank named the one of them
                # that shares most of the query, which the best-matching line can miss
                out["symbol"], out["kind"] = lead["qualified_name"], lead["kind"]
                return out
        line = hit_line or result.match_line
        node = q.node_at(result.path, result.start_line)
        if node is None or node["end_line"] != result.end_line:  # not one definition's span
            node = q.node_at(result.path, line) if line else None
            if node is None and line and not self.every_repo \
                    and line <= self._file_facts(result.path)[1]:
                # the file's header (module doc, imports): not the first definition below it
                out["symbol"], out["kind"] = result.path, "File"
                return out
            around = node is not None and (node["end_line"] > result.end_line
                                           or node["start_line"] < result.start_line)
            if line and (node is None or around and (
                    node["kind"] != "Function" or self._is_comment(result, line))):
                # the line is in no definition of the result but between a type's members,
                # e.g. a doc comment above one: the definition it documents, not the class
                # around the result; in a function around it (ESLint's `create` holding its
                # helpers), only a comment line documents what follows (a line of a
                # function's body names that function)
                node = self._documented(q, result, line) or node
        if node is None and result.symbol:
            node = self._node_named(q, result.path, result.symbol)
        if node is not None and node["kind"] in _KIND_ORDER:
            out["symbol"], out["kind"] = node["qualified_name"], node["kind"]
        return out

    @staticmethod
    def _node_named(q: Any, path: str, symbol: str) -> dict | None:
        """The graph node of the code definition of ``path`` whose qualified name ends with
        ``symbol``."""
        return next((n for n in q.nodes_with_suffix(symbol, 50)
                     if n["path"] == path and n["kind"] in _KIND_ORDER), None)

    def _held_nodes(self, q: Any, result: SearchResult) -> list[dict | None]:
        """The graph nodes of the definitions a result kept whole holds (``definitions``:
        qualified within their file), in order; None for one not found."""
        if self.every_repo:  # a path names no one file of a shared store
            return [self._node_named(q, result.path, name) for name in result.definitions]
        spans = {d.qualname: d for d in self.file_definitions(result.path)
                 if result.start_line <= d.start_line and d.end_line <= result.end_line}
        nodes: list[dict | None] = []
        for name in result.definitions:
            d = spans.get(name)
            node = q.node_at(result.path, d.start_line) if d is not None else None
            fits = node is not None and d is not None and (node["start_line"], node["name"]) \
                == (d.start_line, d.name)
            nodes.append(node if fits else None)
        return nodes

    def _is_comment(self, result: SearchResult, line: int) -> bool:
        """Whether ``line`` of the result's chunk is a comment line (``//``, ``/*``, ``*``,
        ``#``)."""
        stored = self.store.get([result.chunk_id]).get(result.chunk_id)
        if stored is None:
            return False
        lines = stored.chunk.text.split("\n")
        offset = line - stored.chunk.start_line
        return 0 <= offset < len(lines) and bool(_COMMENT_LINE.match(lines[offset]))

    def _documented(self, q: Any, result: SearchResult, line: int) -> dict | None:
        """The graph node of the first code definition of ``result`` that begins after
        ``line`` (a doc comment's line belongs to what follows it). Over every repository of a
        shared store a path names no one file: none."""
        if self.every_repo:
            return None
        following = [
            d for d in self.file_definitions(result.path)
            if d.kind in CODE_KINDS and line < d.start_line
            and d.end_line <= result.end_line
        ]
        if not following:
            return None
        first = min(following, key=lambda d: (d.start_line, -d.end_line))
        return q.node_at(result.path, first.start_line)

    def file_definitions(self, path: str) -> list[Any]:
        """The definitions the graph holds for ``path`` (its stored facts)."""
        return self._file_facts(path)[0]

    def _file_facts(self, path: str) -> tuple[list[Any], int]:
        """``path``'s definitions and the last line of its header (the last import above its
        first definition; 0: none), kept per file version: unpickling a big file's facts for
        every search cost more than the search."""
        version = self.store.source_hash(path) or ""
        cached = self._definitions.get(path)
        if cached is not None and cached[0] == version and version:
            return cached[1], cached[2]
        facts = self.index.store.load_facts(path)
        definitions = list(facts.defs) if facts is not None else []
        first = min((d.start_line for d in definitions), default=None)
        header_end = max((i.line for i in facts.imports if first is None or i.line < first),
                         default=0) if facts is not None else 0
        if len(self._definitions) >= DEFINITIONS_CACHED:
            self._definitions.clear()
        self._definitions[path] = (version, definitions, header_end)
        return definitions, header_end

    def graph_symbols(self, query: str, limit: int) -> list[SymbolHit]:
        """Definitions named by the query: a one-word query, exactly and by prefix; in a longer
        query, each word shaped like code (``snake_case``, ``camelCase``, ``a.b``, ``a::b``),
        exactly. Plain words of a sentence are not looked up as names ("return the context"
        would rank anything called ``context`` first). Names defined very often are skipped
        unless they are the whole query."""
        q = self.index.q
        names = list(dict.fromkeys(m.group() for m in _NAME.finditer(query)))
        single = len(names) == 1 and names[0] == query
        if not single:
            names = [name for name in names if looks_like_code(name)]
        hits: list[SymbolHit] = []
        seen: set[tuple[str, int]] = set()

        def add(rows: list[dict]) -> None:
            rows = sorted(
                (r for r in rows if r["kind"] in _KIND_ORDER and r["path"]),
                key=lambda r: (_KIND_ORDER[r["kind"]], r["path"], r["start_line"]),
            )
            for r in rows:
                key = (r["path"], r["start_line"])
                if key not in seen and len(hits) < limit:
                    seen.add(key)
                    hits.append(SymbolHit(r["path"], r["start_line"], r["name"], r["kind"]))

        for name in names:
            if len(name) < 3:
                continue
            if "." in name or "::" in name:
                rows = q.nodes_qualified(name, COMMON_NAME + 1) or q.nodes_with_suffix(
                    name, COMMON_NAME + 1
                )
            else:
                rows = q.nodes_named(name, None, COMMON_NAME + 1)
            if len(rows) <= COMMON_NAME or single:
                add(rows)
        if single and len(hits) < limit:
            escaped = names[0].replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            add(q.nodes_like(escaped + "%", None, COMMON_NAME))
        self._last_hits = hits
        return hits


def _shown(hybrid: HybridSearch, disclosure: Disclosure, query: str, k: int,
           **options: Any) -> tuple[list[SearchResult], int]:
    """The ``k`` best results a client may see, searching deeper while never-send files
    take places, and how many of those were withheld above the last result shown (all of
    them when fewer than ``k`` are shown)."""
    want = k
    while True:
        results = hybrid.search(query, want, **options)
        allowed = [disclosure.allows(r.path) for r in results]
        refused = allowed.count(False)
        if len(results) - refused >= k or len(results) < want or want >= k + MAX_K:
            break
        want = min(k + refused, k + MAX_K)
    shown: list[SearchResult] = []
    withheld = 0
    for result, ok in zip(results, allowed, strict=True):
        if len(shown) == k:
            break
        if ok:
            shown.append(result)
        else:
            withheld += 1
    return shown, withheld


def looks_like_code(name: str) -> bool:
    """``parse_config``, ``parseConfig``, ``HTTPServer``, ``os.path``, ``std::io`` — not
    ``Return`` or ``context``."""
    return (
        "_" in name.strip("_") or "." in name or "::" in name or "$" in name
        or any(c.isupper() for c in name[1:])
    )


def result_dict(result: SearchResult) -> dict[str, Any]:
    return {
        "path": result.path,
        "start_line": result.start_line,
        "end_line": result.end_line,
        "symbol": result.symbol,
        "kind": result.kind,
        "score": round(result.score, 6),
        "snippet": result.snippet,
        "language": result.language,
        "sources": list(result.sources),
        "definitions": list(result.definitions),
    }


_searchers: weakref.WeakKeyDictionary[IndexedGraph, Searcher] = weakref.WeakKeyDictionary()


def searcher_for(index: IndexedGraph) -> Searcher:
    """The index's searcher, made once: it keeps the loaded model and the vector matrix."""
    searcher = _searchers.get(index)
    if searcher is None:
        searcher = _searchers[index] = Searcher(index)
    return searcher
