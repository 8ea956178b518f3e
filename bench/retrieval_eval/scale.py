"""Retrieval at scale: search latency on the whole corpus, and the first embedding pass.

    python -m bench.retrieval_eval.scale latency [--real 2000] [--work DIR]
    python -m bench.retrieval_eval.scale first-pass [--project rust/tokio] [--work DIR]

``latency``: a copy of the whole corpus (``$KNOXIDX_CORPUS`` or ``~/.cache/knoxidx-corpus``,
its ``.knoxidx`` left out) is indexed (graph, chunks, FTS5). Embedding all of it with the local
model takes hours on two cores, so the vector table is filled honestly but cheaply: the first
``--real`` pending chunks are embedded by the model, and every other chunk gets a *real* vector
of that set with its dimensions randomly permuted and signs flipped (a unit vector with the
same distribution of components; stored under a ``synthetic:`` hash that no text hash can
equal). The matrix then has one row per chunk, as a fully embedded index would, so every cost
that grows with the corpus (loading the rows, the matrix-vector product, top-k, lexical and
symbol search, fusion, the definition rerank) is paid at full size. The rankings the vector
source returns for the synthetic rows are meaningless; only their cost is measured. Printed and
saved: in-process ``Index.search`` p50/p90 per mode (model loaded, matrix cached, as a server or
``--batch`` has them) and the whole ``knoxidx search`` command (a fresh process: Python start,
model load, matrix read from SQLite) per query, median of ``--runs``.

``first-pass``: a fresh copy of one project (no embedding cache) is indexed (``Index.update``:
graph, chunks and lexical search, timed), lexical and symbol search are asked right after,
before any vector exists, then every chunk is embedded (timed: chunks/s). Shows that graph and
lexical search are usable within the graph-index time while the embedding runs for minutes.

Both write ``bench/results/retrieval-scale-<date>.json`` (merged with what is there).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent.parent / "results"
# Questions over the five languages' projects, plain words and identifiers mixed (as people ask)
QUERIES = [
    "validate an email address",
    "parse an HTTP request header",
    "QuerySet.filter",
    "read a git packfile index",
    "spawn a blocking task on the runtime",
    "format a date with a pattern",
    "report an unused variable",
    "compute the bounding box of a geometry",
    "get_object_or_404",
    "open a TCP connection with a timeout",
    "walk the syntax tree and visit every node",
    "resolve a module import path",
]
MODES = ("lexical", "vector", "hybrid")


def _update_timed(idx: Any, out: dict[str, Any]) -> Any:
    """``idx.update`` (graph, chunks, lexical search) with the clock running; its time and the
    index's size go into ``out``."""
    t = time.perf_counter()
    report = idx.update(jobs=2)
    out["index_s"] = round(time.perf_counter() - t, 1)
    stats = idx.stats()
    out["files"] = sum(stats["files"].values())
    out["lines"] = stats["lines"]
    return report


def say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def corpus_root(arg: Path | None) -> Path:
    return arg or Path(os.environ.get("KNOXIDX_CORPUS", Path.home() / ".cache" / "knoxidx-corpus"))


def copy_tree(source: Path, dest: Path) -> None:
    """``source`` to ``dest`` without any ``.knoxidx`` (never write inside the shared corpus)."""
    if dest.exists():
        return
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(".knoxidx"), symlinks=True)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def fill_synthetic(idx: Any, seed: int = 7) -> dict[str, int]:
    """Give every still-pending chunk a permuted copy of a real vector (see the docstring)."""
    import numpy as np

    from knoxidx.retrieval.backends import select_embedder
    from knoxidx.retrieval.vectors import from_blobs, to_blob
    from knoxidx.update.retrieval_steps import _local_cached_store

    store = _local_cached_store(idx)
    embedder = select_embedder({})
    _, blobs = store.all_vectors()
    real = from_blobs(blobs, embedder.dimension)
    if len(real) == 0:
        raise SystemExit("no real vectors to copy from: embed some first (--real N, N > 0)")
    rng = np.random.default_rng(seed)
    made = declarations = 0
    while True:
        ids = store.pending(2048)
        if not ids:
            break
        # the chunks' declarations too (names.declaration_texts): their matrix is searched
        # at full size as well
        declared = [d for found in store.declarations(ids).values() for d, _ in found]

        def permuted(n: int) -> Any:
            rows = real[rng.integers(0, len(real), size=n)]
            perms = np.argsort(rng.random((n, embedder.dimension)), axis=1)
            signs = rng.choice(np.array([-1.0, 1.0], dtype=np.float32), size=rows.shape)
            return np.take_along_axis(rows, perms, axis=1) * signs

        with store.transaction():
            store.save_vectors(embedder.model_id, [
                (i, f"synthetic:{i}", to_blob(v))
                for i, v in zip(ids, permuted(len(ids)), strict=True)
            ], [
                (d, f"synthetic:d{d}", to_blob(v))
                for d, v in zip(declared, permuted(len(declared)), strict=True)
            ])
        made += len(ids)
        declarations += len(declared)
    return {"real": len(real), "synthetic": made, "synthetic_declarations": declarations}


def latency(args: argparse.Namespace) -> dict[str, Any]:
    from knoxidx.index import Index

    repo = args.work / "corpus"
    say(f"copying the corpus to {repo} ...")
    copy_tree(corpus_root(args.corpus), repo)
    out: dict[str, Any] = {"load_before": os.getloadavg()}
    with Index.open(repo, create=True) as idx:
        report = _update_timed(idx, out)
        say(f"indexed in {out['index_s']} s: {out['files']} files, {out['lines']} lines, "
            f"retrieval {report.retrieval}")
        # what the vector table holds is remembered beside the copy: a re-run (after a change
        # to the search) embeds nothing and fills nothing, and must still say what is there
        record = args.work / "vectors.json"
        made = json.loads(record.read_text()) if record.exists() else {}
        t = time.perf_counter()
        embed = idx.embed(limit=args.real)
        if embed["embedded"] + embed["from_cache"]:
            made["real_embed"] = {"chunks": embed["embedded"] + embed["from_cache"],
                                  "model_made": embed["embedded"],
                                  "seconds": round(time.perf_counter() - t, 1)}
        filled = fill_synthetic(idx)
        if filled["synthetic"]:
            made["vectors"] = filled
        record.write_text(json.dumps(made))
        out.update(made)
        say(f"vectors: {made}")
        out["chunks"] = idx.embed(limit=0)["chunks"]
        say(f"vectors: {out['vectors']}, chunks {out['chunks']}")
        out["in_process_ms"] = {}
        for mode in MODES:
            idx.search("warm up the model and the matrix", mode=mode)
            times = []
            for query in QUERIES:
                for _ in range(args.runs):
                    t = time.perf_counter()
                    answer = idx.search(query, k=10, mode=mode)
                    times.append((time.perf_counter() - t) * 1000)
                if answer["mode"] != mode:
                    raise SystemExit(f"{mode} search answered in {answer['mode']}: {answer['note']}")
            out["in_process_ms"][mode] = {"p50": round(percentile(times, 0.5), 1),
                                          "p90": round(percentile(times, 0.9), 1),
                                          "searches": len(times)}
            say(f"in-process {mode}: {out['in_process_ms'][mode]}")
    exe = str(Path(sys.executable).with_name("knoxidx"))
    out["command_s"] = {}
    for mode in ("lexical", "hybrid"):
        medians = []
        for query in QUERIES[: args.command_queries]:
            runs = []
            for _ in range(args.runs):
                t = time.perf_counter()
                subprocess.run([exe, "search", query, str(repo), "--mode", mode],
                               check=True, capture_output=True)
                runs.append(time.perf_counter() - t)
            medians.append(statistics.median(runs))
        out["command_s"][mode] = {"median": round(statistics.median(medians), 2),
                                  "per_query": [round(m, 2) for m in medians]}
        say(f"whole command ({mode}): {out['command_s'][mode]}")
    out["load_after"] = os.getloadavg()
    return out


def first_pass(args: argparse.Namespace) -> dict[str, Any]:
    from knoxidx.index import Index

    repo = args.work / "first-pass" / Path(args.project).name
    if repo.exists():
        shutil.rmtree(repo)  # a first pass: no index, no embedding cache
    copy_tree(corpus_root(args.corpus) / args.project, repo)
    out: dict[str, Any] = {"project": args.project, "load_before": os.getloadavg()}
    with Index.open(repo, create=True) as idx:
        report = _update_timed(idx, out)
        out["chunks"] = report.retrieval["chunks"]
        say(f"graph + chunks + FTS in {out['index_s']} s: {out['files']} files, "
            f"{out['lines']} lines, {out['chunks']} chunks")
        before: dict[str, Any] = {}
        for mode in ("lexical", "hybrid"):
            t = time.perf_counter()
            answer = idx.search(QUERIES[4], k=10, mode=mode)
            before[mode] = {"ms": round((time.perf_counter() - t) * 1000, 1),
                            "answered_as": answer["mode"], "results": len(answer["results"]),
                            "note": answer.get("note", "")}
        t = time.perf_counter()
        symbols = idx.symbols("spawn_blocking")
        before["symbols"] = {"ms": round((time.perf_counter() - t) * 1000, 1),
                             "results": len(symbols)}
        out["before_embedding"] = before
        say(f"before any vector: {before}")
        start = time.perf_counter()
        last = [start]

        def progress(phase: str, done: int, total: int) -> None:
            now = time.perf_counter()
            if now - last[0] >= 60 or done == total:
                last[0] = now
                say(f"embed {done}/{total} ({done / max(now - start, 1e-9):.1f}/s)")

        embed = idx.embed(progress=progress)
        seconds = time.perf_counter() - start
        out["embed"] = {"embedded": embed["embedded"], "from_cache": embed["from_cache"],
                        "seconds": round(seconds, 1),
                        "chunks_per_s": round(embed["embedded"] / seconds, 2)}
        t = time.perf_counter()
        answer = idx.search(QUERIES[4], k=10, mode="hybrid")
        out["after_embedding"] = {"hybrid_ms": round((time.perf_counter() - t) * 1000, 1),
                                  "answered_as": answer["mode"]}
        say(f"embedded: {out['embed']}")
    out["load_after"] = os.getloadavg()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.retrieval_eval.scale")
    parser.add_argument("what", choices=("latency", "first-pass"))
    parser.add_argument("--corpus", type=Path, default=None)
    parser.add_argument("--work", type=Path, default=Path("/tmp/knoxidx-retrieval-scale"))
    parser.add_argument("--real", type=int, default=2000,
                        help="latency: chunks embedded by the model (the rest are synthetic)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--command-queries", type=int, default=5)
    parser.add_argument("--project", default="rust/tokio", help="first-pass: corpus project")
    parser.add_argument("--no-save", action="store_true")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    random.seed(7)
    result = latency(args) if args.what == "latency" else first_pass(args)
    print(json.dumps(result, indent=2))
    if not args.no_save:
        RESULTS.mkdir(exist_ok=True)
        path = RESULTS / f"retrieval-scale-{datetime.date.today().isoformat()}.json"
        saved = json.loads(path.read_text()) if path.exists() else {}
        saved[args.what] = result
        path.write_text(json.dumps(saved, indent=2) + "\n")
        say(f"written {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
