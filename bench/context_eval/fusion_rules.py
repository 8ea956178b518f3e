"""``python -m bench.context_eval.fusion_rules RULE [--repo PATH ...]``: the embedding walks
again with hybrid search's fusion or rerank changed by RULE, for every search of the walk
(knoxidx context's and plain retrieval's), one walk per repository.

A RULE is ``installed``; ``guard:lexical:N`` or ``guard:all:N`` (the first N chunks of the
lexical source, or of every source, lifted into the fused first 20 that search reranks, when
the fusion left them below); ``drop:SOURCE`` or ``drop:SOURCE:W`` (SOURCE left out of the
fusion; W: the ``vector`` source's weight instead of the one asked); ``max:W`` (the two
vector sources as one vote, a chunk's better place of the two, at W); ``rerank:KNOB=VALUE``
(a :class:`~knoxidx.retrieval.rerank_weights.RerankWeights` knob). An experiment, not a published
table: recall of knoxidx context and plain retrieval per repository and pooled, printed;
nothing under ``bench/.cache/context_eval/runs`` or ``bench/results`` is written.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from bench.context_eval.__main__ import CACHE, repositories
from bench.context_eval.fusion import covered, line
from bench.context_eval.run import walk
from knoxidx.retrieval import hybrid_search

Ranked = dict[str, list[tuple[int, float]]]
Fuse = Callable[..., list[tuple[int, float]]]
HEAD = 20  # the fused chunks whose definitions search reranks (``RerankWeights.depth``)


def guarded(fuse: Fuse, sources: tuple[str, ...], count: int) -> Fuse:
    """``fuse``, with the first ``count`` chunks of each of ``sources`` that it left below the
    ``HEAD``-th fused chunk scored just above that one (at its score, a tie by chunk id or
    place could leave them below it still)."""
    def fused(ranked: Ranked, k: int = 60,
              weights: Mapping[str, float] | None = None) -> list[tuple[int, float]]:
        order = fuse(ranked, k, weights)
        if len(order) <= HEAD:
            return order
        floor = order[HEAD - 1][1]
        lifted = math.nextafter(floor, math.inf)
        scores = dict(order)
        for name in sources:
            for chunk_id, _ in ranked.get(name, [])[:count]:
                if scores[chunk_id] <= floor:
                    scores[chunk_id] = lifted
        return sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))
    return fused


def dropped(fuse: Fuse, source: str, vector_weight: float | None) -> Fuse:
    def fused(ranked: Ranked, k: int = 60,
              weights: Mapping[str, float] | None = None) -> list[tuple[int, float]]:
        asked = dict(weights or {})
        if vector_weight is not None:
            asked["vector"] = vector_weight
        return fuse({n: hits for n, hits in ranked.items() if n != source}, k, asked)
    return fused


def one_vector_vote(fuse: Fuse, weight: float) -> Fuse:
    """``fuse`` with the two vector sources as one vote: a chunk counts its better place of
    the two, at ``weight``."""
    def fused(ranked: Ranked, k: int = 60,
              weights: Mapping[str, float] | None = None) -> list[tuple[int, float]]:
        best: dict[int, int] = {}
        for name in hybrid_search.VECTOR_SOURCES:
            for place, (chunk_id, _) in enumerate(ranked.get(name, []), 1):
                best[chunk_id] = min(best.get(chunk_id, place), place)
        votes = dict(fuse({n: hits for n, hits in ranked.items()
                           if n not in hybrid_search.VECTOR_SOURCES}, k, weights))
        for chunk_id, place in best.items():
            votes[chunk_id] = votes.get(chunk_id, 0.0) + weight / (k + place)
        return sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))
    return fused


@contextmanager
def applied(rule: str) -> Iterator[None]:
    """Search under ``rule`` while inside (an index opened inside keeps it)."""
    fuse, weights = hybrid_search.reciprocal_rank_fusion, hybrid_search.RerankWeights
    kind, _, spec = rule.partition(":")
    if kind == "guard":
        which, count = spec.split(":")
        sources = ("lexical",) if which == "lexical" else hybrid_search.SOURCES
        hybrid_search.reciprocal_rank_fusion = guarded(fuse, sources, int(count))
    elif kind == "drop":
        source, _, weight = spec.partition(":")
        hybrid_search.reciprocal_rank_fusion = dropped(fuse, source,
                                                       float(weight) if weight else None)
    elif kind == "max":
        hybrid_search.reciprocal_rank_fusion = one_vector_vote(fuse, float(spec))
    elif kind == "rerank":
        knob, value = spec.split("=")
        knobs: dict[str, Any] = {knob: float(value)}
        changed = replace(weights(), **knobs)
        hybrid_search.RerankWeights = lambda: changed  # type: ignore[assignment,misc]
    elif rule != "installed":
        raise SystemExit(f"not a rule: {rule!r} (see --help)")
    try:
        yield
    finally:
        hybrid_search.reciprocal_rank_fusion = fuse
        hybrid_search.RerankWeights = weights  # type: ignore[misc]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.context_eval.fusion_rules",
                                     description=__doc__.split("\n\n")[1])
    parser.add_argument("rule", metavar="RULE")
    parser.add_argument("--repo", action="append", metavar="PATH",
                        help="a git repository or bundle (repeatable; default: the five)")
    parser.add_argument("--tasks", type=int, default=30, help="tasks per repository")
    args = parser.parse_args(argv)
    pooled: dict[str, int] = {}
    with applied(args.rule):
        for repo in repositories(args.repo):
            run: dict[str, Any] = walk(repo, CACHE, count=args.tasks, embed=True,
                                       log=lambda _m: None)
            counts = covered(run["tasks"], ["context", "retrieval"])
            pooled = {key: pooled.get(key, 0) + n for key, n in counts.items()}
            print(line(f"{args.rule} {repo.name} (verify {run['verify']['equal']})", counts),
                  flush=True)
    print(line(f"{args.rule} pooled", pooled))
    return 0


if __name__ == "__main__":
    sys.exit(main())
