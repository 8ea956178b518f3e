"""``python -m bench.context_eval.fusion WEIGHT [--repo PATH ...]``: the embedding walks again
with both vector sources of search's fusion (``vector``, ``declarations``) at ``WEIGHT``.

An experiment, not a published table: recall of knoxidx context and plain retrieval per
repository and pooled, printed; nothing under ``bench/.cache/context_eval/runs`` or
``bench/results`` is written (the walks reuse the embedding clones, whose index ends where a
plain walk leaves it). The weight is set on the product's own ``SOURCE_WEIGHTS`` before the
index opens, so what is measured is the installed search with one number changed.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench.context_eval.__main__ import CACHE, repositories
from bench.context_eval.run import BUDGETS, walk
from knoxidx.retrieval import hybrid_search
from knoxidx.retrieval.hybrid_search import VECTOR_SOURCES

SYSTEMS = ("context", "retrieval")


@contextmanager
def vector_weight(weight: float) -> Iterator[None]:
    """Search's vector sources at ``weight`` in the fusion while inside (an index opened
    inside keeps it), the installed weights restored after."""
    saved = dict(hybrid_search.SOURCE_WEIGHTS)
    hybrid_search.SOURCE_WEIGHTS.update({name: weight for name in VECTOR_SOURCES})
    try:
        yield
    finally:
        hybrid_search.SOURCE_WEIGHTS.clear()
        hybrid_search.SOURCE_WEIGHTS.update(saved)


def covered(tasks: list[dict[str, Any]]) -> dict[str, int]:
    """Gold definitions covered per ``system@budget``, and the gold count under ``gold``."""
    out = {"gold": sum(len(t["gold"]) for t in tasks)}
    for system in SYSTEMS:
        for budget in BUDGETS:
            out[f"{system}@{budget}"] = sum(t["systems"][system][str(budget)]["covered"]
                                            for t in tasks)
    return out


def line(label: str, counts: dict[str, int]) -> str:
    return f"{label}: " + ", ".join(f"{key} {n / counts['gold']:.3f}"
                                    for key, n in counts.items() if key != "gold")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.context_eval.fusion",
                                     description=__doc__.split("\n\n")[1])
    parser.add_argument("weight", type=float, help="fusion weight of each vector source")
    parser.add_argument("--repo", action="append", metavar="PATH",
                        help="a git repository or bundle (repeatable; default: the five)")
    parser.add_argument("--tasks", type=int, default=30, help="tasks per repository")
    args = parser.parse_args(argv)
    pooled: dict[str, int] = {}
    with vector_weight(args.weight):
        for repo in repositories(args.repo):
            run = walk(repo, CACHE, count=args.tasks, embed=True, log=lambda _m: None)
            counts = covered(run["tasks"])
            pooled = {key: pooled.get(key, 0) + n for key, n in counts.items()}
            print(line(f"{repo.name} (verify {run['verify'] and run['verify']['equal']})",
                       counts), flush=True)
    print(line("pooled", pooled))
    return 0


if __name__ == "__main__":
    sys.exit(main())
