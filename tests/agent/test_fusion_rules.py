"""The benchmark's fusion rules: what each changes in hybrid search's fusion, and that the
installed fusion comes back after."""

from __future__ import annotations

from bench.context_eval.fusion_rules import HEAD, applied, dropped, guarded, one_vector_vote
from knoxidx.retrieval import hybrid_search
from knoxidx.retrieval.hybrid_search import reciprocal_rank_fusion


def _ranked() -> dict[str, list[tuple[int, float]]]:
    # chunks 1-30 ranked alike by both vector sources; lexical's own first is chunk 99
    agreeing = [(i, 1.0) for i in range(1, 31)]
    return {"vector": agreeing, "declarations": agreeing, "lexical": [(99, 5.0), (1, 4.0)]}


def test_a_guard_lifts_a_sources_first_chunks_into_the_reranked_head() -> None:
    installed = [i for i, _ in reciprocal_rank_fusion(_ranked(), 20)]
    assert installed.index(99) >= HEAD  # outvoted by the two agreeing vector sources
    order = [i for i, _ in guarded(reciprocal_rank_fusion, ("lexical",), 1)(_ranked(), 20)]
    assert order.index(99) < HEAD
    assert order[:HEAD - 1] == installed[:HEAD - 1]  # the head above it keeps its order


def test_a_dropped_source_takes_no_vote() -> None:
    order = [i for i, _ in dropped(reciprocal_rank_fusion, "declarations", 1.0)(_ranked(), 20)]
    # one vector vote: 1/(20+1) each for lexical's first and vector's first
    assert order[:2] == [1, 99]


def test_two_agreeing_vector_sources_count_as_one_vote() -> None:
    ranked = _ranked() | {"declarations": [(7, 1.0), (1, 0.9)]}
    scores = dict(one_vector_vote(reciprocal_rank_fusion, 1.0)(ranked, 20))
    assert scores[1] == 1 / 21 + 1 / 22  # its better vector place, and lexical's second
    assert scores[7] == 1 / 21  # the declarations source's first, absent from vector's
    assert scores[99] == 1 / 21


def test_a_rule_is_undone_after_its_walk() -> None:
    fuse, weights = hybrid_search.reciprocal_rank_fusion, hybrid_search.RerankWeights
    with applied("drop:declarations"):
        assert hybrid_search.reciprocal_rank_fusion is not fuse
    with applied("rerank:declaration=0"):
        assert hybrid_search.RerankWeights().declaration == 0.0
    assert hybrid_search.reciprocal_rank_fusion is fuse
    assert hybrid_search.RerankWeights is weights
