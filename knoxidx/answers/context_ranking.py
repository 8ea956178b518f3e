"""The order of a context pack: each candidate's score from its features under the weights,
then the caps that keep search's order and hold graph neighbours below the hits that brought
them in."""

from __future__ import annotations

from knoxidx.answers.context_candidates import Candidate, ContextWeights
from knoxidx.answers.packing import FILE_KIND
from knoxidx.retrieval.priors import asks_about_tests, is_test_path

_CONFIG_SUFFIXES = (".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".conf", ".properties",
                    ".xml", ".lock", ".gradle")


def is_config_path(path: str) -> bool:
    """Whether ``path`` holds configuration rather than code (demoted like tests)."""
    return path.lower().endswith(_CONFIG_SUFFIXES)


def within_expansion(candidates: dict[str, Candidate],
                      w: ContextWeights) -> dict[str, Candidate]:
    """The hits, and the neighbours of the ``expand_hits`` best of them."""
    return {key: c for key, c in candidates.items() if c.hit_rank is not None or any(
        _counts(c, relation, candidates.get(source), w) for relation, source in c.links)}


def _counts(cand: Candidate, relation: str, source: Candidate | None,
            w: ContextWeights) -> bool:
    """Whether a link brings ``cand`` in under ``w``: from an expanded hit, and a sibling
    only while siblings are weighed and it matches the question well enough."""
    if relation == "sibling":
        return _expanded(source, w.sibling_hits) and w.sibling > 0 \
            and cand.lexical >= w.sibling_lexical
    if relation == "recent":
        return w.recent > 0 and cand.lexical >= w.recent_lexical
    if relation == "referenced":
        return w.referenced > 0
    if relation == "similar":
        return w.similar > 0
    if relation == "file":
        return w.top_file_share > 0 and _expanded(source, 1)
    return _expanded(source, w.expand_hits)


def _expanded(source: Candidate | None, hits: int) -> bool:
    return source is not None and source.hit_rank is not None and source.hit_rank < hits


def _hit_strength(cand: Candidate, w: ContextWeights) -> float:
    return 0.0 if cand.hit_rank is None else w.hit / (1 + w.hit_decay * cand.hit_rank)


def _proximity(cand: Candidate, candidates: dict[str, Candidate],
               w: ContextWeights) -> tuple[float, str]:
    """A hit's strength, or the strongest (hit's strength x relation weight) of its links."""
    best = (_hit_strength(cand, w), "hit" if cand.hit_rank is not None else "")
    for relation, key in cand.links:
        source = candidates.get(key)
        if relation == "recent" and _counts(cand, relation, None, w):
            best = max(best, (w.hit * w.recent, relation))
        elif relation == "referenced" and _counts(cand, relation, None, w):
            best = max(best, (w.hit * w.referenced, relation))
        elif relation == "similar" and _counts(cand, relation, None, w):
            best = max(best, (w.hit * w.similar, relation))
        elif relation == "file" and source is not None and _counts(cand, relation, source, w):
            best = max(best, (_hit_strength(source, w), relation))
        elif source is not None and _counts(cand, relation, source, w):
            best = max(best, (_hit_strength(source, w) * w.relation(relation), relation))
    return best


def score_candidates(query: str, candidates: dict[str, Candidate], w: ContextWeights) -> None:
    demote = not asks_about_tests(query)
    for cand in candidates.values():
        cand.proximity, cand.relation = _proximity(cand, candidates, w)
        cand.score = (w.semantic * cand.semantic + w.lexical * cand.lexical
                      + w.proximity * cand.proximity + w.centrality * cand.centrality
                      + w.history * cand.history)
        if demote and (is_test_path(cand.path) or is_config_path(cand.path)):
            cand.score *= w.demoted
        cand.relevance = cand.score
    # search's own order of its hits stands (it already weighs words, names, vectors and
    # priors, and reranks): a hit never outranks one search put before it
    hits = sorted((c for c in candidates.values() if c.hit_rank is not None),
                  key=lambda c: c.hit_rank or 0)
    ceiling = float("inf")
    for cand in hits if w.search_order else ():
        cand.score = ceiling = min(cand.score, ceiling)
    hits.sort(key=lambda c: -c.score)
    # a graph neighbour never outranks the hits that brought it in, nor the next
    # ``neighbour_lag`` hits after them (a central class would otherwise lead the pack, and
    # small callees crowd out the hits that a small budget has room for); it takes the
    # score of the last of them, so it also follows the later hits tied with that one
    # (placed right after it instead: jsoup -3 gold @4k with embeddings, BENCHMARKS)
    # and a recently changed function ranks below the first ``recent_lag`` hits
    for cand in candidates.values():
        if cand.hit_rank is not None or not hits:
            continue
        lags = [(candidates[key].hit_rank or 0) + w.neighbour_lag
                for relation, key in cand.links
                if key in candidates and _counts(cand, relation, candidates[key], w)]
        if any(relation == "recent" and _counts(cand, relation, None, w)
               for relation, _ in cand.links):
            lags.append(w.recent_lag)
        if any(relation == "similar" and _counts(cand, relation, None, w)
               for relation, _ in cand.links):
            lags.append(w.similar_lag)
        if lags:
            cand.score = min(cand.score, max(hits[min(lag, len(hits) - 1)].score
                                             for lag in lags))
    # what a commit the question names changed: right after the top hit, never above it
    for cand in candidates.values():
        if cand.hit_rank is None and hits and any(
                relation == "referenced" and _counts(cand, relation, None, w)
                for relation, _ in cand.links):
            cand.score = hits[0].score
    # the top hit's file is not held back by the lag: it is shown whole only while small (the
    # packer's call), and then as good as the top hit's neighbourhood; never above the top hit
    for cand in candidates.values():
        top = candidates.get(cand.sources[0]) if cand.kind == FILE_KIND and cand.sources \
            else None
        if top is not None:
            cand.score = min(cand.relevance, top.score)
