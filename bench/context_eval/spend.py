"""``python -m bench.context_eval.spend [--budget 4000] [--repo NAME ...]``: where knoxidx
context's budget goes, and where the gold stood in its ranking.

From the saved states (:mod:`.state`, packed again at the installed weights, as
:mod:`.tune` does), two tables per budget: the tokens of every pack's blocks by what placed
them (the top hit, hits 2-5, 6-15 and below, the top hit's whole file, or the relation of a
graph neighbour, and the block's mode) with the share of those tokens in blocks that cover a
gold function; and each gold function by the place of the first candidate holding it
(never gathered, only inside the top hit's whole file, only in the tuner's wider gathering)
and whether the pack covers it. With ``-v``, per gold function gathered and not covered, what
its pack spent the budget on that covers no gold. An experiment: prints, writes nothing.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

from bench.context_eval.coverage import Shown, covers, first_cover
from bench.context_eval.mining import Definition
from bench.context_eval.state import restored
from bench.context_eval.systems import context_pack
from bench.context_eval.tune import load
from knoxidx.answers.context import Candidate, ContextWeights, pack, rank
from knoxidx.answers.packing import FILE_KIND

PLACES = ((1, "1"), (5, "2-5"), (15, "6-15"), (30, "16-30"), (1 << 30, "31+"))


def band(place: int) -> str:
    """The band of a 1-based place (or search rank + 1)."""
    return next(name for top, name in PLACES if place <= top)


def placed_by(cand: Candidate, mode: str) -> str:
    """What put a block in the pack: its first item's hit band or relation, and its mode."""
    if cand.kind == FILE_KIND:
        return f"top file {mode}"
    if cand.hit_rank is not None:
        return f"hit {band(cand.hit_rank + 1)} {mode}"
    return f"{cand.relation} {mode}"


def holder(gold: Definition, ranked: list[Candidate]) -> tuple[int, Candidate] | None:
    """The first candidate (not the top hit's file) holding ``gold``, with its place."""
    return next(((n, c) for n, c in enumerate(ranked) if c.path == gold.path
                 and c.kind != FILE_KIND and c.start <= gold.start and gold.end <= c.end), None)


def where(gold: Definition, ranked: list[Candidate], wider: list[Candidate]) -> str:
    held = holder(gold, ranked)
    if held is not None:
        return f"place {band(held[0] + 1)}"
    if any(c.kind == FILE_KIND and c.path == gold.path for c in ranked):
        return "only in the top hit's file"
    if any(c.path == gold.path and c.start <= gold.start and gold.end <= c.end for c in wider):
        return "only in the tuner's wider gathering"
    return "never gathered"


def spend(repos: dict[str, list[Any]], budget: int, verbose: bool) -> None:
    w = ContextWeights()
    tokens: Counter[str] = Counter()
    gold_tokens: Counter[str] = Counter()
    blocks: Counter[str] = Counter()
    places: Counter[tuple[str, bool]] = Counter()
    for repo, tasks in repos.items():
        for task in tasks:
            gathered = restored(task.state, task.files)
            task.files = gathered.files
            wider = list(gathered.candidates.values())
            ranked = rank(gathered, w)
            answer = pack(gathered, ranked, budget, w)
            by_name = {(c.path, c.name): c for c in reversed(ranked)}
            spent = []
            for block in answer["blocks"]:
                first = by_name.get((block["path"], block["items"][0]))
                what = placed_by(first, block["mode"]) if first else f"? {block['mode']}"
                golden = any(covers(Shown(block["path"], s, e), g)
                             for s, e in block["ranges"] for g in task.gold)
                tokens[what] += block["tokens"]
                blocks[what] += 1
                gold_tokens[what] += block["tokens"] if golden else 0
                spent.append((what, block["tokens"], golden))
            shown = context_pack(answer)
            for gold in task.gold:
                covered = first_cover(shown, gold) is not None
                stood = where(gold, ranked, wider)
                places[(stood, covered)] += 1
                if verbose and not covered and stood.startswith("place"):
                    held = holder(gold, ranked)
                    assert held is not None
                    waste: Counter[str] = Counter()
                    for what, n, golden in spent:
                        waste[what] += 0 if golden else n
                    print(f"{repo} {task.record['commit'][:10]} {gold.name}: {stood} "
                          f"({held[1].relation or 'hit'}, {held[0] + 1}); no-gold blocks: "
                          + ", ".join(f"{k} {v}" for k, v in waste.most_common() if v))
    total = sum(tokens.values()) or 1
    print(f"@{budget}: {total} tokens in {sum(blocks.values())} blocks")
    print(f"  {'placed by':28} {'blocks':>6} {'tokens':>8} {'share':>6} {'on gold':>8}")
    for what, n in tokens.most_common():
        print(f"  {what:28} {blocks[what]:6} {n:8} {n / total:6.2f} "
              f"{gold_tokens[what] / n if n else 0:8.2f}")
    print(f"@{budget}: gold functions by where they stood (covered / not)")
    order = [f"place {name}" for _, name in PLACES]
    for stood in sorted({s for s, _ in places}, key=lambda s: (s in order, order.index(s)
                                                               if s in order else s)):
        print(f"  {stood:36} {places[(stood, True)]:4} / {places[(stood, False)]:4}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.context_eval.spend",
                                     description=__doc__.split("\n\n")[1])
    parser.add_argument("--variant", default="no_embeddings",
                        choices=("no_embeddings", "embeddings"))
    parser.add_argument("--budget", type=int, default=4000)
    parser.add_argument("--repo", nargs="*", help="only these repositories")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="per gold function gathered and missed, the no-gold blocks")
    args = parser.parse_args(argv)
    repos = {r: t for r, t in load(args.variant).items() if not args.repo or r in args.repo}
    if not repos:
        print("no saved states", file=sys.stderr)
        return 1
    spend(repos, args.budget, args.verbose)
    return 0


if __name__ == "__main__":
    sys.exit(main())
