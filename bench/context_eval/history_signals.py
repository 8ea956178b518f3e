"""``python -m bench.context_eval.history_signals [--repo NAME ...]``: how much of the gold the
repository's own history could reach, before any of it is built into context.

Each repository's tasks are walked as the benchmark walks them (the parent checked out, the
index updated incrementally with its history). At each parent, from the index's stored
history (which ends at the parent: checked, no commit of the change can leak in):

- **recent N**: the functions that one of the last N commits (the parent included) changed;
- **co-change k**: the functions changed in a past commit together with the definition of one
  of context's top k search hits (the hit's own lines traced back as ``git log -L`` would), at
  the definition level, and at the file level (any function of a file that such a commit
  changed);

and for each, how many gold functions it reaches, how many of the gold that context's
gathering never gathers without its recently changed functions (``ContextWeights.recent`` 0),
and how many candidates it adds per task. Commits that
changed more than ``--max-files`` files are left out of co-change (a sweeping refactor links
everything to everything).
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.context_eval.__main__ import CACHE, repositories
from bench.context_eval.mining import Definition
from bench.context_eval.run import gold_at_parent, tasks_at_parents
from knoxidx.answers.precedents import similar_commits

RECENT = (1, 3, 10, 30)
TOP_HITS = (1, 3, 5)
SIMILAR = (1, 3, 5, 10)  # past commits whose subject is most like the question
PER_HIT = (4, 8)  # co-changed functions of one hit kept, the most often co-changed first
Key = tuple[str, int, int]  # path, first and last line of a function at the parent


@dataclass(slots=True)
class Signal:
    """One signal's reach over the walked tasks."""

    gold: int = 0
    reached: int = 0
    never_gathered: int = 0
    never_gathered_reached: int = 0
    candidates: list[int] = field(default_factory=list)  # per task

    def add(self, gold: list[Key], missed: list[Key], reached: set[Key], added: int) -> None:
        self.gold += len(gold)
        self.reached += sum(g in reached for g in gold)
        self.never_gathered += len(missed)
        self.never_gathered_reached += sum(g in reached for g in missed)
        self.candidates.append(added)

    def row(self) -> dict[str, Any]:
        return {"gold": f"{self.reached}/{self.gold}",
                "never_gathered": f"{self.never_gathered_reached}/{self.never_gathered}",
                "candidates_median": statistics.median(self.candidates) if self.candidates else 0,
                "candidates_mean": round(statistics.fmean(self.candidates), 1)
                if self.candidates else 0}


def _functions(tables: Any, path: str) -> dict[Key, list[tuple[int, int]]]:
    from knoxidx.history.worktree import line_range

    return {(path, r[3], r[4]): line_range(r[3], r[4])
            for r in tables.definitions_in(path) if r[1] == "Function"}


def _touches(tables: Any, prefix: str, path: str, ranges: dict[Any, list[tuple[int, int]]],
             since_seq: int = 0) -> dict[Any, set[int]]:
    from knoxidx.history.trace import trace_file

    traced = trace_file(tables, prefix + path, ranges, since_seq=since_seq)
    return {key: {t.seq for t in trace.touches} for key, trace in traced.items()}


def _changed_paths(tables: Any, seqs: set[int]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = defaultdict(list)
    for seq in seqs:
        for (path,) in tables.conn.execute("SELECT path FROM history_change WHERE seq=?",
                                           (seq,)):
            out[seq].append(path)
    return out


def measure_task(index: Any, root: Path, task: Any, max_files: int,
                 signals: dict[str, Signal]) -> dict[str, Any]:
    from knoxidx.answers.context import ContextWeights, gather, rank
    from knoxidx.history.tables import tables_of

    tables = tables_of(index.store)
    assert tables is not None
    head = tables.get("head")
    newest = tables.commits([tables.next_seq() - 1])
    leak_free = head == task.parent and newest[tables.next_seq() - 1]["commit"] == task.parent
    prefix = tables.get("prefix") or ""
    gold_defs: tuple[Definition, ...] = gold_at_parent(index, root, task) or task.gold
    gold = [(g.path, g.start, g.end) for g in gold_defs]
    w = replace(ContextWeights(), recent=0.0)  # what the gathering misses without history
    ranked = rank(gather(index, task.question, w), w)
    missed = [g for g in gold if not any(c.path == g[0] and c.start <= g[1] and g[2] <= c.end
                                         for c in ranked)]
    hits = sorted((c for c in ranked if c.hit_rank is not None), key=lambda c: c.hit_rank or 0)
    last = tables.next_seq() - 1

    # recent N: every function the last N commits changed, traced from its parent lines
    window = {n: set(range(max(0, last - n + 1), last + 1)) for n in RECENT}
    recent_paths = {p[len(prefix):] for paths in _changed_paths(tables, window[max(RECENT)])
                    .values() for p in paths if p.startswith(prefix)}
    recent_touch: dict[Key, set[int]] = {}
    for path in recent_paths:
        recent_touch.update(_touches(tables, prefix, path, _functions(tables, path),
                                     since_seq=last - max(RECENT) + 1))
    for n in RECENT:
        reached = {k for k, seqs in recent_touch.items() if seqs & window[n]}
        signals[f"recent {n}"].add(gold, missed, reached, len(reached))
        for cap in PER_HIT:
            newest_first = sorted((-max(recent_touch[k] & window[n]), k) for k in reached)
            kept = {k for _, k in newest_first[:cap]}
            signals[f"recent {n} x{cap}"].add(gold, missed, kept, len(kept))

    # co-change with the top k hits: the commits that touched a hit's own lines
    hit_seqs: list[set[int]] = []
    for hit in hits[: max(TOP_HITS)]:
        from knoxidx.history.worktree import line_range

        hit_seqs.append(_touches(tables, prefix, hit.path,
                                 {0: line_range(hit.start, hit.end)}).get(0, set()))
    all_seqs = set().union(*hit_seqs) if hit_seqs else set()
    changed = _changed_paths(tables, all_seqs)
    narrow = {s for s in all_seqs if len(changed.get(s, [])) <= max_files}
    files_of = {s: {p[len(prefix):] for p in changed.get(s, []) if p.startswith(prefix)}
                for s in narrow}
    traced: dict[Key, set[int]] = {}
    for path in set().union(*files_of.values()) if files_of else set():
        traced.update(_touches(tables, prefix, path, _functions(tables, path)))
    for k in TOP_HITS:
        own = {(h.path, h.start, h.end) for h in hits[:k]}
        seqs = set().union(*hit_seqs[:k]) & narrow if hit_seqs else set()
        by_def = {key for key, touched in traced.items() if touched & seqs} - own
        # the hit's own definition is no news: a gold inside a hit is already gathered
        by_def = {key for key in by_def if not any(
            h.path == key[0] and h.start <= key[1] and key[2] <= h.end for h in hits[:k])}
        co_files = set().union(*(files_of[s] for s in seqs)) if seqs else set()
        by_file = {key for key in traced if key[0] in co_files} | {
            g for g in gold if g[0] in co_files}
        signals[f"co-change def top{k}"].add(gold, missed, by_def, len(by_def))
        for cap in PER_HIT:
            kept = set()
            for seqs_of_hit in hit_seqs[:k]:
                shared = seqs_of_hit & narrow
                order = sorted(((-len(traced[key] & shared), -max(traced[key] & shared), key)
                                for key in by_def if traced[key] & shared))
                kept.update(key for _, _, key in order[:cap])
            signals[f"co-change def top{k} x{cap}"].add(gold, missed, kept, len(kept))
        signals[f"co-change file top{k}"].add(gold, missed, by_file,
                                              sum(1 for key in traced if key[0] in co_files))
    # similar subjects: the past commits whose subjects share the question's rarest words
    similar = similar_commits(tables, task.question, max(SIMILAR), max_files)
    sim_paths = _changed_paths(tables, set(similar))
    sim_files = {p[len(prefix):] for s in similar for p in sim_paths.get(s, [])
                 if p.startswith(prefix)}
    sim_traced: dict[Key, set[int]] = {}
    for path in sim_files:
        sim_traced.update(_touches(tables, prefix, path, _functions(tables, path)))
    for k in SIMILAR:
        seqs = set(similar[:k])
        by_def = {key for key, touched in sim_traced.items() if touched & seqs}
        signals[f"similar {k} def"].add(gold, missed, by_def, len(by_def))
        for cap in PER_HIT:
            order = sorted((-max(sim_traced[key] & seqs), key) for key in by_def)
            kept = {key for _, key in order[:cap]}
            signals[f"similar {k} def x{cap}"].add(gold, missed, kept, len(kept))
        files = {p[len(prefix):] for s in seqs for p in sim_paths.get(s, [])
                 if p.startswith(prefix)}
        by_file = {key for key in sim_traced if key[0] in files} | {
            g for g in gold if g[0] in files}
        signals[f"similar {k} file"].add(gold, missed, by_file,
                                         sum(1 for key in sim_traced if key[0] in files))
    return {"commit": task.commit[:10], "leak_free": leak_free,
            "similar": [tables.commits([s])[s]["subject"][:60] for s in similar[:3]], "gold": len(gold),
            "never_gathered": len(missed), "hit_commits": [len(s) for s in hit_seqs]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.context_eval.history_signals")
    parser.add_argument("--repo", action="append", metavar="PATH")
    parser.add_argument("--tasks", type=int, default=30)
    parser.add_argument("--max-files", type=int, default=10,
                        help="co-change ignores commits that changed more files than this")
    args = parser.parse_args(argv)

    per_repo: dict[str, dict[str, Signal]] = {}
    total: dict[str, Signal] = defaultdict(Signal)
    leaks = 0
    for repo in repositories(args.repo):
        signals: dict[str, Signal] = defaultdict(Signal)
        for root, index, task in tasks_at_parents(repo, CACHE, args.tasks):
            info = measure_task(index, root, task, args.max_files, signals)
            leaks += not info["leak_free"]
            print(json.dumps(info), flush=True)
        per_repo[repo.name] = signals
        for name, signal in signals.items():
            merged = total[name]
            merged.gold += signal.gold
            merged.reached += signal.reached
            merged.never_gathered += signal.never_gathered
            merged.never_gathered_reached += signal.never_gathered_reached
            merged.candidates += signal.candidates
    print(f"tasks whose history did not end at the parent: {leaks}")
    print("| signal | repo | gold reached | never-gathered reached | candidates/task "
          "(median, mean) |")
    print("|---|---|---|---|---|")
    for name in sorted(total):
        for repo_name, signals in [*per_repo.items(), ("all", total)]:
            row = signals[name].row()
            print(f"| {name} | {repo_name} | {row['gold']} | {row['never_gathered']} | "
                  f"{row['candidates_median']}, {row['candidates_mean']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
