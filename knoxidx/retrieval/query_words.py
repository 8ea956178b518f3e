"""A query's content words, weighted by their IDF over the chunks."""

from __future__ import annotations

import math
from collections.abc import Iterable

from knoxidx.retrieval.rerank_weights import RerankWeights
from knoxidx.retrieval.terms import code_words, content_terms, stem


class QueryWords:
    """The query's content words with their IDF weights (all 1 when ``total`` is 0: unknown);
    with ``stems``, keyed by their stems (forms of one word count once, at their highest
    weight), and units' words are then stemmed too (see ``rerank.match_score``)."""

    def __init__(
        self, query: str, frequencies: dict[str, int], total: int, *, stems: bool = False
    ) -> None:
        self.query = query
        words = content_terms(query)
        weight = {
            w: math.log(1 + total / (1 + frequencies.get(w, 0))) if total > 0 else 1.0
            for w in words
        }
        if stems:
            stemmed: dict[str, float] = {}
            for w, v in weight.items():
                stemmed[stem(w)] = max(stemmed.get(stem(w), 0.0), v)
            weight = stemmed
        self.stems = stems
        self.frequencies = frequencies  # chunks holding each word (unstemmed)
        self.chunks = total
        self.weight = weight
        self.total = sum(self.weight.values()) or 1.0

    def share(self, words: set[str] | frozenset[str]) -> float:
        return sum(v for w, v in self.weight.items() if w in words) / self.total

    def holds_any(self, words: Iterable[str]) -> bool:
        """Whether any of ``words`` (a name's parts) is one of the query's (by stem when
        stemmed)."""
        return any((stem(w) if self.stems else w) in self.weight for w in words)


def rare_code_words(words: QueryWords, weights: RerankWeights) -> list[str]:
    """The identifiers the query writes as code that lift the units holding them: those held
    by at most ``weights.identifier_share`` of the chunks (all when the share is 0 or the
    chunk count unknown); none when ``weights.identifiers`` is 0."""
    if not weights.identifiers:
        return []
    found = code_words(words.query)
    if not weights.identifier_share or words.chunks <= 0:
        return found
    most = weights.identifier_share * words.chunks
    return [w for w in found if words.frequencies.get(w, 0) <= most]
