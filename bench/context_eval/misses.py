"""``python -m bench.context_eval.misses [--repo PATH ...] [--budget 8000] [--search-depth N]``:
every gold function knoxidx context misses, and where it stood.

Walks a repository's tasks as :mod:`.run` does (checkout, incremental index) and, per gold
function the context pack does not cover at the budget, says whether the tool gathered it (its
place in the ranking and what the budget went to instead) or not (the rank of search's first
result covering it among 100, the definitions of its first ``--search-depth`` fused chunks
(default 20, search's own), of BM25 windows' first window covering it, and how it relates to
a packed block: a caller, callee or type of one, in the same class, or only in the same file;
the top hit's whole file, a candidate too, is not counted as gathering what it holds).
The gold that BM25 windows cover and context does not is listed apart. An experiment: prints,
writes nothing.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from typing import Any

from bench.context_eval.__main__ import CACHE, repositories
from bench.context_eval.bm25 import BM25Windows, source_files
from bench.context_eval.coverage import Shown, covers, first_cover
from bench.context_eval.mining import Definition, git
from bench.context_eval.run import BM25_OFFERED, gold_at_parent, tasks_at_parents
from bench.context_eval.systems import SEARCH_K, LineTokens, bm25_pack, context_pack
from knoxidx.answers.packing import FILE_KIND

GRAPH_TYPES = ("Calls", "Uses", "Extends", "Implements", "References")


def budget_spent(answer: dict[str, Any]) -> str:
    """Tokens of the pack's blocks by the relation of their first item and their mode."""
    relation_of = {i["qualified_name"]: i["relation"] or "range" for i in answer["items"]}
    spent: Counter[str] = Counter()
    for block in answer["blocks"]:
        spent[f"{relation_of.get(block['items'][0], '?')} {block['mode']}"] += block["tokens"]
    return ", ".join(f"{k} {v}" for k, v in spent.most_common())


def related(index: Any, gold: Definition, answer: dict[str, Any]) -> str:
    """How ``gold`` relates to a packed block's definitions: by a graph edge, as a member of
    the same class, in the same file, or not at all."""
    q = index.q
    node = q.node_at(gold.path, gold.start)
    shown = {i["id"]: i for i in answer["items"] if i["included"] and i["id"] is not None}
    if node is not None:
        for direction, word in (("in", "callee/type of"), ("out", "caller/user of")):
            edges = q.edges([node["id"]], direction, GRAPH_TYPES)
            other = "source" if direction == "in" else "target"
            linked = [shown[e[other]] for e in edges if e[other] in shown]
            if linked:
                first = min(linked, key=lambda i: i["rank"])
                print(f"      ({word} {first['qualified_name']}: {first['relation']}, "
                      f"place {first['rank']})")
                return f"{word} a packed block"
        parents = {n["parent_id"] for n in q.nodes_by_id(shown).values()}
        if node.get("parent_id") in parents:
            return "same class as a packed block"
    if any(b["path"] == gold.path for b in answer["blocks"]):
        return "same file as a packed block"
    return "unrelated to the pack"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.context_eval.misses",
                                     description=__doc__.split("\n\n")[1])
    parser.add_argument("--repo", action="append", metavar="PATH")
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--budget", type=int, default=8000)
    parser.add_argument("--search-depth", type=int, default=None, metavar="N",
                        help="fused chunks whose definitions search ranks (default: its own)")
    args = parser.parse_args(argv)
    totals: Counter[str] = Counter()
    for repo in repositories(args.repo):
        for root, index, task in tasks_at_parents(repo, CACHE, args.tasks):
            totals.update(_task_misses(index, root, repo.name, task, args.budget,
                                       args.search_depth))
    print("\ncounts:")
    for reason, n in totals.most_common():
        print(f"  {n:3} {reason}")
    return 0


def _task_misses(index: Any, root: Any, repo: str, task: Any, budget: int,
                 search_depth: int | None = None) -> Counter[str]:
    out: Counter[str] = Counter()
    gold = gold_at_parent(index, root, task) or task.gold
    answer = index.context(task.question, max_tokens=budget)
    pack = context_pack(answer)
    missed = [g for g in gold if first_cover(pack, g) is None]
    tracked = [p for p in git(root, "ls-files", "-z").split("\x00") if p]
    files = source_files(root, tracked)
    windows = BM25Windows(files).search(task.question)[:BM25_OFFERED]
    from knoxidx.retrieval.tokens import default_counter

    bm25_shown = bm25_pack(windows, LineTokens(default_counter(), files), budget)
    for g in gold:
        if first_cover(bm25_shown, g) and not first_cover(pack, g):
            out["BM25 covers, context not"] += 1
            print(f"{repo} {task.commit[:10]} {g.name}: BM25 covers it, context not")
    if not missed:
        return out
    found = index.search(task.question, k=SEARCH_K, mode="hybrid",
                         depth=search_depth)["results"]
    print(f"{repo} {task.commit[:10]} {task.question[:90]!r}")
    print(f"    pack {answer['tokens']}/{budget}: {budget_spent(answer)}; search gave "
          f"{len(found)} results")
    for g in missed:
        holding = [i for i in answer["items"] if i["path"] == g.path and i["kind"] != FILE_KIND
                   and i["start_line"] <= g.start and g.end <= i["end_line"]]
        search_rank = next((n for n, r in enumerate(found, 1) if covers(
            Shown(r["path"], r["start_line"], r["end_line"]), g)), None)
        bm25_rank = next((n for n, w in enumerate(windows, 1)
                          if covers(Shown(w.path, w.start, w.end), g)), None)
        if holding:
            item = min(holding, key=lambda i: i["end_line"] - i["start_line"])
            reason = f"gathered ({item['relation'] or 'range'}), " + (
                "left out" if item["included"] is None else f"shown {item['included']}")
            where = f"place {item['rank']} of {len(answer['items'])}"
        else:
            reason = "not gathered: " + related(index, g, answer)
            where = "never ranked"
        out[reason] += 1
        out["(of all misses) covered by a search result"] += search_rank is not None
        print(f"  - {g.name} ({g.lines} lines): {reason}; {where}; search #{search_rank}, "
              f"BM25 #{bm25_rank}")
    return out


if __name__ == "__main__":
    sys.exit(main())
