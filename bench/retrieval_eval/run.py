"""Build, index, embed and query one language's docstring -> code task; score it.

The copy lives in ``bench/.cache/retrieval_eval/<lang>/repo`` (``$KNOXIDX_EVAL_DIR``), rebuilt
each run except for ``.knoxidx/embeddings.db``, the embedding cache keyed by (model, text
hash): a re-run only embeds chunks whose embedded text changed. Each query is asked through
``Index.search`` in the three modes (what a user gets), and each source's own ranking
(lexical, vector, symbol, names, declarations, identifiers; 50 candidates) is saved in ``raw.json`` beside the copy, so that
fusion and rerank variants can be scored without re-embedding (``bench.retrieval_eval.variants``).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench.retrieval_eval.corpus import Target, build_task, write_copy
from bench.retrieval_eval.metrics import Span, score
from knoxidx.index import Index

MODES = ("hybrid", "lexical", "vector")
@dataclass(frozen=True, slots=True)
class Corpus:
    project: str  # under the corpus root: "python/django"
    languages: tuple[str, ...]  # knoxidx language names indexed and asked about


CORPORA: dict[str, Corpus] = {
    "python": Corpus("python/django", ("python",)),
    "javascript": Corpus("js/eslint", ("javascript",)),
    "go": Corpus("go/go-git", ("go",)),
    "rust": Corpus("rust/tokio", ("rust",)),
    "java": Corpus("java/jdk-time-net", ("java",)),
}
# Other projects of the same languages, for tuning: a rerank or fusion change is chosen on
# these (``--set dev``) and then reported on CORPORA, which it was not tuned on.
DEV_CORPORA: dict[str, Corpus] = {
    "python": Corpus("python/sqlalchemy", ("python",)),
    "javascript": Corpus("js/three", ("javascript",)),
    "go": Corpus("go/x-tools", ("go",)),
    "rust": Corpus("rust/syn", ("rust",)),
    "java": Corpus("java/javac", ("java",)),
}
SETS = {"main": CORPORA, "dev": DEV_CORPORA}


@dataclass(slots=True)
class LanguageResult:
    language: str
    project: str
    queries: int
    candidates: int  # documented functions that passed the filters
    files: int
    lines: int
    chunks: int
    metrics: dict[str, dict[str, float]] = field(default_factory=dict)  # mode -> recall, mrr
    timings: dict[str, float] = field(default_factory=dict)
    embedded: int = 0  # chunks the model embedded in this run (the rest came from the cache)


def eval_root() -> Path:
    default = Path(__file__).resolve().parent.parent / ".cache" / "retrieval_eval"
    return Path(os.environ.get("KNOXIDX_EVAL_DIR", default))


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def evaluate(
    language: str,
    corpus_root: Path,
    *,
    queries: int = 100,
    min_chunks: int = 1500,
    seed: int = 4,
    work: Path | None = None,
    corpora: dict[str, Corpus] = CORPORA,
) -> LanguageResult:
    spec = corpora[language]
    work = work or eval_root() / language
    t0 = time.perf_counter()
    task, chosen = build_task(corpus_root / spec.project, spec.project, spec.languages,
                              queries=queries, min_chunks=min_chunks, seed=seed)
    repo = work / "repo"
    write_copy(corpus_root / spec.project, repo, task, chosen)
    select_s = time.perf_counter() - t0
    say(f"[{language}] {len(task.targets)} queries from {task.candidates} candidates; "
        f"{len(task.files)} files, ~{task.estimated_chunks} chunks ({select_s:.1f} s)")
    result = index_and_ask(repo, task.targets, language=language, project=spec.project,
                           work=work)
    result.candidates = task.candidates
    result.timings["select"] = round(select_s, 2)
    return result


def index_and_ask(
    repo: Path, targets: list[Target], *, language: str, project: str, work: Path
) -> LanguageResult:
    """Index ``repo`` afresh (keeping its embedding cache), embed, ask every target's query."""
    knoxidx_dir = repo / ".knoxidx"
    for name in ("index.db", "index.db-wal", "index.db-shm", "centrality.pickle"):
        (knoxidx_dir / name).unlink(missing_ok=True)
    with Index.open(repo, create=True) as idx:
        t = time.perf_counter()
        report = idx.update(jobs=2)
        index_s = time.perf_counter() - t
        stats = idx.stats()
        chunks = report.retrieval["chunks"]
        say(f"[{language}] indexed: {chunks} chunks in {index_s:.1f} s; embedding...")
        embed = idx.embed(progress=_embed_progress(language))
        say(f"[{language}] embedded {embed['embedded']} (cache {embed['from_cache']}) in "
            f"{embed['seconds']:.0f} s")
        raw, rankings, latencies = ask(idx, targets)
    spans = [Span(t.path, t.start_line, t.end_line) for t in targets]
    result = LanguageResult(
        language=language, project=project, queries=len(targets), candidates=0,
        files=sum(stats["files"].values()), lines=stats["lines"], chunks=chunks,
        embedded=embed["embedded"],
    )
    for mode in MODES:
        scores = score(rankings[mode], spans)
        result.metrics[mode] = {"recall@10": round(scores.recall, 4), "mrr@10": round(scores.mrr, 4)}
    result.timings.update({
        "index": round(index_s, 2),
        "embed": round(embed["seconds"], 2),
        "embed_chunks_per_s": round(embed["embedded"] / embed["seconds"], 2)
        if embed["embedded"] and embed["seconds"] else 0.0,
        "hybrid_query_ms_p50": round(statistics.median(latencies), 1) if latencies else 0.0,
    })
    raw["targets"] = [asdict(t) for t in targets]
    work.mkdir(parents=True, exist_ok=True)
    (work / "raw.json").write_text(json.dumps(raw))
    return result


def ask(idx: Index, targets: list[Target]) -> tuple[dict[str, Any], dict[str, list], list[float]]:
    """Every query in every mode through ``Index.search``, and each source's own ranking."""
    from knoxidx.retrieval.searcher import searcher_for

    searcher = searcher_for(idx)
    rankings: dict[str, list[list[Span]]] = {mode: [] for mode in MODES}
    latencies: list[float] = []
    per_query: list[dict[str, Any]] = []
    idx.search("warm up the model", mode="hybrid")
    for target in targets:
        for mode in MODES:
            t = time.perf_counter()
            answer = idx.search(target.query, k=10, mode=mode)
            if mode == "hybrid":
                latencies.append((time.perf_counter() - t) * 1000)
            if answer["mode"] != mode:
                raise RuntimeError(f"search answered in {answer['mode']} mode: {answer['note']}")
            rankings[mode].append(
                [Span(r["path"], r["start_line"], r["end_line"]) for r in answer["results"]]
            )
        hybrid = searcher.hybrid()
        hybrid.embedder = searcher.embedder()
        per_query.append({
            "lexical": [i for i, _ in hybrid.lexical(target.query)],
            "vector": [i for i, _ in hybrid.vector(target.query)],
            "symbol": [i for i, _ in hybrid.symbols(target.query)],
            "names": [i for i, _ in hybrid.names(target.query)],
            "declarations": [i for i, _ in hybrid.declarations(target.query)],
            "identifiers": [i for i, _ in hybrid.identifiers(target.query)],
        })
    seen = sorted({i for q in per_query for ids in q.values() for i in ids})
    stored = searcher.store.get(seen)
    chunks = {
        i: [s.chunk.path, s.chunk.start_line, s.chunk.end_line, s.chunk.kind, s.chunk.symbol,
            list(s.chunk.symbols), s.chunk.token_count]
        for i, s in stored.items()
    }
    return {"queries": per_query, "chunks": chunks}, rankings, latencies


def _embed_progress(language: str) -> Any:
    start = time.perf_counter()
    last = [0.0]

    def progress(phase: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if phase != "embed" or (now - last[0] < 30 and done < total):
            return
        last[0] = now
        rate = done / (now - start) if now > start else 0.0
        eta = (total - done) / rate if rate else 0.0
        say(f"[{language}] embed {done}/{total} ({rate:.1f}/s, ETA {eta:.0f} s)")

    return progress
