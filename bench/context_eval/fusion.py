"""``python -m bench.context_eval.fusion WEIGHT [WEIGHT ...] [--repo PATH ...]``: the embedding
walks again, knoxidx context measured with its search's vector sources (``vector``,
``declarations``) at each ``WEIGHT`` (``ContextWeights.vector_fusion``) in the same walk.

An experiment, not a published table: recall of knoxidx context at each weight and of plain
retrieval (``Index.search`` at the installed ``SOURCE_WEIGHTS``) per repository and pooled,
printed; nothing under ``bench/.cache/context_eval/runs`` or ``bench/results`` is written (the
walks reuse the embedding clones, whose index ends where a plain walk leaves it).
:func:`vector_weight` sets the weight of every search instead, for the retrieval benchmark's
``misses --vector-weight``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from bench.context_eval.__main__ import CACHE, repositories
from bench.context_eval.run import BUDGETS, walk
from knoxidx.answers.context import ContextWeights
from knoxidx.retrieval import hybrid_search
from knoxidx.retrieval.hybrid_search import VECTOR_SOURCES


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


def variants(weights: Sequence[float]) -> dict[str, ContextWeights]:
    """knoxidx context as installed but for its vector sources' weight, one per weight."""
    return {f"context w={weight:g}": replace(ContextWeights(), vector_fusion=weight)
            for weight in weights}


def covered(tasks: list[dict[str, Any]], systems: Sequence[str],
            budgets: Sequence[int] = BUDGETS) -> dict[str, int]:
    """Gold definitions covered per ``system@budget``, and the gold count under ``gold``."""
    out = {"gold": sum(len(t["gold"]) for t in tasks)}
    for system in systems:
        for budget in budgets:
            out[f"{system}@{budget}"] = sum(t["systems"][system][str(budget)]["covered"]
                                            for t in tasks)
    return out


def line(label: str, counts: dict[str, int]) -> str:
    return f"{label}: " + ", ".join(f"{key} {n / counts['gold']:.3f}"
                                    for key, n in counts.items() if key != "gold")


def walk_variants(repos: list[str] | None, tasks: int, embed: bool,
                  measured: dict[str, ContextWeights], systems: Sequence[str]) -> None:
    """Each repository walked once with every ``measured`` variant asked beside the installed
    systems; recall of ``systems`` printed per repository and pooled."""
    pooled: dict[str, int] = {}
    for repo in repositories(repos):
        run = walk(repo, CACHE, count=tasks, embed=embed, log=lambda _m: None,
                   variants=measured)
        counts = covered(run["tasks"], systems)
        pooled = {key: pooled.get(key, 0) + n for key, n in counts.items()}
        print(line(f"{repo.name} (verify {run['verify'] and run['verify']['equal']})",
                   counts), flush=True)
    print(line("pooled", pooled))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.context_eval.fusion",
                                     description=__doc__.split("\n\n")[1])
    parser.add_argument("weights", type=float, nargs="+", metavar="WEIGHT",
                        help="fusion weight of each vector source in context's search")
    parser.add_argument("--repo", action="append", metavar="PATH",
                        help="a git repository or bundle (repeatable; default: the five)")
    parser.add_argument("--tasks", type=int, default=30, help="tasks per repository")
    args = parser.parse_args(argv)
    measured = variants(args.weights)
    walk_variants(args.repo, args.tasks, True, measured, [*measured, "retrieval"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
