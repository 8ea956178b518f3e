"""``python -m bench.context_eval.vector_sources [--repo PATH ...] [--out FILE]``: where each
of hybrid search's sources ranks the gold of the change requests, with embeddings.

Walks a repository's tasks as the embedding walk does (checkout, incremental index, the
pending chunks embedded) and, per gold function, records the 1-based place of the first chunk
covering it (``coverage.covers``) in each source's own ranking of 50 (lexical, vector,
declarations, symbol, names), the vector sources also asked with other texts of the question
(``QUESTION_FORMS``), and the place of search's first result covering it, as context asks
(vector sources at ``ContextWeights.vector_fusion``) and with them at 1 and at 0; with the
vector source's first five chunks, to see what it ranks high. An experiment: prints a summary
(with what the saved embedding walk's packs reach of search's first 20) and writes one JSON
line per task to ``--out`` (nothing under ``bench/results``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.context_eval.__main__ import CACHE, repositories
from bench.context_eval.coverage import Shown, covers
from bench.context_eval.mining import Definition, git
from bench.context_eval.run import clone, gold_at_parent, load_or_mine
from knoxidx.answers.context import ContextWeights
from knoxidx.retrieval.hybrid_search import VECTOR_SOURCES
from knoxidx.retrieval.lexical_rows import ChunkFilter
from knoxidx.retrieval.priors import is_test_path
from knoxidx.retrieval.searcher import searcher_for
from knoxidx.retrieval.terms import content_terms

SOURCE_NAMES = ("lexical", "vector", "declarations", "symbol", "names")
TOP = 20


def _content_words(question: str) -> str:
    return " ".join(content_terms(question))


def _first_line(question: str) -> str:
    return question.strip().splitlines()[0] if question.strip() else question


QUESTION_FORMS: dict[str, Callable[[str], str]] = {
    "raw": lambda q: q,
    "content": _content_words,
    "subject": _first_line,
}


def _place(ids: list[int], spans: dict[int, Shown], gold: Definition) -> int | None:
    return next((n for n, i in enumerate(ids, 1) if i in spans and covers(spans[i], gold)),
                None)


def _result_place(results: list[dict[str, Any]], gold: Definition) -> int | None:
    return next((n for n, r in enumerate(results, 1)
                 if covers(Shown(r["path"], r["start_line"], r["end_line"]), gold)), None)


def task_record(index: Any, root: Path, task: Any) -> dict[str, Any]:
    gold = gold_at_parent(index, root, task) or task.gold
    searcher = searcher_for(index)
    hybrid = searcher.hybrid()
    hybrid.embedder = searcher.embedder()
    hybrid._filter = ChunkFilter()
    ranked: dict[str, list[int]] = {}
    scores: dict[str, list[float]] = {}
    for name in SOURCE_NAMES:
        hybrid._query_vector, hybrid._words = None, None
        source = hybrid.symbols if name == "symbol" else getattr(hybrid, name)
        hits = source(task.question)
        ranked[name] = [i for i, _ in hits]
        scores[name] = [round(float(s), 4) for _, s in hits]
    for form, make in QUESTION_FORMS.items():
        if form == "raw":
            continue
        text = make(task.question)
        for name in VECTOR_SOURCES:
            hybrid._query_vector = None
            ranked[f"{name}:{form}"] = [i for i, _ in getattr(hybrid, name)(text)]
    ids = {i for hits in ranked.values() for i in hits}
    chunks = hybrid.store.get(sorted(ids))
    spans = {i: Shown(c.chunk.path, c.chunk.start_line, c.chunk.end_line)
             for i, c in chunks.items()}
    searches = {}
    for label, weight in (("context", ContextWeights().vector_fusion), ("w1", 1.0),
                          ("w0", 0.0)):
        found = index.search(task.question, k=50, mode="hybrid",
                             source_weights=dict.fromkeys(VECTOR_SOURCES, weight), depth=20)
        searches[label] = found["results"]
    top_vector = [f"{chunks[i].chunk.path}:{chunks[i].chunk.symbol or chunks[i].chunk.kind}"
                  for i in ranked["vector"][:5] if i in chunks]
    return {
        "commit": task.commit, "question": task.question,
        "gold": [{"path": g.path, "name": g.name, "start": g.start, "end": g.end,
                  "sources": {name: _place(hits, spans, g) for name, hits in ranked.items()},
                  "search": {label: _result_place(results, g)
                             for label, results in searches.items()}}
                 for g in gold],
        "top_vector": top_vector,
        # each source's ranking and the chunks' lines, to fuse again under other rules
        "ranked": {name: hits for name, hits in ranked.items() if ":" not in name},
        "scores": scores,
        "spans": {i: [s.path, s.start, s.end] for i, s in spans.items()},
    }


def walk_sources(repo: Any, tasks: int, out: Any) -> list[dict[str, Any]]:
    from knoxidx import Index

    root, head = clone(repo, CACHE, "-embed")
    walked, _ = load_or_mine(repo, root, head, tasks, CACHE)
    index: Any = None
    records = []
    try:
        for task in walked:
            git(root, "checkout", "-q", "--force", "--detach", task.parent)
            if index is None:
                index = Index.open(root, create=True)
            index.update(embed=True)
            record = task_record(index, root, task) | {"repo": repo.name}
            out.write(json.dumps(record) + "\n")
            out.flush()
            records.append(record)
    finally:
        if index is not None:
            index.close()
    return records


def summary(records: list[dict[str, Any]]) -> str:
    """Gold in each source's first ``TOP`` and in search's (as context asks); the gold by
    which of the vector sources (V), lexical (L) and names/symbol (N) rank it in their first
    ``TOP``, and whether search keeps it there (S) or not (x); the same for questions whose
    subject holds at most ``SHORT`` distinct content words."""
    golds = [g for r in records for g in r["gold"]]
    within: Counter[str] = Counter()
    for g in golds:
        for name, place in g["sources"].items():
            within[name] += _within(place)
        for label, place in g["search"].items():
            within[f"search {label}"] += _within(place)
    kinds = Counter(_kind(g) for g in golds)
    short = [g for r in records if _is_short(r) for g in r["gold"]]
    short_within = Counter(name for g in short for name, place in g["sources"].items()
                           if _within(place, SHORT_TOP))
    return "\n".join([*_first_vectors(records), *_packed(records), 
        f"gold {len(golds)}; in the first {TOP}: "
        + ", ".join(f"{k} {v}" for k, v in sorted(within.items())),
        "by source (V vector sources, L lexical, N names or symbol; S in search's first "
        f"{TOP}, x not): " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())),
        f"short questions' gold {len(short)}; in the first {SHORT_TOP}: "
        + ", ".join(f"{k} {v}" for k, v in sorted(short_within.items())),
    ])


def _is_short(record: dict[str, Any]) -> bool:
    return len(set(content_terms(_first_line(record["question"])))) <= SHORT


def _first_vectors(records: list[dict[str, Any]]) -> list[str]:
    """What the vector source's first ``FIRST`` chunks are, for short questions and others."""
    lines = []
    for label, short in (("short", True), ("other", False)):
        kinds: Counter[str] = Counter()
        for record in (r for r in records if _is_short(r) == short):
            for chunk_id in record["ranked"]["vector"][:FIRST]:
                path, start, end = record["spans"][str(chunk_id)]
                golds = [g for g in record["gold"] if g["path"] == path]
                if any(start <= g["end"] and g["start"] <= end for g in golds):
                    kinds["on gold"] += 1
                elif golds:
                    kinds["gold's file"] += 1
                elif is_test_path(path) or path.split("/")[0] in ASIDE:
                    kinds["test, doc or example"] += 1
                else:
                    kinds["other"] += 1
        lines.append(f"vector's first {FIRST} chunks, {label} questions: "
                     + ", ".join(f"{k} {v}" for k, v in kinds.most_common()))
    return lines


def _packed(records: list[dict[str, Any]]) -> list[str]:
    """Of the gold in search's first ``TOP`` (as context asks) and the rest, how many the
    saved embedding walk's packs reach (a block's line range counted whole)."""
    reached: Counter[str] = Counter()
    for repo in sorted({r["repo"] for r in records}):
        saved = CACHE / "runs" / f"embeddings-{repo}.json"
        if not saved.exists():
            continue
        blocks = {t["commit"]: t["context_blocks"]
                  for t in json.loads(saved.read_text(encoding="utf-8"))["tasks"]}
        for record in (r for r in records if r["repo"] == repo and r["commit"] in blocks):
            for g in record["gold"]:
                gold = Definition(g["path"], g["name"], g["start"], g["end"])
                where = "first" if _within(g["search"]["context"]) else "rest"
                reached[where] += 1
                for budget, packed in blocks[record["commit"]].items():
                    reached[f"{where} @{budget}"] += any(
                        covers(Shown(b["path"], b["start"], b["end"]), gold) for b in packed)
    if not reached:
        return []
    return [f"the saved walk's packs reach, of search's first {TOP} gold "
            + ", ".join(f"{k.split(' ')[1]} {v}" for k, v in sorted(reached.items())
                        if k.startswith("first ")) + f" (of {reached['first']})"
            + "; of the rest " + ", ".join(f"{k.split(' ')[1]} {v}"
                                           for k, v in sorted(reached.items())
                                           if k.startswith("rest ")) + f" (of {reached['rest']})"]


SHORT = 5  # distinct content words of the subject, at most
SHORT_TOP = 10
FIRST = 5  # the vector source's first chunks classified
ASIDE = frozenset({"docs", "doc", "examples", "example", "benches"})


def _within(place: int | None, top: int = TOP) -> bool:
    return place is not None and place <= top


def _kind(gold: dict[str, Any]) -> str:
    places = gold["sources"]
    return "".join((
        "V" if _within(places["vector"]) or _within(places["declarations"]) else "-",
        "L" if _within(places["lexical"]) else "-",
        "N" if _within(places["names"]) or _within(places["symbol"]) else "-",
        "S" if _within(gold["search"]["context"]) else "x",
    ))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.context_eval.vector_sources",
                                     description=__doc__.split("\n\n")[1])
    parser.add_argument("--repo", action="append", metavar="PATH",
                        help="a git repository or bundle (repeatable; default: the five)")
    parser.add_argument("--tasks", type=int, default=30, help="tasks per repository")
    parser.add_argument("--out", type=Path, required=True,
                        help="JSON lines, one per task (appended to)")
    parser.add_argument("--summary", action="store_true",
                        help="summarise the tasks already in --out; no walk")
    args = parser.parse_args(argv)
    if args.summary:
        with args.out.open(encoding="utf-8") as saved:
            print(f"all: {summary([json.loads(line) for line in saved])}")
        return 0
    records = []
    with args.out.open("a", encoding="utf-8") as out:
        for repo in repositories(args.repo):
            walked = walk_sources(repo, args.tasks, out)
            print(f"{repo.name}: {summary(walked)}", flush=True)
            records.extend(walked)
    print(f"all: {summary(records)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
