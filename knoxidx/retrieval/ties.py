"""Hits tied on a score, ordered by what the chunks are rather than by their ids.

Chunk ids follow the order chunks were written (a file added later, or edited and edited back,
gets new ones), so an order or a cut that falls back on ids differs between two indexes of the
same files. Each run of equal scores is ordered by the chunks' places instead: path, start
line, end line (then id: the same path in two repositories of a shared store)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence

Place = tuple[str, int, int]  # a chunk's path, start line and end line
Hits = Sequence[tuple[int, float]]  # (chunk id, score), best first


def tied_ids(ranked: Iterable[Hits]) -> list[int]:
    """The ids that share their score with a neighbour in any of the ``ranked`` lists."""
    tied: dict[int, None] = {}
    for hits in ranked:
        for (before, score), (after, next_score) in itertools.pairwise(hits):
            if score == next_score:
                tied[before] = tied[after] = None
    return list(tied)


def by_place(hits: Hits, places: Mapping[int, Place]) -> list[tuple[int, float]]:
    """``hits`` with each run of equal scores ordered by the chunks' ``places``; a chunk
    without a place goes after those with one."""

    def place(chunk_id: int) -> tuple[bool, Place, int]:
        found = places.get(chunk_id)
        return found is None, found or ("", 0, 0), chunk_id

    out: list[tuple[int, float]] = []
    for _, run in itertools.groupby(hits, key=lambda hit: hit[1]):
        out.extend(sorted(run, key=lambda hit: place(hit[0])))
    return out


def through_ties(hits: Hits, head: int) -> int:
    """``head``, lengthened over the hits tied with the last of the first ``head``: which of
    them make the head is then not decided by their ids."""
    while 0 < head < len(hits) and hits[head][1] == hits[head - 1][1]:
        head += 1
    return head


def first_by_place(
    hits: Hits, limit: int, places: Callable[[list[int]], Mapping[int, Place]]
) -> list[tuple[int, float]]:
    """The first ``limit`` of ``hits``, the run of equal scores across the cut (if any)
    taken in place order (``places`` is asked for that run's only)."""
    if through_ties(hits, limit) == limit:
        return list(hits[:limit])
    score = hits[limit - 1][1]
    first = next(i for i, (_, s) in enumerate(hits) if s == score)
    run = [hit for hit in hits[first:] if hit[1] == score]
    return [*hits[:first], *by_place(run, places([i for i, _ in run]))[: limit - first]]
