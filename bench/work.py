"""``python -m bench.work extract|resolve|chunk|write``: a cold build's hot loops, counted.

A build's time on a 2-core host moves by ±10 % from one run to the next, more than any one
change to extraction or resolution does, so each such change is measured as work instead:

- ``extract``: what a parse worker does for a file (``reader.read_and_extract``: read, hash,
  parse, query, extraction, node rows, the facts' blob), for every ``--step``-th file of the
  corpus, in this process;
- ``resolve``: the resolution of every indexed file of the corpus by one resolver, as a
  resolver process does it (the workspace preloaded first; the corpus's index is built if
  it has none);
- ``chunk``: what a parse worker adds for a file when the build makes chunks
  (``chunk_refresh.chunk_source``: the chunks, their token counts, FTS, name and declaration
  rows), for every ``--step``-th file, from facts extracted before the loop;
- ``write``: what the build's parent does with those chunks: each file's result, pickled
  before the loop as a worker sends it, unpickled and written into a new database (chunks,
  FTS5, name, declaration and pending rows; the commit counted too).

Each prints its CPU seconds. With ``--instructions`` it runs again under valgrind's callgrind
and prints the instructions of the loop alone (collection is switched on only inside it),
which repeat to the instruction whatever the host does, with what the parse and the query
took of them, and where callgrind's file is (for ``callgrind_annotate``). Compare the figures
of two checkouts, each on its own build (the benchmarks are of the compiled build).
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

# Collection is switched on inside this C function only: the loop runs in it (see _loop).
TOGGLE = "functools_reduce"
# Inclusive instructions of these functions, reported beside extract's total. The query's is
# py-tree-sitter's matches(): with the native matches (knoxidx/parse/_matches.c) it reads
# None, since their cursor, inlined by link-time optimisation, is not attributed to them.
PARTS = {"parse": "ts_parser_parse", "query": "query_cursor_matches"}


def _loop(items: Iterable[Any], step: Callable[[Any], Any]) -> None:
    """``step(item)`` for each item, called from C (``functools.reduce``), so that callgrind
    can count this loop and nothing else (``--toggle-collect``)."""
    functools.reduce(lambda _, item: step(item), items, None)


def extract_work(root: Path, step: int) -> dict[str, Any]:
    """A parse worker's work for every ``step``-th file of ``root``, in this process, with
    the collector as in a worker (``pipeline.lazy_collector``: with CPython's default
    thresholds this loop counted 1.7 % more instructions over every 6th file of the benchmark
    corpus, 16.92G against 16.64G, most of them collections during the queries)."""
    from knoxidx.graph.layout import build_layout
    from knoxidx.parse import extract
    from knoxidx.parse.discovery import discover
    from knoxidx.parse.reader import read_and_extract
    from knoxidx.update.graph_update import lazy_collector

    found = discover(root)
    layout = build_layout(root, [f.path for f in found.files], found.config_paths)
    files = found.files[::step]
    extract.prepare({f.language for f in files})  # compiled before the count, as a worker's
    base = str(root)
    results: list[Any] = []
    with lazy_collector():
        cpu = time.process_time()
        _loop(files, lambda f: results.append(
            read_and_extract((base, f, None, layout, False)).status))
        cpu = time.process_time() - cpu
    return {"files": len(files), "ok": results.count("ok"), "cpu_s": round(cpu, 3)}


def _chunk_jobs(root: Path, step: int) -> list[tuple[str, bytes, Any]]:
    """Path, bytes and extracted facts of every ``step``-th file of ``root`` that extracts
    (and that a build reads: not minified)."""
    from knoxidx.languages.registry import BY_NAME
    from knoxidx.parse import extract
    from knoxidx.parse.discovery import discover
    from knoxidx.parse.extract import extract_rows
    from knoxidx.parse.reader import looks_minified

    files = discover(root).files[::step]
    extract.prepare({f.language for f in files})
    jobs = []
    for f in files:
        source = (root / f.path).read_bytes()
        limit = BY_NAME[f.language].minified_line_chars
        if limit and looks_minified(source, limit):
            continue
        try:
            jobs.append((f.path, source, extract_rows(f.path, source, f.language)[0]))
        except Exception:  # noqa: BLE001 - a file the build would not chunk either
            continue
    return jobs


def chunk_work(root: Path, step: int) -> dict[str, Any]:
    """The chunk work of a parse worker for every ``step``-th file of ``root``, in this
    process, each file's facts extracted (and the tokenizer loaded) before the loop."""
    from knoxidx.retrieval.chunker import ChunkBudget
    from knoxidx.retrieval.tokens import default_counter
    from knoxidx.update.chunk_refresh import chunk_source

    jobs = _chunk_jobs(root, step)
    budget = ChunkBudget()
    default_counter()
    chunks = [0]

    def chunk(job: tuple[str, bytes, Any]) -> None:
        chunks[0] += len(chunk_source(job[0], job[1], "", job[2], budget).chunks)

    cpu = time.process_time()
    _loop(jobs, chunk)
    cpu = time.process_time() - cpu
    return {"files": len(jobs), "chunks": chunks[0], "cpu_s": round(cpu, 3)}


def write_work(root: Path, step: int, db: Path) -> dict[str, Any]:
    """The parent's side of the chunks of every ``step``-th file of ``root``: each file's
    ``ChunkedFile``, pickled before the loop as a parse worker sends it, is unpickled and
    written (``ChunkStore.replace_file``, ``set_source``) into the new database ``db``, made
    as a first build's scratch database; one transaction, its commit (FTS5's last flush and
    merges) counted with the loop."""
    import pickle

    import xxhash

    from knoxidx.graph.dbfile import unjournaled_connection
    from knoxidx.retrieval.chunker import ChunkBudget
    from knoxidx.retrieval.store import ChunkStore
    from knoxidx.update.chunk_refresh import chunk_source

    budget = ChunkBudget()
    sent = [pickle.dumps(chunk_source(path, source, xxhash.xxh3_128_hexdigest(source), facts,
                                      budget))
            for path, source, facts in sorted(_chunk_jobs(root, step))]  # as a build writes
    conn = unjournaled_connection(db)
    try:
        conn.execute("PRAGMA locking_mode=EXCLUSIVE")
        store = ChunkStore(conn)
        store.ensure_schema()
        conn.execute("BEGIN")
        done = object()  # the last item: the commit

        def write(blob: Any) -> None:
            if blob is done:
                conn.execute("COMMIT")
                return
            result = pickle.loads(blob)
            store.replace_file(result.path, result.chunks, result.rows)
            store.set_source(result.path, result.source_hash)

        cpu = time.process_time()
        _loop([*sent, done], write)
        cpu = time.process_time() - cpu
        chunks = store.chunk_count()
    finally:
        conn.close()
    return {"files": len(sent), "chunks": chunks, "bytes_sent": sum(map(len, sent)),
            "cpu_s": round(cpu, 3)}


def resolve_work(root: Path) -> dict[str, Any]:
    """One resolver over every indexed file of ``root``, as a resolver process runs it (the
    workspace preloaded, the collector as in an update). The index is brought up to date
    first (``knoxidx index --graph-only``): built where there is none, rebuilt where another
    checkout's extraction wrote it, a no-op otherwise."""
    from bench.speed import KNOXIDX
    from knoxidx.graph.layout import build_layout
    from knoxidx.graph.resolve import Resolver
    from knoxidx.graph.store import SQLiteStore
    from knoxidx.graph.workspace import StoreWorkspace
    from knoxidx.parse.discovery import discover
    from knoxidx.update.graph_update import lazy_collector

    subprocess.run([*KNOXIDX, "index", "--graph-only", str(root)], check=True,
                   capture_output=True)
    store = SQLiteStore.open(root)
    try:
        found = discover(root)
        layout = build_layout(root, [f.path for f in found.files], found.config_paths)
        workspace = StoreWorkspace(store, layout, {})
        workspace.preload(load_all_facts=True)
        paths = sorted(store.ok_file_hashes())
        edges = [0]
        with lazy_collector():
            resolver = Resolver(workspace)

            def resolve(path: str) -> None:
                edges[0] += len(resolver.resolve_file(path).edges)

            cpu = time.process_time()
            _loop(paths, resolve)
            cpu = time.process_time() - cpu
    finally:
        store.close()
    return {"files": len(paths), "edges": edges[0], "cpu_s": round(cpu, 3)}


def _write_work_in_temp(root: Path, step: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="knoxidx-write-") as scratch:
        return write_work(root, step, Path(scratch) / "index.db")


def instructions(argv: list[str], out: Path) -> dict[str, Any]:
    """Run ``python -m bench.work ARGV`` under callgrind, counting inside the loop alone:
    its instructions, and for ``extract`` the inclusive instructions of PARTS where
    callgrind_annotate is installed."""
    if shutil.which("valgrind") is None:
        raise SystemExit("--instructions needs valgrind (apt install valgrind)")
    # callgrind runs the code ~50x slower, and a large file's parse would pass its CPU deadline
    # and be skipped: the count would drop with the host's load (a loaded run counted -12 %)
    cmd = ["valgrind", "--tool=callgrind", f"--toggle-collect={TOGGLE}",
           f"--callgrind-out-file={out}", sys.executable, "-m", "bench.work", *argv,
           "--no-parse-deadline"]
    # string hashes seeded alike in every run: with a random seed, sets and dicts probe
    # differently and the same loop counted 0.05-0.2 % more or less from one run to the next
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONHASHSEED": "0"})
    if proc.returncode != 0:
        raise SystemExit(f"the run under valgrind failed:\n{proc.stderr[-2000:]}")
    result: dict[str, Any] = {"instructions": total_instructions(out.read_text()),
                              "callgrind_out": str(out)}
    if argv[0] == "extract" and shutil.which("callgrind_annotate"):
        annotated = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--auto=no",
                                    str(out)], capture_output=True, text=True).stdout
        result.update({name: inclusive(annotated, fn) for name, fn in PARTS.items()})
    return result


def lift_parse_deadline() -> None:
    """Let every parse of this process run to its end: the same files are parsed whatever the
    host's load or a tool's slowdown."""
    from knoxidx.parse import tree_parse

    tree_parse.PARSE_SECONDS = float("inf")


def total_instructions(callgrind_out: str) -> int:
    """The event total of a callgrind output file (its ``summary:`` or ``totals:`` line)."""
    found = re.search(r"^(?:summary|totals):\s*(\d+)", callgrind_out, re.MULTILINE)
    if found is None:
        raise ValueError("no summary or totals line: not a callgrind output file")
    return int(found.group(1))


def inclusive(annotated: str, function: str) -> int | None:
    """The inclusive count of ``function`` in ``callgrind_annotate --inclusive=yes`` output
    (its first line naming the function: the one without a caller's context)."""
    name = re.escape(function)
    found = re.search(rf"^\s*([\d,]+)\s+\([^)]*\)\s+\S*:{name}(?:\s|$)", annotated,
                      re.MULTILINE)
    return int(found.group(1).replace(",", "")) if found else None


def main(argv: list[str] | None = None) -> int:
    from bench.run import DEFAULT_CORPUS, downloads_aside

    ap = argparse.ArgumentParser(prog="python -m bench.work", description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["extract", "resolve", "chunk", "write"])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--step", type=int, default=6, help="extract, chunk: every STEP-th file")
    ap.add_argument("--instructions", action="store_true",
                    help="count the loop's instructions under callgrind (slow: ~50x)")
    ap.add_argument("--out", type=Path, default=None,
                    help="where callgrind writes (default: a temporary file, kept)")
    ap.add_argument("--no-parse-deadline", action="store_true",
                    help="parse every file however long it takes (set under callgrind)")
    args = ap.parse_args(argv)
    if args.no_parse_deadline:
        lift_parse_deadline()
    root = args.corpus.resolve()
    if not root.is_dir():
        raise SystemExit(f"no corpus at {root} (see ../shared/corpus/get-corpus.sh)")
    downloads_aside(root)
    if args.instructions:
        out = args.out
        if out is None:
            fd, name = tempfile.mkstemp(prefix=f"knoxidx-{args.what}-", suffix=".callgrind")
            os.close(fd)
            out = Path(name)
        counted = instructions([args.what, "--corpus", str(root), "--step", str(args.step)],
                               out)
        print(" ".join(f"{k} {v:,}" if isinstance(v, int) else f"{k} {v}"
                       for k, v in counted.items()))
        return 0
    work = {"extract": lambda: extract_work(root, args.step), "chunk":
            lambda: chunk_work(root, args.step), "resolve": lambda: resolve_work(root),
            "write": lambda: _write_work_in_temp(root, args.step)}
    done = work[args.what]()
    print(" ".join(f"{k} {v}" for k, v in done.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
