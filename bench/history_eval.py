"""Definition history against its oracle, ``git log -L``.

For each repository (default: the bundles in ``../shared/history/``, cloned once into
``bench/.cache/history-<name>``): index it (graph only, history on), sample definitions
deterministically, and compare the commits knoxidx says touched each definition with what
``git log -L <start>,<end>:<path> --first-parent --format=%H -s`` lists for the same lines at
HEAD. Reports per language: commit-set precision, recall and F1 (micro, over all sampled
definitions), the share of definitions whose commit set is exactly git's, and the share whose
``modifications`` count is exactly git's; the first history pass's time; the time per new
commit inside ``knoxidx index``; the history's share of the index's size.

    python -m bench.history_eval [--bundles DIR] [--sample 120] [--only click] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from knoxidx.history.answers import HOTSPOT_KINDS
from knoxidx.history.gitlog import git_env
from knoxidx.history.ranges import Range
from knoxidx.history.store import HistoryTables
from knoxidx.history.trace import trace_file
from knoxidx.history.worktree import line_range
from knoxidx.index import Index

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
DEFAULT_BUNDLES = HERE.parent.parent / "shared" / "history"
LANGUAGE = {"click": "Python", "cobra": "Go", "json": "Rust", "jsoup": "Java",
            "zustand": "TypeScript"}
SEED = 54
NEW_COMMITS = 10  # the commits replayed one by one for the incremental timing


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          check=True, env=git_env()).stdout


def clone(bundle: Path) -> Path:
    """The bundle's default branch checked out in the cache (made once, reset after)."""
    target = CACHE / f"history-{bundle.stem}"
    if not (target / ".git").is_dir():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", "--no-checkout", str(bundle), str(target)],
                       check=True, capture_output=True)
    heads = _git(target, "bundle", "list-heads", str(bundle)).split()
    branch = next(h for h in heads if h.startswith("refs/heads/"))
    _git(target, "checkout", "-q", "-f", "-B", branch.rsplit("/", 1)[1],
         "origin/" + branch.rsplit("/", 1)[1])
    return target


def _index(root: Path, *, rebuild: bool = False, history: bool = True) -> Any:
    with Index.open(root, create=True) as idx:
        return idx.update(jobs=2, retrieval=False, rebuild=rebuild, history=history)


def sample_definitions(root: Path, size: int) -> list[tuple[int, str, int, int, str]]:
    """``size`` definitions (id, path, first line, last line, qualified name), the same ones
    on every run: a seeded sample over those of the hotspot kinds, sorted first."""
    with Index.open(root) as idx:
        rows = idx.store.conn.execute(
            "SELECT n.id, f.path, n.start_line, n.end_line, n.qualified_name FROM nodes n"
            " JOIN files f ON f.id = n.file_id WHERE n.kind IN"
            f" ({','.join('?' * len(HOTSPOT_KINDS))}) AND n.start_line IS NOT NULL"
            " ORDER BY f.path, n.start_line, n.qualified_name", HOTSPOT_KINDS).fetchall()
    return sorted(random.Random(SEED).sample(rows, min(size, len(rows))))


def knoxidx_commits(root: Path, defs: list[tuple]) -> dict[int, list[str]]:
    with Index.open(root) as idx:
        tables = HistoryTables(idx.store.conn)
        prefix = tables.get("prefix") or ""
        by_path: dict[str, dict[int, list[Range]]] = {}
        for node_id, path, start, end, _ in defs:  # (a clean checkout: no uncommitted edits)
            by_path.setdefault(path, {})[node_id] = line_range(start, end)
        found: dict[int, list[str]] = {}
        for path, spans in by_path.items():
            for node_id, trace in trace_file(tables, prefix + path, spans).items():
                commits = tables.commits(t.seq for t in trace.touches)
                found[node_id] = [commits[t.seq]["commit"] for t in trace.touches]
    return found


def git_commits(root: Path, path: str, start: int, end: int) -> list[str]:
    return _git(root, "log", "-L", f"{start},{end}:{path}", "--first-parent", "--format=%H",
                "-s", "--no-textconv", "--no-ext-diff").split()


def compare(root: Path, defs: list[tuple]) -> dict[str, Any]:
    mine = knoxidx_commits(root, defs)
    with ThreadPoolExecutor(max_workers=2) as pool:
        theirs = list(pool.map(lambda d: git_commits(root, d[1], d[2], d[3]), defs))
    tp = fp = fn = exact_sets = exact_counts = 0
    misses = []
    for d, oracle in zip(defs, theirs, strict=True):
        ours, truth = set(mine.get(d[0], [])), set(oracle)
        tp += len(ours & truth)
        fp += len(ours - truth)
        fn += len(truth - ours)
        exact_sets += ours == truth
        exact_counts += len(ours) == len(truth)
        if ours != truth and len(misses) < 5:
            misses.append({"definition": d[4], "path": d[1], "lines": [d[2], d[3]],
                           "extra": sorted(ours - truth)[:3], "missing": sorted(truth - ours)[:3]})
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"definitions": len(defs), "commits_compared": tp + fn,
            "precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4),
            "exact_commit_sets": round(exact_sets / len(defs), 4),
            "exact_modifications": round(exact_counts / len(defs), 4), "differences": misses}


def size_share(root: Path) -> dict[str, Any]:
    """Bytes of the history's tables and indexes against the graph's (every other table but
    retrieval's), from SQLite's dbstat."""
    with Index.open(root) as idx:
        rows = idx.store.conn.execute(
            "SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
        owners = dict(idx.store.conn.execute("SELECT name, tbl_name FROM sqlite_master"))
    history = sum(size for name, size in rows if owners.get(name, name).startswith("history_"))
    graph = sum(size for name, size in rows
                if not owners.get(name, name).startswith(("history_", "chunk", "embed")))
    return {"history_bytes": history, "graph_bytes": graph,
            "history_share_of_graph": round(history / graph, 4) if graph else None}


def incremental_timing(root: Path, count: int) -> dict[str, Any]:
    """Move HEAD back ``count`` commits, index, then forward one commit at a time, timing each
    ``knoxidx index``'s history step and the whole update."""
    head = _git(root, "rev-parse", "HEAD").strip()
    chain = _git(root, "rev-list", "--first-parent", f"-{count + 1}", head).split()[::-1]
    _git(root, "checkout", "-q", "-f", "--detach", chain[0])
    _index(root)
    history_s, total_s = [], []
    for commit in chain[1:]:
        _git(root, "checkout", "-q", "-f", "--detach", commit)
        started = time.perf_counter()
        report = _index(root)
        total_s.append(time.perf_counter() - started)
        assert report.history["mode"] == "incremental", report.history
        history_s.append(report.history["seconds"])
    _git(root, "checkout", "-q", "-f", head)
    _index(root)
    return {"new_commits": count, "history_s_median": round(statistics.median(history_s), 4),
            "history_s_max": round(max(history_s), 4),
            "index_s_median": round(statistics.median(total_s), 4)}


def evaluate(bundle: Path, sample: int) -> dict[str, Any]:
    root = clone(bundle)
    shutil.rmtree(root / ".knoxidx", ignore_errors=True)
    started = time.perf_counter()
    report = _index(root)
    cold = time.perf_counter() - started
    defs = sample_definitions(root, sample)
    result = {"repository": bundle.stem, "language": LANGUAGE.get(bundle.stem, "?"),
              "commits": report.history["commits"],
              "first_history_pass_s": report.history["seconds"],
              "cold_index_with_history_s": round(cold, 3),
              **compare(root, defs), **size_share(root)}
    result["incremental"] = incremental_timing(root, NEW_COMMITS)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bundles", type=Path, default=DEFAULT_BUNDLES)
    parser.add_argument("--sample", type=int, default=120)
    parser.add_argument("--only", action="append", default=None,
                        help="Only this repository (repeatable): click, cobra, json...")
    parser.add_argument("--json", type=Path, default=None, help="Also write the results here.")
    args = parser.parse_args(argv)
    bundles = sorted(args.bundles.glob("*.bundle"))
    if args.only:
        bundles = [b for b in bundles if b.stem in args.only]
    if not bundles:
        print(f"no bundles in {args.bundles}", file=sys.stderr)
        return 2
    results = []
    for bundle in bundles:
        result = evaluate(bundle, args.sample)
        results.append(result)
        inc = result["incremental"]
        print(f"{result['repository']:<8} {result['language']:<10} defs {result['definitions']:>4}"
              f"  P {result['precision']:.3f} R {result['recall']:.3f} F1 {result['f1']:.3f}"
              f"  exact sets {result['exact_commit_sets']:.2f}"
              f"  exact modifications {result['exact_modifications']:.2f}"
              f"  first pass {result['first_history_pass_s']:.2f}s ({result['commits']} commits)"
              f"  per new commit {inc['history_s_median']:.3f}s"
              f" (index {inc['index_s_median']:.2f}s)"
              f"  size {100 * (result['history_share_of_graph'] or 0):.0f}% of graph",
              flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
