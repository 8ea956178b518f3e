"""Where the local model's embedding time goes, per setting, on an index's real chunks.

    python -m bench.retrieval_eval.throughput ~/.cache/knoxidx-corpus/python/django \\
        [--chunks 192] [--settings default,batch32,threads1,...]

Reads ``--chunks`` chunks spread over the index (read-only) and, as ``knoxidx index`` does,
embeds each batch of 32 with its declarations. Each setting runs in a fresh process (its own
model load and peak RSS) and reports chunks/s, CPU seconds per chunk (what a busy machine
distorts least), tokens read and padding added, and peak RSS. Prints a Markdown table and the
load average, which skews every wall-clock figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# name -> (MiniLM keyword arguments, encode batch size)
# name -> (MiniLM keyword arguments, encode keyword arguments)
SETTINGS: dict[str, tuple[dict[str, Any], dict[str, int]]] = {
    "before": ({"spinning": True}, {"batch_size": 16, "batch_tokens": 1 << 30}),
    "no-spin": ({}, {"batch_size": 16, "batch_tokens": 1 << 30}),
    "threads1": ({"threads": 1}, {"batch_size": 16, "batch_tokens": 1 << 30}),
    "batch4": ({}, {"batch_size": 4, "batch_tokens": 1 << 30}),
    "budget512": ({}, {"batch_tokens": 512}),
    "budget1024": ({}, {"batch_tokens": 1024}),
    "budget2048": ({}, {"batch_tokens": 2048}),
    "tokens128": ({"max_tokens": 128}, {}),
    "int8": ({"precision": "int8"}, {}),
    "int8-budget512": ({"precision": "int8"}, {"batch_tokens": 512}),
    "int8-budget1024": ({"precision": "int8"}, {"batch_tokens": 1024}),
    "int8-threads1": ({"precision": "int8", "threads": 1}, {}),
    "int8-batch1": ({"precision": "int8"}, {"batch_size": 1}),
    "batch1": ({"precision": "fp32"}, {"batch_size": 1}),
}
PIPELINE_BATCH = 32  # chunks per embedding call, as knoxidx.update.retrieval_steps.EMBED_BATCH


def read_texts(repo: Path, count: int) -> list[list[str]]:
    """``count`` chunks spread evenly over the index, grouped as the pipeline sends them: each
    group is up to 32 chunks' document texts followed by their declarations' texts."""
    from knoxidx.graph.sqlite_schema import DB_NAME, INDEX_DIR
    from knoxidx.retrieval.backends import LocalEmbedder
    from knoxidx.retrieval.store import ChunkStore

    conn = sqlite3.connect(f"file:{repo / INDEX_DIR / DB_NAME}?mode=ro", uri=True)
    store = ChunkStore(conn)
    ids = [row[0] for row in conn.execute("SELECT id FROM chunk ORDER BY id")]
    step = max(1, len(ids) // count)
    chosen = ids[::step][:count]
    embedder = LocalEmbedder()
    groups = []
    for start in range(0, len(chosen), PIPELINE_BATCH):
        batch = chosen[start : start + PIPELINE_BATCH]
        rows = store.get(batch)
        texts = [embedder.document_text(rows[i].chunk) for i in batch if i in rows]
        declared = store.declarations(batch)
        texts += [text for found in declared.values() for _, text in found]
        groups.append(texts)
    conn.close()
    return groups


def run_one(name: str, groups: list[list[str]]) -> dict[str, Any]:
    """Load the model with setting ``name`` and embed ``groups``; the figures."""
    import numpy as np

    from knoxidx.retrieval.backends import LocalEmbedder
    from knoxidx.retrieval.minilm import MiniLM

    kwargs, batching = SETTINGS[name]
    t0 = time.perf_counter()
    model = MiniLM(adapter=LocalEmbedder().adapter, **kwargs)
    load = time.perf_counter() - t0
    model.encode(["warm up"])
    calls: list[tuple[int, int]] = []  # (rows, width) of each model call
    run = model._session.run

    def counted(names: Any, feed: dict[str, Any]) -> Any:
        calls.append(feed["input_ids"].shape)
        return run(names, feed)

    model._session.run = counted
    cpu0, t0 = time.process_time(), time.perf_counter()
    vectors = [model.encode(texts, **batching) for texts in groups]
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    chunks = sum(min(PIPELINE_BATCH, len(g)) for g in groups)
    tokens = sum(len(e.ids) for g in groups for e in model._tokenizer.encode_batch(g))
    padded = sum(rows * width for rows, width in calls)
    return {
        "setting": name, "load_s": round(load, 2), "chunks": chunks,
        "texts": sum(len(g) for g in groups), "chunks_per_s": round(chunks / wall, 2),
        "cpu_s_per_chunk": round(cpu / chunks, 4), "tokens": tokens,
        "padding": round(padded / tokens - 1, 3),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "vectors": np.concatenate(vectors).tolist() if os.environ.get("KX_VECTORS") else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo", type=Path)
    parser.add_argument("--chunks", type=int, default=192)
    parser.add_argument("--settings", default=",".join(SETTINGS))
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    groups = read_texts(args.repo, args.chunks)
    if args.one:
        print(json.dumps(run_one(args.one, groups)))
        return
    print(f"load average before: {os.getloadavg()}", file=sys.stderr)
    rows = []
    for name in args.settings.split(","):
        out = subprocess.run(
            [sys.executable, "-m", "bench.retrieval_eval.throughput", str(args.repo),
             "--chunks", str(args.chunks), "--one", name],
            capture_output=True, text=True)
        if out.returncode:
            sys.exit(f"setting {name} failed:\n{out.stderr}")
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        rows[-1].pop("vectors")
        print(json.dumps(rows[-1]), file=sys.stderr)
    print("| setting | chunks/s | CPU s / chunk | texts (chunks + declarations) | tokens | "
          "padding | load s | peak RSS MB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r['setting']} | {r['chunks_per_s']} | {r['cpu_s_per_chunk']} | {r['texts']} "
              f"| {r['tokens']} | {r['padding']:.0%} | {r['load_s']} | {r['peak_rss_mb']} |")
    print(f"load average after: {os.getloadavg()}", file=sys.stderr)


if __name__ == "__main__":
    main()
