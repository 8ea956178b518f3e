"""``python -m bench.context_eval.tune``: the context packer's weights fitted on saved walks.

A walk saves each task's gathered state (``bench/.cache/context_eval/states/``, see
:mod:`.state`); here each state is ranked and packed again under other
:class:`~knoxidx.answers.context.ContextWeights`, in seconds rather than a walk's minutes.
The weights are fitted by coordinate descent (every value of one knob in turn, the best kept)
on the ``--fit`` repositories and reported on the others, held out; the objective is the mean of
pooled definition recall at the budgets. A saved state is a wider gathering than the tool's
(:func:`~bench.context_eval.run.tuning_gathering`), so its figures at the installed weights can
be a function or so off the walk's published ones (``Index.context`` itself).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from dataclasses import asdict, fields, replace
from pathlib import Path
from typing import Any

from bench.context_eval.coverage import score_pack
from bench.context_eval.mining import Definition, git
from bench.context_eval.state import restored
from bench.context_eval.systems import context_pack
from knoxidx.answers.context import ContextWeights, pack, rank
from knoxidx.answers.context_features import churn_shares
from knoxidx.answers.pack_files import Files

STATES = Path(__file__).resolve().parent.parent / ".cache" / "context_eval" / "states"
BUDGETS = (4000, 8000)
FIT = ("click", "cobra", "jsoup")
# the values tried per knob (the default is always tried too)
GRID: dict[str, tuple[Any, ...]] = {
    "lexical": (0.0, 0.1, 0.25, 0.5, 1.0),
    "proximity": (0.1, 0.3, 0.6, 1.0),
    "centrality": (0.0, 0.05, 0.15, 0.3),
    "hit_decay": (0.02, 0.05, 0.1, 0.2, 0.4),
    "callee": (0.4, 0.6, 0.8, 1.0),
    "caller": (0.3, 0.45, 0.6, 0.8),
    "type": (0.4, 0.7, 0.9),
    "enclosing": (0.3, 0.7),
    "imports": (0.25, 0.5),
    "expand_hits": (0, 2, 3, 5, 8, 10),
    "neighbour_lag": (0, 2, 5, 10, 20, 50),
    "neighbour_share": (0.04, 0.08, 0.15),
    "block_share": (0.1, 0.15, 0.2, 0.3),
    "hit_full_share": (0.1, 0.15, 0.25, 0.4),
    "full_cutoff": (0.3, 0.5, 0.7, 0.9),
    "demoted": (0.25, 0.5, 1.0),
    "search_order": (True, False),
    "history": (0.0, 0.05, 0.1, 0.2, 0.4),
    "sibling": (0.0, 0.2, 0.4, 0.6, 0.8),
    "sibling_lexical": (0.1, 0.25, 0.4, 0.6),
    "top_file_share": (0.0, 0.1, 0.12, 0.15, 0.2),
}


class Task:
    def __init__(self, line: str) -> None:
        saved = json.loads(line)
        self.record = saved["task"]
        self.state = saved["gathered"]
        self.gold = tuple(Definition(**g) for g in self.record["gold"])
        self.files: Files | None = None  # kept between evaluations: it caches token counts
        self.changes: dict[str, int] = {}  # commits per path in the history window


def load(variant: str) -> dict[str, list[Task]]:
    out: dict[str, list[Task]] = {}
    for path in sorted(STATES.glob(f"{variant}-*.jsonl.gz")):
        repo = path.name.removeprefix(variant + "-").removesuffix(".jsonl.gz")
        tasks = out[repo] = []
        with gzip.open(path, "rt", encoding="utf-8") as lines:
            try:
                for line in lines:
                    tasks.append(Task(line))
            except (EOFError, json.JSONDecodeError):  # a walk still writing it: what is done
                pass
    return out


def attach_history(repo: str, tasks: list[Task], days: int) -> None:
    """Each task's per-path commit counts over the ``days`` before its parent, from the
    first-parent history of the walk's clone (what the index's history tables hold there)."""
    clone = STATES.parent / "repos" / repo
    if not tasks or not (clone / ".git").is_dir():
        return
    log = git(clone, "log", "--first-parent", "--diff-merges=first-parent", "--format=%x1e%H %ct",
              "--name-only", "--no-renames", tasks[-1].record["commit"])
    commits: list[tuple[str, int, list[str]]] = []
    for entry in log.split("\x1e")[1:]:
        head, *paths = entry.strip().split("\n")
        sha, committed = head.split()
        commits.append((sha, int(committed), [p for p in paths if p]))
    time_of = {sha: when for sha, when, _ in commits}
    for task in tasks:
        newest = time_of.get(task.record["parent"])
        if newest is None:
            continue
        counts: dict[str, int] = {}
        for _, when, paths in commits:
            if newest - days * 86400 <= when <= newest:
                for path in paths:
                    counts[path] = counts.get(path, 0) + 1
        task.changes = counts


def evaluate(tasks: list[Task], w: ContextWeights,
             budgets: tuple[int, ...] = BUDGETS) -> dict[int, tuple[int, int]]:
    """Per budget: (gold definitions covered, gold definitions)."""
    out = {b: [0, 0] for b in budgets}
    for task in tasks:
        gathered = restored(task.state, task.files)
        task.files = gathered.files
        if w.history:
            churn = churn_shares({c.path: task.changes.get(c.path, 0)
                                  for c in gathered.candidates.values()})
            for cand in gathered.candidates.values():
                cand.history = churn.get(cand.path, 0.0)
        ranked = rank(gathered, w)
        for budget in budgets:
            scored = score_pack(context_pack(pack(gathered, ranked, budget, w)), task.gold)
            out[budget][0] += scored["covered"]
            out[budget][1] += scored["gold"]
    return {b: (c, g) for b, (c, g) in out.items()}


def recall(scores: dict[int, tuple[int, int]]) -> float:
    return sum(c / g for c, g in scores.values() if g) / len(scores)


def baseline(tasks: list[Task], system: str, budget: int) -> float:
    covered = sum(t.record["systems"][system][str(budget)]["covered"] for t in tasks)
    gold = sum(t.record["systems"][system][str(budget)]["gold"] for t in tasks)
    return covered / gold if gold else 0.0


def fit(tasks: list[Task], start: ContextWeights, rounds: int = 1,
        log: Any = print, knobs: list[str] | None = None) -> ContextWeights:
    best, best_score = start, recall(evaluate(tasks, start))
    log(f"start {best_score:.4f}")
    for _ in range(rounds):
        improved = False
        for knob in knobs or list(GRID):
            values = GRID[knob]
            for value in values:
                if getattr(best, knob) == value:
                    continue
                trial = replace(best, **{knob: value})
                score = recall(evaluate(tasks, trial))
                if score > best_score + 1e-9:
                    best, best_score, improved = trial, score, True
                    log(f"  {knob}={value}: {score:.4f}")
        if not improved:
            break
    return best


def table(repos: dict[str, list[Task]], weights: dict[str, ContextWeights]) -> str:
    rows = ["| repository | " + " | ".join(f"{name} @{b // 1000}k" for name in weights
                                            for b in BUDGETS)
            + " | retrieval @4k / @8k | BM25 @4k / @8k |", ""]
    rows[1] = "|---" * (2 + len(weights) * len(BUDGETS) + 1) + "|"
    for repo, tasks in [*repos.items(), ("all", [t for ts in repos.values() for t in ts])]:
        cells = []
        for w in weights.values():
            scores = evaluate(tasks, w)
            cells += [f"{c / g:.2f}" for c, g in scores.values()]
        cells.append(" / ".join(f"{baseline(tasks, 'retrieval', b):.2f}" for b in BUDGETS))
        cells.append(" / ".join(f"{baseline(tasks, 'bm25', b):.2f}" for b in BUDGETS))
        rows.append(f"| {repo} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def weights_set(default: ContextWeights, pairs: list[str]) -> ContextWeights:
    """``default`` with each ``KNOB=VALUE`` of ``pairs`` set: a tuple knob's VALUE is its
    items separated by commas (``after_search=type,imports``; empty for none)."""
    kinds = {f.name: type(getattr(default, f.name)) for f in fields(ContextWeights)}
    changes: dict[str, Any] = {}
    for pair in pairs:
        knob, _, value = pair.partition("=")
        if knob not in kinds:
            raise SystemExit(f"not a field of ContextWeights: {knob!r}")
        kind = kinds[knob]
        if kind is bool:
            changes[knob] = value == "True"
        elif kind is tuple:
            changes[knob] = tuple(item for item in value.split(",") if item)
        else:
            changes[knob] = kind(value)
    return replace(default, **changes)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.context_eval.tune",
                                     description=__doc__.split("\n\n")[1])
    parser.add_argument("--variant", default="no_embeddings",
                        choices=("no_embeddings", "embeddings"))
    parser.add_argument("--fit", nargs="+", default=list(FIT), metavar="REPO")
    parser.add_argument("--knobs", nargs="+", metavar="KNOB",
                        help="fit only these (default: every knob of the grid)")
    parser.add_argument("--rounds", type=int, default=1, help="coordinate descent passes")
    parser.add_argument("--set", nargs="*", default=[], metavar="KNOB=VALUE",
                        help="weights to compare with the defaults instead of fitting")
    args = parser.parse_args(argv)
    repos = load(args.variant)
    if not repos:
        print(f"no saved states under {STATES}", file=sys.stderr)
        return 1
    default = ContextWeights()
    for repo, tasks in repos.items():
        attach_history(repo, tasks, default.history_days)
    if args.set:
        chosen = weights_set(default, args.set)
    else:
        fitting = [t for repo in args.fit for t in repos.get(repo, [])]
        chosen = fit(fitting, default, args.rounds, log=lambda m: print(m, flush=True),
                     knobs=args.knobs)
        changed = {k: v for k, v in asdict(chosen).items() if getattr(default, k) != v}
        print(f"fitted on {', '.join(args.fit)}: {changed}")
    print(table(repos, {"default": default, "chosen": chosen}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
