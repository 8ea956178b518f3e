"""Driver for the TypeScript/JavaScript oracle (ts_oracle.mjs): install, shard, cache.

Why a Python wrapper: the benchmark is Python, and the oracle needs the same
conveniences as the jedi one -- a pinned ``typescript`` installed on first use
(``npm ci`` into ``bench/.cache/ts-oracle``, never touched again once the
pinned version is there, so later runs work offline), per-file caching keyed
by the whole corpus, a deterministic ``--max-files`` quick mode, and
parallelism: each of ``--jobs`` node processes builds the program for the
whole corpus and examines a size-balanced share of the files.

Rows are those of ts_oracle.mjs (see its header): ``call``, ``extends``,
``def`` and ``file``; per file the ``file`` row comes first, as in the jedi
oracle.

Usage::

    python bench/oracles/ts_oracle.py CORPUS_DIR OUT.jsonl [--max-files N]
        [--subset stride|first] [--jobs J] [--no-cache]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import (
    BENCH_DIR,
    FileCache,
    Row,
    corpus_key,
    count_kinds,
    list_files,
    select_subset,
    write_jsonl,
)

ORACLE_NAME = "ts_oracle"
# Part of the cache key: bump whenever a change alters which rows are produced.
ORACLE_VERSION = "2"

HERE = Path(__file__).resolve().parent
SCRIPT = HERE / "ts_oracle.mjs"
NODE_DIR = BENCH_DIR / ".cache" / "ts-oracle"
SOURCE_SUFFIXES = (".ts", ".tsx", ".js", ".jsx", ".mts", ".cts", ".mjs", ".cjs")
DECLARATION_SUFFIXES = (".d.ts", ".d.mts", ".d.cts")  # in the program, but no call sites to examine
NODE_HEAP_MB = 6144


def pinned_typescript() -> str:
    return json.loads((HERE / "package.json").read_text())["dependencies"]["typescript"]


def installed_typescript() -> str | None:
    try:
        return json.loads((NODE_DIR / "node_modules" / "typescript" / "package.json").read_text())["version"]
    except (FileNotFoundError, json.JSONDecodeError, KeyError):
        return None


def ensure_node_deps() -> str:
    """Install the pinned typescript into bench/.cache/ts-oracle unless already there."""
    wanted = pinned_typescript()
    if installed_typescript() == wanted:
        return wanted
    if shutil.which("npm") is None or shutil.which("node") is None:
        sys.exit("ts_oracle: node and npm are required")
    NODE_DIR.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        if (HERE / name).exists():
            shutil.copyfile(HERE / name, NODE_DIR / name)
    command = "ci" if (NODE_DIR / "package-lock.json").exists() else "install"
    print(f"[{ORACLE_NAME}] npm {command} typescript@{wanted} into {NODE_DIR}", file=sys.stderr)
    subprocess.run(["npm", command, "--prefix", str(NODE_DIR), "--prefer-offline", "--no-audit", "--no-fund"],
                   check=True, stdout=sys.stderr)
    if installed_typescript() != wanted:
        sys.exit(f"ts_oracle: typescript {wanted} did not install")
    return wanted


def balanced_shards(corpus: Path, files: list[str], jobs: int) -> list[list[str]]:
    """Split files into ``jobs`` shards of similar total size (largest first, greedy)."""
    shards: list[list[str]] = [[] for _ in range(max(1, min(jobs, len(files))))]
    loads = [0] * len(shards)
    for rel in sorted(files, key=lambda r: -(corpus / r).stat().st_size):
        i = loads.index(min(loads))
        shards[i].append(rel)
        loads[i] += (corpus / rel).stat().st_size
    return shards


def run_node(corpus: Path, shards: list[list[str]], workdir: Path) -> dict[str, list[Row]]:
    """Run one node process per shard concurrently; rows grouped by file (complete files only)."""
    procs = []
    for i, shard in enumerate(shards):
        listing, out = workdir / f"shard-{i}.txt", workdir / f"shard-{i}.jsonl"
        listing.write_text("\n".join(shard) + "\n")
        cmd = ["node", f"--max-old-space-size={NODE_HEAP_MB}", str(SCRIPT), "--corpus", str(corpus),
               "--files", str(listing), "--out", str(out), "--ts-dir", str(NODE_DIR)]
        procs.append((subprocess.Popen(cmd), out))
    failed = [p.args for p, _ in procs if p.wait() != 0]

    by_file: dict[str, list[Row]] = {}
    for _, out in procs:
        pending: list[Row] = []
        if not out.exists():
            continue
        for line in out.read_text().splitlines():
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                break  # truncated tail of a crashed process
            if row["kind"] == "file":  # last row of a file: the file is complete
                by_file[str(row["path"])] = [row, *pending]
                pending = []
            else:
                pending.append(row)
    if failed:
        print(f"[{ORACLE_NAME}] warning: {len(failed)} node process(es) failed; "
              f"{len(by_file)} files completed", file=sys.stderr)
    return by_file


def run_oracle(corpus: Path, out: Path, max_files: int | None = None, subset: str = "stride",
               jobs: int = 2, use_cache: bool = True) -> dict[str, object]:
    """Produce OUT.jsonl for the corpus (cached per file); return run statistics."""
    corpus = corpus.resolve()
    t0 = time.perf_counter()
    ts_version = ensure_node_deps()
    program_files = list_files(corpus, SOURCE_SUFFIXES)
    examinable = [p for p in program_files if not p.endswith(DECLARATION_SUFFIXES)]
    chosen = select_subset(examinable, max_files, subset)

    cache = FileCache(ORACLE_NAME, corpus_key(corpus, program_files, [ORACLE_NAME, ORACLE_VERSION, ts_version]))
    results: dict[str, list[Row]] = {}
    if use_cache:
        for rel in chosen:
            cached = cache.get(rel)
            if cached is not None:
                results[rel] = cached
    todo = [rel for rel in chosen if rel not in results]

    if todo:
        shards = balanced_shards(corpus, todo, jobs)
        print(f"[{ORACLE_NAME}] {len(chosen)} files ({len(results)} cached), examining {len(todo)} "
              f"in {len(shards)} node process(es) ...", file=sys.stderr)
        with tempfile.TemporaryDirectory(prefix="ts-oracle-") as tmp:
            fresh = run_node(corpus, shards, Path(tmp))
        for rel, rows in fresh.items():
            cache.put(rel, rows)
        results.update(fresh)
        missing = [rel for rel in todo if rel not in results]
        if missing:
            sys.exit(f"ts_oracle: {len(missing)} files were not examined (first: {missing[0]}); rerun to resume")

    rows = [row for rel in chosen for row in results[rel]]
    write_jsonl(out, rows)
    file_rows = [r for r in rows if r["kind"] == "file"]
    return {
        "corpus": str(corpus), "files": len(chosen), "computed": len(todo),
        "wall_s": round(time.perf_counter() - t0, 1),
        "rows": count_kinds(rows),
        "sites": sum(int(r["sites"]) for r in file_rows),
        "resolved_sites": sum(int(r["resolved"]) for r in file_rows),
        "errors": sum(int(r["errors"]) for r in file_rows),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("corpus", type=Path, help="corpus directory (e.g. ~/.cache/knoxidx-corpus/ts/zod)")
    ap.add_argument("out", type=Path, help="output JSONL")
    ap.add_argument("--max-files", type=int, default=None, help="quick mode: examine only N files")
    ap.add_argument("--subset", choices=("stride", "first"), default="stride",
                    help="how --max-files picks files from the sorted list (default: every k-th)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="node processes (each holds the whole program in memory)")
    ap.add_argument("--no-cache", action="store_true", help="recompute even if cached")
    args = ap.parse_args(argv)
    if not args.corpus.is_dir():
        ap.error(f"not a directory: {args.corpus}")
    stats = run_oracle(args.corpus, args.out, args.max_files, args.subset, args.jobs, use_cache=not args.no_cache)
    print(f"[{ORACLE_NAME}] {stats}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
