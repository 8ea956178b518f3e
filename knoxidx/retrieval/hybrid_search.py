"""Hybrid search: lexical (FTS5/BM25), vector (cosine), declarations (cosine with each code
definition's declaration, ``names.declaration_texts``; a chunk ranks by its best), symbol-name
hits, definitions named with the query's words (``names.py``) and chunks holding the
identifiers it writes as code (``terms.code_words``) — the sources, in
``sources.py`` — fused by reciprocal rank, then reranked: by a service
reranker when one is configured, else, given the graph's definitions, at definition level
(``rerank.py``), so that results are definitions rather than whole merged chunks.

Each source ranks chunks on its own scale; reciprocal rank fusion adds ``1 / (rrf_k + rank)``
per source, so a chunk that several sources agree on rises without tuning score scales. A
source that fails (no vectors yet, the embedder offline, the breaker open) is skipped with a
log line and its reason in ``skipped``, never fatal: lexical search always answers; so is the
service reranker, which is not asked at all once the service failed the query's embedding.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from knoxidx.retrieval.embedder import Embedder
from knoxidx.retrieval.errors import (
    CircuitOpenError,
    RetriesExhaustedError,
    RetrievalError,
    ServiceError,
)
from knoxidx.retrieval.lexical_rows import ChunkFilter
from knoxidx.retrieval.priors import PathPrior, path_prior
from knoxidx.retrieval.query_words import QueryWords
from knoxidx.retrieval.rerank import narrow, rerank_definitions
from knoxidx.retrieval.rerank_weights import RerankWeights
from knoxidx.retrieval.sources import SearchSources, SymbolSource
from knoxidx.retrieval.store import ChunkStore, StoredChunk
from knoxidx.retrieval.terms import content_terms, line_terms
from knoxidx.retrieval.ties import by_place, through_ties, tied_ids
from knoxidx.retrieval.units import DefinitionSource, Unit
from knoxidx.retrieval.vectors import VectorIndex

log = logging.getLogger(__name__)

SOURCES = ("lexical", "vector", "declarations", "symbol", "names", "identifiers")
# the sources that compare the query's vector with stored ones
VECTOR_SOURCES = ("vector", "declarations")
# each source's weight in the fusion: equal, as no other weighting measured better held out
SOURCE_WEIGHTS = {"lexical": 1.0, "vector": 1.0, "declarations": 1.0, "symbol": 1.0,
                  "names": 1.0, "identifiers": 1.0}


class Reranker(Protocol):
    def rerank(
        self, query: str, documents: Sequence[str], top_k: int
    ) -> list[tuple[int, float]]: ...


@dataclass(frozen=True, slots=True)
class SearchResult:
    path: str
    start_line: int
    end_line: int
    symbol: str
    kind: str
    score: float
    snippet: str
    # which of lexical / vector / declarations / symbol / names / rerank found it
    sources: tuple[str, ...]
    chunk_id: int
    language: str = ""
    match_line: int = 0  # the line of the chunk sharing most words with the query
    # the qualified names of the definitions a result kept whole holds, in source order
    # (``rerank.query_units``; empty when it is one definition or none)
    definitions: tuple[str, ...] = ()
    # of those, the one sharing most of the query, which ``symbol`` then names ("": none)
    lead: str = ""


class HybridSearch(SearchSources):
    def __init__(
        self,
        store: ChunkStore,
        embedder: Embedder | None = None,
        *,
        symbol_source: SymbolSource | None = None,
        reranker: Reranker | None = None,
        definitions: DefinitionSource | None = None,
        candidates: int = 50,
        rrf_k: int = 20,
        source_weights: Mapping[str, float] | None = None,
        rerank_top: int = 30,
        weights: RerankWeights | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.symbol_source = symbol_source
        self.reranker = reranker
        self.definitions = definitions  # set: results are definition-sized (see rerank.py)
        self.weights = weights or RerankWeights()
        self.candidates = candidates
        self.rrf_k = rrf_k
        self.source_weights = dict(SOURCE_WEIGHTS if source_weights is None else source_weights)
        self.rerank_top = rerank_top
        # matrix name -> (the vectors' version it was read at, the index)
        self._indexes: dict[str, tuple[int, VectorIndex]] = {}
        self._query_vector: tuple[str, Any] | None = None  # embedded once per search
        self.skipped: dict[str, str] = {}  # source -> why the last search went without it
        self._filter = ChunkFilter()
        # the query's words, made once per search (the names source and the rerank both ask)
        self._words: tuple[str, bool, QueryWords] | None = None


    # ---- fusion ------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        k: int = 10,
        *,
        sources: Sequence[str] = SOURCES,
        chunk_filter: ChunkFilter | None = None,
        definition_rerank: bool = True,
        source_weights: Mapping[str, float] | None = None,
        depth: int | None = None,
    ) -> list[SearchResult]:
        """The ``k`` best results for ``query`` from the given ``sources`` (fused), restricted
        to ``chunk_filter``. With a definition source, results are definitions: with
        ``definition_rerank`` the fused chunks' definitions are reranked (unless a service
        reranker is set), otherwise each chunk is narrowed to its best definition.
        ``source_weights`` sets the fusion weight of the sources it names for this search
        only; the others keep the weights the search was made with. ``depth``: how many fused
        chunks have their definitions reranked, for this search only (None: the weights')."""
        self.skipped = {}
        self._words = None
        self._query_vector = None
        query = query.strip()
        if not query:
            return []
        self._filter = chunk_filter or ChunkFilter()
        ranked: dict[str, list[tuple[int, float]]] = {}
        for name, source in (
            ("lexical", self.lexical),
            ("vector", self.vector),
            ("declarations", self.declarations),
            ("symbol", self.symbols),
            ("names", self.names),
            ("identifiers", self.identifiers),
        ):
            if name not in sources:
                continue
            try:
                ranked[name] = source(query)
            except RetrievalError as exc:
                log.warning("%s search skipped: %s", name, exc)
                self.skipped[name] = str(exc)
        # Chunk ids follow the order chunks were written, so equal scores are ranked by what
        # the chunks are: two indexes of the same files then rank alike, whatever their history.
        places = self.store.places(tied_ids(ranked.values()))
        ranked = {name: by_place(hits, places) for name, hits in ranked.items()}
        fused = reciprocal_rank_fusion(ranked, self.rrf_k,
                                       self.source_weights | dict(source_weights or {}))
        head = through_ties(fused, max(k, self.rerank_top,
                                       max(depth or 0, self.weights.depth)
                                       if self.definitions else 0))
        chunks = self.store.get([i for i, _ in fused[:head]])
        places |= {i: (c.chunk.path, c.chunk.start_line, c.chunk.end_line)
                   for i, c in chunks.items()}
        fused[:head] = by_place(fused[:head], places)
        order = [chunk_id for chunk_id, _ in fused]
        scores = dict(fused)
        hit_ids = {name: {h for h, _ in hits} for name, hits in ranked.items()}
        found_by = {
            chunk_id: tuple(name for name, ids in hit_ids.items() if chunk_id in ids)
            for chunk_id in order[:head]
        }
        # (before a service reranker, which judges relevance itself, on one scale of scores)
        prior = path_prior(query)
        if prior is not None:
            order, scores = _with_prior(order, scores, chunks, prior)
        if self.reranker is not None and order and self.service_failed():
            # the query's embedding just failed at the service: asking it again (the reranker
            # is the same service) would double the wait for the same answer
            self.skipped["rerank"] = "not asked: the service failed the query's embedding"
        elif self.reranker is not None and order:
            order, scores, withheld = self._rerank(query, order, scores, chunks)
            if withheld is not None:
                found_by = {i: found_by.get(i, ()) if i in withheld
                            else (*found_by.get(i, ()), "rerank") for i in order}
                definition_rerank = False
        if self.definitions is None:
            return [
                _result(chunks[i], scores[i], query, found_by.get(i, ()))
                for i in order[:k] if i in chunks
            ]
        words = self.query_words(query, stems=self.weights.stems)
        if definition_rerank:
            # a deeper read lists the definitions of the chunks past search's own depth after
            # those of its first chunks: its own results keep their order, more come below
            own = min(depth or self.weights.depth, self.weights.depth)
            layers = [order[:own], order[own:depth]] if depth and depth > own else [order[:own]]
            units: list[Unit] = []
            shown: set[tuple[str, int, int]] = set()
            for layer in layers:
                for unit in self._reranked(query, layer, ranked, chunks, words, prior):
                    key = (chunks[unit.chunk_id].chunk.path, unit.start_line, unit.end_line)
                    if key not in shown:
                        shown.add(key)
                        units.append(unit)
            return [
                _result(chunks[u.chunk_id], u.score, query,
                        (*found_by.get(u.chunk_id, ()), "rerank"), u)
                for u in units[:k]
            ]
        results = []
        for i in order[:k]:
            if i in chunks:
                c = chunks[i].chunk
                unit = narrow(i, c, self.definitions(c.path), words, self.weights)
                results.append(_result(chunks[i], scores[i], query, found_by.get(i, ()), unit))
        return results

    def _reranked(self, query: str, layer: list[int], ranked: dict[str, list[tuple[int, float]]],
                  chunks: dict[int, StoredChunk], words: QueryWords,
                  prior: PathPrior | None) -> list[Unit]:
        """The definitions of the chunks of ``layer`` (fused order), reranked."""
        assert self.definitions is not None
        plain = {i: chunks[i].chunk for i in layer if i in chunks}
        # the vector source's cosines (a chunk outside its top ``candidates`` counts as the
        # least similar of them)
        similarity = dict(ranked.get("vector", ())) if self.weights.similarity else None
        closeness = (self.declaration_closeness(query, list(plain))
                     if "declarations" in ranked and self.weights.declaration else None)
        # the prior again: a test's name holds the words of what it tests
        return rerank_definitions(layer, plain, self.definitions, words,
                                  replace(self.weights, depth=len(layer)),
                                  similarity=similarity, path_factor=prior,
                                  declaration_closeness=closeness)

    def service_failed(self) -> bool:
        """Whether the remote service failed this search's query embedding."""
        made = self._query_vector[1] if self._query_vector is not None else None
        return isinstance(made, (ServiceError, RetriesExhaustedError, CircuitOpenError))

    def _rerank(
        self,
        query: str,
        order: list[int],
        scores: dict[int, float],
        chunks: dict[int, StoredChunk],
    ) -> tuple[list[int], dict[int, float], set[int] | None]:
        """The new order and scores, and the chunks withheld from the reranker (None: the
        rerank did not happen)."""
        assert self.reranker is not None
        head = [i for i in order[: self.rerank_top] if i in chunks]
        # A remote reranker never sees chunks of never-send files: they keep their fused place.
        egress = getattr(self.reranker, "egress", None)
        sent = [i for i in head if egress is None or egress.policy.allows(chunks[i].chunk.path)]
        withheld = set(head) - set(sent)
        if not sent:
            return order, scores, None
        documents = [f"{chunks[i].chunk.header}\n{chunks[i].chunk.text}" for i in sent]
        try:
            if egress is not None:
                ranked = self.reranker.rerank(  # type: ignore[call-arg]
                    query, documents, len(sent), paths=[chunks[i].chunk.path for i in sent]
                )
            else:
                ranked = self.reranker.rerank(query, documents, len(sent))
        except RetrievalError as exc:
            log.warning("rerank skipped: %s", exc)
            self.skipped["rerank"] = str(exc)
            return order, scores, None
        reranked = [sent[index] for index, _ in ranked]
        if withheld:
            returned = set(reranked)
            refill = iter([*reranked, *(i for i in sent if i not in returned)])
            new_order = [i if i in withheld else next(refill) for i in head]
        else:
            new_order = reranked
        new_scores = dict(scores)
        new_scores.update({sent[index]: score for index, score in ranked})
        rest = [i for i in order if i not in set(new_order)]
        return new_order + rest, new_scores, withheld


def _with_prior(
    order: list[int], scores: dict[int, float], chunks: dict[int, StoredChunk],
    path_factor: PathPrior,
) -> tuple[list[int], dict[int, float]]:
    """``order`` with each fetched chunk's score multiplied by ``path_factor`` of its path and
    symbol, re-sorted; only the fetched head moves, the rest keeps its place after it."""
    head = [i for i in order if i in chunks]
    adjusted = dict(scores)
    for i in head:
        adjusted[i] = scores[i] * path_factor(chunks[i].chunk.path, chunks[i].chunk.symbol)
    head.sort(key=lambda i: -adjusted[i])  # stable: ties keep the fused order
    fetched = set(head)
    return head + [i for i in order if i not in fetched], adjusted


def reciprocal_rank_fusion(
    ranked: dict[str, list[tuple[int, float]]], k: int = 60,
    weights: Mapping[str, float] | None = None,
) -> list[tuple[int, float]]:
    """Sum of weight/(k + rank) over the sources that ranked each id (rank 1 = best; a source's
    weight is 1 unless ``weights`` says otherwise), best first."""
    totals: dict[int, float] = {}
    for name, hits in ranked.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, (item, _) in enumerate(hits, start=1):
            totals[item] = totals.get(item, 0.0) + weight / (k + rank)
    return sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))


def _result(
    stored: StoredChunk,
    score: float,
    query: str,
    sources: tuple[str, ...],
    unit: Unit | None = None,
) -> SearchResult:
    """The result for a chunk, or for ``unit`` (a definition inside it) when given."""
    chunk = stored.chunk
    start, end, text = chunk.start_line, chunk.end_line, chunk.text
    symbol, kind = chunk.symbol, chunk.kind
    if unit is not None and (unit.start_line, unit.end_line) != (start, end):
        lines = text.split("\n")
        text = "\n".join(lines[unit.start_line - start : unit.end_line - start + 1]) + "\n"
        start, end, symbol, kind = unit.start_line, unit.end_line, unit.symbol, unit.kind
    if unit is not None and unit.lead:
        symbol, kind = unit.lead, unit.lead_kind
    best = best_line(text, query)
    return SearchResult(
        path=chunk.path,
        start_line=start,
        end_line=end,
        symbol=symbol,
        kind=kind,
        score=score,
        snippet=snippet(text, query, best=best),
        sources=sources,
        chunk_id=stored.id,
        language=chunk.language,
        match_line=start + best,
        definitions=unit.held if unit is not None else (),
        lead=unit.lead if unit is not None else "",
    )


def snippet(
    text: str, query: str, context: int = 2, max_chars: int = 600, best: int | None = None
) -> str:
    """The lines around the line sharing most words with the query (the first line if none)."""
    lines = [line.rstrip("\r") for line in text.split("\n")]
    if lines and not lines[-1]:
        lines.pop()
    if not lines:
        return ""
    if best is None:
        best = best_line(text, query)
    start = max(best - context, 0)
    return "\n".join(lines[start : best + context + 1])[:max_chars]


def best_line(text: str, query: str) -> int:
    """The 0-based index of the line sharing most words with the query (0 if none); lines are
    split on ``\\n`` only, as the chunker counts them."""
    wanted = set(content_terms(query))
    if not wanted:
        return 0
    # every term of a line is a substring of the line lower-cased: lines without any are skipped
    # by one regex search instead of being split into terms
    probe = re.compile("|".join(map(re.escape, sorted(wanted, key=len, reverse=True))))
    best, best_score = 0, 0
    for number, line in enumerate(text.split("\n")):
        if probe.search(line.lower()) is None:
            continue
        score = len(wanted.intersection(line_terms(line)))
        if score > best_score:
            best, best_score = number, score
    return best
