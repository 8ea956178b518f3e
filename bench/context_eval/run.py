"""Walking one repository's tasks: check out each parent in date order, update the index
incrementally, ask every system, score the packs; ``verify`` the index at the end."""

from __future__ import annotations

import gzip
import json
import statistics
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.context_eval.bm25 import BM25Windows, source_files
from bench.context_eval.coverage import Shown, names_gold, score_pack
from bench.context_eval.mining import (
    Definition,
    Task,
    git,
    mine_tasks,
    parse_hunks,
    touched_definitions,
)
from bench.context_eval.state import saved_state
from bench.context_eval.systems import (
    SEARCH_K,
    LineTokens,
    bm25_pack,
    context_pack,
    gold_files_pack,
    retrieval_pack,
)

if TYPE_CHECKING:
    from knoxidx.answers.context import ContextWeights, Gathered

BUDGETS = (4000, 8000)
DUMP_EXPAND = 10  # hits expanded in a saved state: the tuner tries up to this many
DUMP_SIBLINGS = 8  # and their best matching functions of the same file, at most
DUMP_SIBLING_LEXICAL = 0.1  # that match at least this well
BM25_OFFERED = 400  # windows offered to the packer at most: far more than 8,000 tokens hold


@dataclass(frozen=True, slots=True)
class Repository:
    name: str
    source: Path  # a git bundle or a repository directory


def head_of(source: Path) -> str:
    """The commit the history ends at: a bundle's (single) head, else the repository's HEAD."""
    if source.is_file():
        heads = git(source.parent, "bundle", "list-heads", str(source.resolve())).split()
        if not heads:
            raise ValueError(f"{source}: a bundle without a head")
        return heads[0]
    return git(source, "rev-parse", "HEAD").strip()


def clone(repo: Repository, cache: Path, suffix: str = "") -> tuple[Path, str]:
    """A clone of the repository in the cache (the given one is never checked out or indexed)
    and its head commit."""
    target = cache / "repos" / (repo.name + suffix)
    if not (target / ".git").is_dir():
        target.parent.mkdir(parents=True, exist_ok=True)
        git(target.parent, "clone", "-q", "--no-checkout", str(repo.source.resolve()),
            target.name)
    return target, head_of(repo.source)


def load_or_mine(repo: Repository, clone_dir: Path, head: str, count: int,
                 cache: Path) -> tuple[list[Task], dict[str, Any]]:
    path = cache / "tasks" / f"{repo.name}-{head[:12]}-{count}.json"
    if path.exists():
        saved = json.loads(path.read_text())
        tasks = [Task(**{**t, "files": tuple(t["files"]),
                         "gold": tuple(Definition(**g) for g in t["gold"])})
                 for t in saved["tasks"]]
        return tasks, saved["mining"]
    tasks, info = mine_tasks(clone_dir, repo.name, head, count)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mining": info, "tasks": [asdict(t) for t in tasks]}))
    return tasks, info


def gold_at_parent(index: Any, root: Path, task: Task) -> tuple[Definition, ...]:
    """The functions whose lines the commit changes, from the index's stored facts of the
    parent's files (the same extractor that mined the task, read back from the index)."""
    gold: list[Definition] = []
    for path in task.files:
        facts = index.store.load_facts(path)
        if facts is None:
            continue
        functions = [Definition(path, d.qualname, d.start_line, d.end_line)
                     for d in facts.defs if d.kind == "Function"]
        diff = git(root, "diff", "-U0", "--no-color", "--no-ext-diff", "--no-textconv",
                   task.parent, task.commit, "--", path)
        old_lines = (root / path).read_text("utf-8", "replace").split("\n")
        gold.extend(touched_definitions(functions, parse_hunks(diff), old_lines))
    return tuple(gold)


def tasks_at_parents(repo: Repository, cache: Path, count: int) -> Iterator[tuple[Path, Any, Any]]:
    """``(clone, index, task)`` for each of ``repo``'s tasks in date order, the clone checked
    out at the task's parent and the index updated there (no embedding): the walk of the
    analysis tools, which measure rather than publish."""
    from knoxidx import Index

    root, head = clone(repo, cache)
    tasks, _ = load_or_mine(repo, root, head, count, cache)
    index: Any = None
    try:
        for task in tasks:
            git(root, "checkout", "-q", "--force", "--detach", task.parent)
            if index is None:
                index = Index.open(root, create=True)
            index.update()
            yield root, index, task
    finally:
        if index is not None:
            index.close()


def walk(repo: Repository, cache: Path, *, count: int, embed: bool,
         budgets: tuple[int, ...] = BUDGETS, log: Any = print,
         dump: Path | None = None,
         variants: Mapping[str, ContextWeights] | None = None) -> dict[str, Any]:
    """The walk's record; ``variants`` adds, per name, knoxidx context built under those
    weights as one more system (several settings measured in one walk)."""
    from knoxidx import Index
    from knoxidx.retrieval.tokens import default_counter
    from knoxidx.update.verify import verify_index

    root, head = clone(repo, cache, "-embed" if embed else "")
    tasks, mining = load_or_mine(repo, root, head, count, cache)
    log(f"{repo.name}: {mining}")
    counter = default_counter()
    index: Any = None
    records = []
    index_seconds = []
    dumped = gzip.open(dump, "wt", encoding="utf-8") if dump is not None else None
    try:
        for n, task in enumerate(tasks, 1):
            git(root, "checkout", "-q", "--force", "--detach", task.parent)
            if index is None:
                index = Index.open(root, create=True)
            t0 = time.perf_counter()
            index.update(embed=embed)
            index_seconds.append(time.perf_counter() - t0)
            records.append(_ask(index, root, task, counter, budgets, dumped, variants or {}))
            log(f"  {n}/{len(tasks)} {task.commit[:10]} index {index_seconds[-1]:.1f}s "
                f"ctx@{budgets[0]} {records[-1]['systems']['context'][str(budgets[0])]['covered']}"
                f"/{len(records[-1]['gold'])}")
        verified = verify_index(index) if index is not None else None
    finally:
        if index is not None:
            index.close()
        if dumped is not None:
            dumped.close()
    return {
        "repo": repo.name, "head": head, "embeddings": embed, "mining": mining,
        "index_seconds": {"first": round(index_seconds[0], 2) if index_seconds else None,
                          "median_incremental": round(statistics.median(index_seconds[1:]), 2)
                          if len(index_seconds) > 1 else None},
        "verify": verified and {"equal": verified["equal"], "integrity": verified["integrity"],
                                "nodes": verified["nodes"], "edges": verified["edges"],
                                "missing_nodes": verified["missing_nodes"][:5],
                                "extra_nodes": verified["extra_nodes"][:5],
                                "missing_edges": verified["missing_edges"][:5],
                                "extra_edges": verified["extra_edges"][:5],
                                "missing_unresolved": verified["missing_unresolved"][:5],
                                "extra_unresolved": verified["extra_unresolved"][:5]},
        "tasks": records,
    }


def _ask(index: Any, root: Path, task: Task, counter: Any, budgets: tuple[int, ...],
         dumped: Any = None,
         variants: Mapping[str, ContextWeights] | None = None) -> dict[str, Any]:
    from knoxidx.answers.context import gather, rank
    from knoxidx.answers.context import pack as pack_context

    gold = gold_at_parent(index, root, task) or task.gold
    tracked = git(root, "ls-files", "-z").split("\x00")
    files = source_files(root, [p for p in tracked if p])
    tokens = LineTokens(counter, _Lazy(root, files))
    windows = BM25Windows(files)
    t0 = time.perf_counter()
    found = index.search(task.question, k=SEARCH_K, mode="hybrid")
    search_seconds = time.perf_counter() - t0
    ranked_windows = windows.search(task.question)[:BM25_OFFERED]
    systems: dict[str, dict[str, Any]] = {s: {} for s in
                                          ("context", "retrieval", "bm25", "gold_files")}
    context_blocks = {}
    context_seconds = {}
    for budget in budgets:
        t0 = time.perf_counter()
        # the product's own call, so the published system and its latency are the tool's
        answer = index.context(task.question, max_tokens=budget)
        context_seconds[str(budget)] = round(time.perf_counter() - t0, 3)
        context_blocks[str(budget)] = [
            {"path": b["path"], "start": b["start_line"], "end": b["end_line"],
             "mode": b["mode"], "tokens": b["tokens"], "items": b["items"][:4]}
            for b in answer["blocks"]]
        packs: dict[str, list[Shown]] = {
            "context": context_pack(answer),
            "retrieval": retrieval_pack(found["results"], tokens, budget),
            "bm25": bm25_pack(ranked_windows, tokens, budget),
            "gold_files": gold_files_pack(gold, tokens, budget),
        }
        for system, pack in packs.items():
            scored = score_pack(pack, gold)
            if system == "retrieval":
                scored["pack"] = [[s.path, s.start, s.end] for s in pack[:12]]
            systems[system][str(budget)] = scored
    for name, variant in (variants or {}).items():
        varied = gather(index, task.question, variant)
        systems[name] = {str(budget): score_pack(context_pack(
            pack_context(varied, rank(varied, variant), budget, variant)), gold)
            for budget in budgets}
    record = {
        "commit": task.commit, "parent": task.parent, "date": task.date,
        "question": task.question,
        "gold": [asdict(g) for g in gold],
        "gold_from_mining_differs": gold != task.gold,
        "names_gold": names_gold(task.question, gold),
        "search_mode": found["mode"], "search_note": found["note"],
        "search_seconds": round(search_seconds, 3), "context_seconds": context_seconds,
        "systems": systems,
        "context_blocks": context_blocks,
    }
    if dumped is not None:
        dumped.write(json.dumps({"task": {k: v for k, v in record.items()
                                          if k != "context_blocks"},
                                 "gathered": saved_state(tuning_gathering(index,
                                                                          task.question))})
                     + "\n")
    return record


def tuning_gathering(index: Any, question: str) -> Gathered:
    """The tuner's gathering, not the tool's: more hits expanded and more siblings taken than
    the installed weights allow, so that the saved state can be ranked and packed again under
    other weights (:mod:`bench.context_eval.tune`); its pack at the installed weights can differ
    from ``Index.context``'s by a function or so, and is never a published figure."""
    from knoxidx.answers.context import ContextWeights, gather

    weights = ContextWeights()
    return gather(index, question, replace(
        weights, expand_hits=max(weights.expand_hits, DUMP_EXPAND), sibling=1.0,
        siblings=max(weights.siblings, DUMP_SIBLINGS), sibling_lexical=DUMP_SIBLING_LEXICAL,
        sibling_hits=max(weights.sibling_hits, DUMP_EXPAND)))


class _Lazy(dict):  # type: ignore[type-arg]
    """The source files already read, and any other file a result names, read on demand."""

    def __init__(self, root: Path, files: dict[str, list[str]]) -> None:
        super().__init__(files)
        self.root = root

    def get(self, path: str, default: Any = None) -> Any:
        if path not in self:
            try:
                self[path] = (self.root / path).read_text("utf-8", "replace").split("\n")
            except OSError:
                self[path] = []
        return self[path]
