"""``python -m bench.context_eval [--repo PATH ...] [--tasks 30] [--embed]``.

Context accuracy on real change requests (see :mod:`bench.context_eval`). Each repository is
walked in its own process-local loop and saved as soon as it is done (under
``bench/.cache/context_eval/runs/``), so an interrupted run keeps what it finished; every
saved run of the day, with and without embeddings, then goes into
``bench/results/context-<date>.json`` and the markdown tables printed at the end.
``--report`` only rebuilds the results file and tables from the saved runs.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from pathlib import Path

from bench.context_eval.report import markdown, summarise
from bench.context_eval.run import BUDGETS, Repository, walk

BENCH = Path(__file__).resolve().parent.parent
HISTORY = BENCH.parent.parent / "shared" / "history"
DEFAULT_REPOS = ("click", "cobra", "json", "jsoup", "zustand")
CACHE = BENCH / ".cache" / "context_eval"
RESULTS = BENCH / "results"


def repositories(paths: list[str] | None) -> list[Repository]:
    if not paths:
        return [Repository(name, HISTORY / f"{name}.bundle") for name in DEFAULT_REPOS]
    out = []
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise SystemExit(f"no such repository or bundle: {given}")
        name = path.name.removesuffix(".bundle").removesuffix(".git") or "repo"
        out.append(Repository(name, path))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.context_eval",
                                     description=__doc__.split("\n\n")[1])
    parser.add_argument("--repo", action="append", metavar="PATH",
                        help="a git repository or bundle (repeatable; default: the five "
                        "bundles in ../shared/history)")
    parser.add_argument("--tasks", type=int, default=30, help="tasks per repository")
    parser.add_argument("--embed", action="store_true",
                        help="embed the chunks with the configured embedder before asking")
    parser.add_argument("--budgets", type=int, nargs="+", default=list(BUDGETS))
    parser.add_argument("--report", action="store_true",
                        help="only rebuild the results file and tables from the saved runs")
    parser.add_argument("--no-save", action="store_true", help="do not write bench/results")
    args = parser.parse_args(argv)
    runs_dir = CACHE / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    if not args.report:
        variant = "embeddings" if args.embed else "no_embeddings"
        states_dir = CACHE / "states"
        states_dir.mkdir(parents=True, exist_ok=True)
        for repo in repositories(args.repo):
            run = walk(repo, CACHE, count=args.tasks, embed=args.embed,
                       budgets=tuple(args.budgets), log=lambda m: print(m, flush=True),
                       dump=states_dir / f"{variant}-{repo.name}.jsonl.gz")
            run["budgets"] = args.budgets
            (runs_dir / f"{variant}-{repo.name}.json").write_text(json.dumps(run, indent=1))
            print(f"{repo.name}: verify {run['verify'] and run['verify']['equal']}", flush=True)
    runs = [json.loads(p.read_text()) for p in sorted(runs_dir.glob("*.json"))]
    if not runs:
        print("no saved runs", file=sys.stderr)
        return 1
    budgets = [str(b) for b in runs[0]["budgets"]]
    summary = summarise(runs, budgets)
    table = markdown(summary, budgets)
    print(table)
    if not args.no_save:
        RESULTS.mkdir(exist_ok=True)
        out = RESULTS / f"context-{datetime.date.today().isoformat()}.json"
        out.write_text(json.dumps({
            "budgets": budgets, "summary": summary,
            "repositories": [{k: v for k, v in r.items() if k != "tasks"} | {
                "tasks": [_compact(t) for t in r["tasks"]]} for r in runs],
        }, separators=(",", ":")) + "\n")
        print(f"wrote {out}")
    return 0


def _compact(task: dict) -> dict:
    """A task as kept in the results file: the question, the gold and, per system and budget,
    [gold functions covered, whether a gold file was shown, the first covering block]."""
    return {
        "commit": task["commit"][:12], "date": task["date"][:10], "question": task["question"],
        "gold": [f"{g['path']}:{g['start']}-{g['end']} {g['name']}" for g in task["gold"]],
        "names_gold": task["names_gold"],
        "scores": {system: {budget: [s["covered"], s["file_hit"], s["first_rank"]]
                            for budget, s in budgets.items()}
                   for system, budgets in task["systems"].items()},
    }


if __name__ == "__main__":
    sys.exit(main())
