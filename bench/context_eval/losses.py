"""``python -m bench.context_eval.losses``: where knoxidx context and plain retrieval differ.

For every saved task (``bench/.cache/context_eval/states/``, see :mod:`.state`), per budget,
each gold definition that one of the two systems covers and the other does not, as the walk
scored them (context is ``Index.context`` as installed), is listed with the reason the context
pack missed it (or what it showed instead), read from the saved state packed again: not among
the gathered candidates (by where search put its file: no hit there, among the first five files
of the hits, or further down), one of search's own results, which fill the budget left, left
out (its place in search's results), a hit left out when the budget was spent, shown elided without the changed lines, shown as a signature or
an outline, inside a block that shows too little of it, or only in the tuner's wider gathering.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

from bench.context_eval.coverage import Shown, first_cover
from bench.context_eval.mining import Definition
from bench.context_eval.state import restored
from bench.context_eval.systems import context_pack
from bench.context_eval.tune import BUDGETS, Task, load
from knoxidx.answers.context import Candidate, ContextWeights, pack, rank

WIDER_ONLY = "covered only by the tuner's wider gathering"
SEED_FILES = 5  # files of search's first hits: a miss in one is a question of gathering, not search


def why_missed(gold: Definition, ranked: list[Candidate], answer: dict[str, Any],
               budget: int, fill: list[Candidate] | None = None) -> str:
    """The reason a context pack does not cover ``gold``, from the saved state packed again
    (its wider gathering can cover what the installed weights' own does not)."""
    if first_cover(context_pack(answer), gold):
        return WIDER_ONLY
    holding = [(n, c) for n, c in enumerate(ranked) if c.path == gold.path
               and c.start <= gold.start and gold.end <= c.end]
    if not holding:
        filling = first_cover([Shown(c.path, c.start, c.end) for c in fill or ()], gold)
        if filling is not None:  # only search's own results, which fill what is left
            spent = sum(b["tokens"] for b in answer["blocks"])
            return f"search result left out (pack {spent}/{budget} tokens, its #{filling})"
        return not_gathered(gold, ranked)
    n, cand = min(holding, key=lambda nc: nc[1].end - nc[1].start)
    item = answer["items"][n]
    how = item["included"]
    kind = "hit" if cand.hit_rank is not None else f"neighbour ({cand.relation})"
    if how is None:
        spent = sum(b["tokens"] for b in answer["blocks"])
        return f"{kind} left out (pack {spent}/{budget} tokens, place {n + 1})"
    block = answer["blocks"][item["block"]]
    return f"{kind} shown {block['mode']}"


def not_gathered(gold: Definition, ranked: list[Candidate]) -> str:
    """Why ``gold`` is not among the candidates, by where search put its file: no hit in it
    (search's miss), in one of the first ``SEED_FILES`` files of the hits (a miss of the
    gathering: neither a graph link nor enough of the question's words), or further down."""
    hit_files = list(dict.fromkeys(c.path for c in sorted(
        (c for c in ranked if c.hit_rank is not None), key=lambda c: c.hit_rank or 0)))
    if gold.path not in hit_files:
        return "not gathered: no hit in its file"
    place = hit_files.index(gold.path) + 1
    if place <= SEED_FILES:
        return f"not gathered: its file is among search's first {SEED_FILES}"
    return f"not gathered: its file is search's {SEED_FILES + 1}th or lower"


def compare(tasks: dict[str, list[Task]], w: ContextWeights,
            verbose: bool) -> dict[int, tuple[Counter[str], Counter[str], Counter[str]]]:
    out: dict[int, tuple[Counter[str], Counter[str], Counter[str]]] = {
        b: (Counter(), Counter(), Counter()) for b in BUDGETS}
    for repo, repo_tasks in tasks.items():
        for task in repo_tasks:
            gathered = restored(task.state, task.files)
            task.files = gathered.files
            ranked = rank(gathered, w)
            for budget in BUDGETS:
                answer = pack(gathered, ranked, budget, w)
                retrieval = task.record["systems"]["retrieval"][str(budget)]["ranks"]
                published = task.record["systems"]["context"][str(budget)]["ranks"]
                lost, won, both = out[budget]
                for gold, by_retrieval, by_context in zip(task.gold, retrieval, published,
                                                          strict=True):
                    if not by_retrieval and not by_context:
                        reason = why_missed(gold, ranked, answer, budget, gathered.search_fill())
                        both[reason.split(" (pack")[0]] += 1
                        if verbose:
                            print(f"{repo} @{budget} {task.record['commit'][:10]} {gold.name}:"
                                  f" both miss: {reason}")
                            if reason.startswith("not gathered"):  # what would have found it
                                print(f"    {gold.path}  asked: {task.record['question']!r}")
                        continue
                    if by_retrieval and not by_context:
                        reason = why_missed(gold, ranked, answer, budget, gathered.search_fill())
                        lost[reason.split(" (pack")[0]] += 1
                    elif by_context and not by_retrieval:
                        reason = "context covers, retrieval not"
                        won[repo] += 1
                    else:
                        continue
                    if verbose:
                        print(f"{repo} @{budget} {task.record['commit'][:10]} {gold.name}: "
                              f"{reason}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.context_eval.losses",
                                     description=__doc__.split("\n\n")[1])
    parser.add_argument("--variant", default="no_embeddings",
                        choices=("no_embeddings", "embeddings"))
    parser.add_argument("--repo", nargs="*", help="only these repositories")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="one line per difference (a gold never gathered: its file and "
                        "the question too)")
    args = parser.parse_args(argv)
    tasks = {r: t for r, t in load(args.variant).items() if not args.repo or r in args.repo}
    if not tasks:
        print("no saved states", file=sys.stderr)
        return 1
    for budget, (lost, won, both) in compare(tasks, ContextWeights(), args.verbose).items():
        print(f"@{budget}: context misses what retrieval covers: {sum(lost.values())}")
        for reason, n in lost.most_common():
            print(f"  {n:3} {reason}")
        print(f"@{budget}: context covers what retrieval misses: {sum(won.values())} "
              f"({dict(won)})")
        print(f"@{budget}: both miss: {sum(both.values())}")
        for reason, n in both.most_common():
            print(f"  {n:3} {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
