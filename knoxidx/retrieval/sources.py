"""The six sources of a hybrid search, each ranking chunks on its own scale: lexical
(FTS5/BM25 over identifier-split words), vector (cosine with each chunk's vector),
declarations (cosine with each code definition's declaration; a chunk ranks by its best),
symbol-name hits from the graph, definitions named with the query's words, and the chunks
holding the identifiers the query writes as code; plus what the
rerank asks of the vectors (``declaration_closeness``). :class:`SearchSources` is the part of
:class:`~knoxidx.retrieval.hybrid_search.HybridSearch` that runs them; the search fuses and reranks."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from knoxidx.retrieval.chunker import Chunk
from knoxidx.retrieval.embedder import Embedder
from knoxidx.retrieval.errors import RetrievalError
from knoxidx.retrieval.lexical_rows import ChunkFilter
from knoxidx.retrieval.names import (
    PRESELECT,
    declaration_head,
    declaration_head_of,
    query_stems,
    rank_names,
)
from knoxidx.retrieval.query_words import QueryWords
from knoxidx.retrieval.rerank import DeclarationCloseness
from knoxidx.retrieval.store import ChunkStore
from knoxidx.retrieval.store_schema import NAMES_PER_CHUNK
from knoxidx.retrieval.terms import code_words, content_terms
from knoxidx.retrieval.ties import first_by_place
from knoxidx.retrieval.units import Unit
from knoxidx.retrieval.vectors import VectorIndex, from_blobs, load_matrix

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SymbolHit:
    """A definition whose name matched the query, from the graph's symbol table."""

    path: str
    line: int
    name: str
    kind: str


SymbolSource = Callable[[str, int], Sequence[SymbolHit]]


class SearchSources:
    store: ChunkStore
    embedder: Embedder | None
    symbol_source: SymbolSource | None
    candidates: int  # how many chunks each source returns
    _filter: ChunkFilter  # the current search's restriction
    _indexes: dict[str, tuple[int, VectorIndex]]  # matrix -> (vectors' version, index)
    _query_vector: tuple[str, Any] | None  # embedded once per search
    _words: tuple[str, bool, QueryWords] | None  # made once per search

    def lexical(self, query: str) -> list[tuple[int, float]]:
        return self.cut(self.store.lexical_search(content_terms(query), self.read_depth(),
                                                  self._filter))

    def identifiers(self, query: str) -> list[tuple[int, float]]:
        """Chunks holding the identifiers the query writes as code (``single_precision``,
        ``MapVisitor``, ``f64``), best BM25 over those alone: a commit message's or an
        agent's exact name outweighs the prose around it. None when it writes none."""
        return self.cut(self.store.lexical_search(code_words(query), self.read_depth(),
                                                  self._filter))

    def vector(self, query: str) -> list[tuple[int, float]]:
        query_vector = self.query_vector(query)
        if query_vector is None:
            return []
        if hasattr(self.store, "vector_search"):  # the store searches its own vector index
            return self.cut(self.store.vector_search(query_vector, self.read_depth(),
                                                     self._filter))
        index = self.vector_index()
        if len(index) == 0:
            return []
        allowed = self.store.chunk_ids(self._filter) if self._filter else None
        return self.cut(index.top_k(query_vector, self.read_depth(), allowed))

    def declarations(self, query: str) -> list[tuple[int, float]]:
        """Chunks by the best cosine of the query with their declarations' vectors."""
        query_vector = self.query_vector(query)
        if query_vector is None:
            return []
        if hasattr(self.store, "declaration_search"):  # the store searches its own index
            return self.cut(self.store.declaration_search(query_vector, self.read_depth(),
                                                          self._filter))
        index = self.declaration_index()
        if len(index) == 0:
            return []
        allowed = self.store.chunk_ids(self._filter) if self._filter else None
        return self.cut(index.top_groups(query_vector, self.read_depth(), NAMES_PER_CHUNK,
                                         allowed))

    def declaration_cosines(self, query: str, chunk_ids: Sequence[int]
                            ) -> dict[int, list[tuple[str, float]]]:
        """(declaration text, the query's cosine with its vector) of each embedded
        declaration of the given chunks."""
        query_vector = self.query_vector(query)
        if query_vector is None:
            return {}
        if hasattr(self.store, "declaration_cosines"):  # the store compares them itself
            return self.store.declaration_cosines(query_vector, chunk_ids)
        texts = self.store.declarations(chunk_ids)
        cosines = self.declaration_index().cosines(
            query_vector, [d for rows in texts.values() for d, _ in rows])
        return {chunk_id: [(text, cosines[d]) for d, text in rows if d in cosines]
                for chunk_id, rows in texts.items()}

    def declaration_closeness(self, query: str, chunk_ids: Sequence[int]
                              ) -> DeclarationCloseness | None:
        """How much closer the query is to a unit's declaration than to the least close
        declaration of ``chunk_ids`` (``RerankWeights.declaration``): a unit is found by its
        declaration's head (``names.declaration_head``; overloads share one, and count by the
        best); a unit that is its whole chunk, or has no declaration of its own, counts as
        its chunk's closest; a chunk with none embedded, as the least close. None when the
        query has no vector."""
        try:
            found = self.declaration_cosines(query, chunk_ids)
        except RetrievalError:  # the vector sources already said why they were skipped
            return None
        best: dict[int, dict[str, float]] = {}
        for chunk_id, rows in found.items():
            heads = best.setdefault(chunk_id, {})
            for text, cosine in rows:
                head = declaration_head_of(text)
                heads[head] = max(heads.get(head, cosine), cosine)
        floor = min((c for heads in best.values() for c in heads.values()), default=None)
        if floor is None:
            return None

        def closeness(unit: Unit, chunk: Chunk) -> float:
            heads = best.get(unit.chunk_id)
            if not heads:
                return 0.0
            closest = max(heads.values())
            if (unit.start_line, unit.end_line) == (chunk.start_line, chunk.end_line):
                return closest - floor
            head = declaration_head(chunk.path, unit.symbol, unit.kind)
            return heads.get(head, closest) - floor

        return closeness

    def query_vector(self, query: str) -> Any:
        """The query's vector (made once per search), or None when there is no embedder or
        the index holds another model's vectors."""
        if self.embedder is None:
            return None
        if self._query_vector is not None and self._query_vector[0] == query:
            made = self._query_vector[1]
            if isinstance(made, RetrievalError):  # a failing service is asked once a search
                raise made
            return made
        recorded = self.store.recorded_model()
        if recorded is not None and recorded != self.embedder.model_id:
            log.warning(
                "vector search skipped: the index holds %s vectors, the query embedder is %s",
                recorded,
                self.embedder.model_id,
            )
            return None
        try:
            vector = self.embedder.embed_query(query)
        except RetrievalError as exc:
            self._query_vector = (query, exc)
            raise
        self._query_vector = (query, vector)
        return vector

    def symbols(self, query: str) -> list[tuple[int, float]]:
        if self.symbol_source is None:
            return []
        out: dict[int, float] = {}
        for rank, hit in enumerate(self.symbol_source(query, self.candidates)):
            for chunk_id in self.store.chunks_at(hit.path, hit.line, self._filter)[:1]:
                out.setdefault(chunk_id, 1.0 / (rank + 1))
        return list(out.items())

    def names(self, query: str) -> list[tuple[int, float]]:
        words = self.query_words(query, stems=True)
        rows = self.store.name_search(query_stems(words), PRESELECT, self._filter)
        # names' scores are few and often equal: the cut goes by place, not by id
        return self.cut(rank_names(rows, words, len(rows)))

    def read_depth(self) -> int:
        """How many hits a source reads to keep its ``candidates``: twice as many, so that a
        run of equal scores across the cut is seen (up to that depth) and cut by place."""
        return 2 * self.candidates

    def cut(self, hits: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
        """The first ``candidates`` of ``hits`` (best first), a run of equal scores across
        the cut taken by place: not by chunk id, which follows the order of writing."""
        return first_by_place(hits, self.candidates, self.store.places)

    def query_words(self, query: str, *, stems: bool) -> QueryWords:
        """The query's content words with their IDF weights, kept until the next search (the
        index, and so the weights, may change between searches)."""
        if self._words is None or self._words[:2] != (query, stems):
            frequencies = self.store.document_frequencies(content_terms(query))
            self._words = (query, stems, QueryWords(query, *frequencies, stems=stems))
        return self._words[2]

    def vector_index(self) -> VectorIndex:
        return self._matrix("vectors", self.store.all_vectors)

    def declaration_index(self) -> VectorIndex:
        return self._matrix("declarations", self.store.all_declaration_vectors)

    def _matrix(self, name: str, read: Callable[[], tuple[Any, Any]]) -> VectorIndex:
        """The ``name`` matrix (chunk or declaration vectors), read again after a vector write."""
        version = self.store.vectors_version()
        cached = self._indexes.get(name)
        if cached is not None and cached[0] == version:
            return cached[1]
        dimension = self.embedder.dimension if self.embedder else 0
        if hasattr(self.store, "vectors_token"):  # SQLite: a memory-mapped copy
            ids, matrix = load_matrix(self.store.database_folder(), self.store.vectors_token(),
                                      dimension, read, name=name)
            index = VectorIndex(ids, matrix, normalized=True)
        else:
            ids, blobs = read()
            index = VectorIndex(ids, from_blobs(blobs, dimension))
        self._indexes[name] = (version, index)
        return index
