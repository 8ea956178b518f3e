"""Recall@k and MRR@k for docstring -> code queries, with definition-sized hits.

A result answers a query when its line span overlaps the target function's and is at most
``max(50, 2 x the function's length)`` lines long: a whole file that happens to contain the
function does not count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MIN_HIT_LINES = 50


@dataclass(frozen=True, slots=True)
class Span:
    path: str
    start_line: int  # 1-based, inclusive
    end_line: int


@dataclass(frozen=True, slots=True)
class Scores:
    recall: float  # Recall@k: share of queries answered within the first k results
    mrr: float  # MRR@k: mean of 1/rank of the first answer (0 when none in the first k)
    queries: int


def max_hit_lines(target: Span) -> int:
    return max(MIN_HIT_LINES, 2 * (target.end_line - target.start_line + 1))


def is_hit(result: Span, target: Span) -> bool:
    return (
        result.path == target.path
        and result.start_line <= target.end_line
        and target.start_line <= result.end_line
        and result.end_line - result.start_line + 1 <= max_hit_lines(target)
    )


def first_hit(results: Sequence[Span], target: Span, k: int = 10) -> int:
    """The 1-based rank of the first result answering ``target`` within ``k``; 0 if none."""
    for rank, result in enumerate(results[:k], start=1):
        if is_hit(result, target):
            return rank
    return 0


def score(rankings: Sequence[Sequence[Span]], targets: Sequence[Span], k: int = 10) -> Scores:
    if len(rankings) != len(targets):
        raise ValueError("one ranking per target")
    if not targets:
        return Scores(0.0, 0.0, 0)
    ranks = [first_hit(results, target, k) for results, target in zip(rankings, targets, strict=True)]
    return Scores(
        recall=sum(1 for r in ranks if r) / len(ranks),
        mrr=sum(1.0 / r for r in ranks if r) / len(ranks),
        queries=len(ranks),
    )
