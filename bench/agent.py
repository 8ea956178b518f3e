"""``python -m bench.agent latency|load [CORPUS_DIR]``: the agent side, measured through HTTP.

- ``latency``: ``knoxidx serve --watch`` on a copy of the corpus; each round edits one of
  several files (a new function, found with ``GET /symbols``, or a body-only edit, found with
  a lexical ``GET /search``; saved by a plain write or an editor-style atomic rename) and
  polls every 10 ms until the API shows it: save-to-visible time, debounce included. Rounds
  are spaced so each starts with the watcher idle.
- ``load``: ``knoxidx serve`` (no watcher) on the copy; this process is the client: N threads,
  each with a kept-alive connection, send a 50/50 mix of ``/symbols?q=NAME`` and
  ``/callers?symbol=QUALIFIED`` (names sampled from the index, fixed seed) for a bounded time;
  requests/s and latency percentiles (client: the standard library's http.client).

The corpus is copied (mtimes kept, index included when there is one) into a temporary
directory, so the shared corpus is never written. Default corpus:
``~/.cache/knoxidx-corpus/python/django``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from bench.http_load import closed_loop, percentile

DEFAULT_CORPUS = Path.home() / ".cache" / "knoxidx-corpus" / "python" / "django"
PROBE_FILES = ("utils/text.py", "db/models/query.py", "http/request.py", "forms/fields.py",
               "template/base.py", "core/handlers/base.py")


def summary(ms: list[float]) -> dict[str, float]:
    return {"n": len(ms), "p50": round(percentile(ms, 0.5), 1),
            "p95": round(percentile(ms, 0.95), 1), "p99": round(percentile(ms, 0.99), 1),
            "mean": round(statistics.fmean(ms), 1) if ms else float("nan"),
            "max": round(max(ms), 1) if ms else float("nan")}


def copy_corpus(corpus: Path, into: Path) -> Path:
    """The corpus with its own index (if any), without nested projects' indexes or the
    fetch scripts' downloads: the whole corpus directory works as well as one project."""
    target = into / corpus.name

    def ignore(directory: str, names: list[str]) -> set[str]:
        skip = {"write.lock", "centrality.pickle", ".downloads"}
        if Path(directory) != corpus:
            skip.add(".knoxidx")
        return skip & set(names)

    shutil.copytree(corpus, target, symlinks=True, copy_function=shutil.copy2, ignore=ignore)
    # builds the index, or brings a copied one up to date (cheap: mtimes were kept)
    subprocess.run(_knoxidx("index", "--no-embed", str(target)), check=True,
                   stdout=subprocess.DEVNULL)
    return target


def _knoxidx(*args: str) -> list[str]:
    return [sys.executable, "-c", "from knoxidx.cli import run; run()", *args]


class Server:
    def __init__(self, root: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(_knoxidx("serve", str(root), "--port", "0", *extra),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True)
        self.log: list[str] = []
        deadline = time.monotonic() + 120
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line.rstrip())
            match = re.search(r"on (http://\S+?:\d+)", line)
            if match:
                self.url = match.group(1)
                break
            if time.monotonic() > deadline:
                raise RuntimeError("server did not start")
        else:
            raise RuntimeError("server exited: " + "\n".join(self.log))
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line.rstrip())

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(30)


def latency(root: Path, rounds: int, debounce_ms: int) -> dict[str, Any]:
    import httpx

    server = Server(root, "--watch", "--debounce-ms", str(debounce_ms))
    results: list[float] = []
    by_kind: dict[str, list[float]] = {}
    try:
        with httpx.Client(base_url=server.url, timeout=30) as client:
            _wait_idle(client)
            probes = probe_files(root)
            for i in range(rounds):
                rel = probes[i % len(probes)]
                # alternate: a new function (the file's interface changes: its dependents
                # are re-resolved) or a body-only edit; a plain write or an atomic rename
                edit = ("new-function", "body-edit")[i % 2]
                save = ("write", "atomic")[(i // 2) % 2]
                token = f"kxprobe{os.getpid()}x{i}"
                path = root / rel
                text = path.read_text(encoding="utf-8")
                text += (f"\n\ndef {token}():\n    return {i}\n" if edit == "new-function"
                         else f"\n# {token}\n")
                t0 = time.perf_counter()
                if save == "atomic":
                    tmp = path.with_name(f".{path.name}.{i}.tmp")
                    tmp.write_text(text, encoding="utf-8")
                    os.replace(tmp, path)
                else:
                    path.write_text(text, encoding="utf-8")
                while not _visible(client, edit, token):
                    if time.perf_counter() - t0 > 30:
                        raise RuntimeError(f"{token} ({edit}, {save}, {rel}) never became "
                                           "visible; server log:\n" + "\n".join(server.log[-8:]))
                    time.sleep(0.01)
                ms = (time.perf_counter() - t0) * 1000
                results.append(ms)
                by_kind.setdefault(f"{edit}/{save}", []).append(ms)
                by_kind.setdefault(edit, []).append(ms)
                _wait_idle(client)
                time.sleep(0.3)
    finally:
        rc = server.stop()
    batches = [line for line in server.log if "batch" in line]
    return {"debounce_ms": debounce_ms, "poll_ms": 10, "save_to_visible_ms": summary(results),
            "by_kind": {k: summary(v) for k, v in sorted(by_kind.items())},
            "batch_log_sample": batches[-4:], "server_exit": rc}


def probe_files(root: Path) -> list[str]:
    """PROBE_FILES as found under ``root``: django's own paths, or the same files inside a
    larger corpus (``python/django/utils/text.py``)."""
    found = []
    for suffix in PROBE_FILES:
        hits = [root / suffix] if (root / suffix).exists() else sorted(
            h for h in root.rglob(suffix)
            if not any(part.startswith(".") for part in h.relative_to(root).parts))
        if hits:
            found.append(hits[0].relative_to(root).as_posix())
    if not found:
        raise SystemExit(f"none of {PROBE_FILES} under {root}: use django or a corpus with it")
    return found


def _visible(client: Any, edit: str, token: str) -> bool:
    if edit == "new-function":
        found = client.get("/symbols", params={"q": token}).json()["symbols"]
        return bool(found) and found[0]["name"] == token
    # k=5: earlier rounds' tokens share most of this one's word parts and may rank first
    found = client.get("/search", params={"q": token, "mode": "lexical", "k": 5}).json()
    return any(token in r["snippet"] for r in found["results"])


def _wait_idle(client: Any) -> None:
    deadline = time.monotonic() + 300
    while client.get("/status").json()["phase"] != "idle":
        if time.monotonic() > deadline:
            raise RuntimeError("watcher never became idle")
        time.sleep(0.02)


def load(root: Path, seconds: float, threads: int, workers: int) -> dict[str, Any]:
    from knoxidx.index import Index

    rng = random.Random(7)
    with Index.open_reader(root) as idx:
        functions = [n for n in idx.q.all_nodes() if n["kind"] == "Function"]
    sample = rng.sample(functions, min(400, len(functions)))
    urls = []
    for node in sample:
        urls.append(("/symbols", {"q": node["name"]}))
        urls.append(("/callers", {"symbol": node["qualified_name"]}))
    rng.shuffle(urls)
    server = Server(root, "--workers", str(workers))
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    requests = [f"{path}?{urlencode(params)}" for path, params in urls]
    try:
        result = closed_loop(host, int(port), requests, threads, seconds)
    finally:
        rc = server.stop()
    everything = result.latencies_ms
    return {"seconds": round(result.seconds, 2), "client_threads": threads,
            "server_readers": workers, "requests": len(everything),
            "requests_per_s": round(len(everything) / result.seconds, 1),
            "latency_ms": summary(everything), "statuses": result.statuses,
            "connection_errors": len(result.errors), "server_exit": rc}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.agent", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("latency", "load", "both"))
    ap.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--debounce-ms", type=int, default=150)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--threads", type=int, default=8, help="client threads (load)")
    ap.add_argument("--workers", type=int, default=4, help="server reader threads (load)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="knoxidx-bench-") as tmp:
        root = copy_corpus(args.corpus.expanduser(), Path(tmp))
        out: dict[str, Any] = {"corpus": str(args.corpus), "cores": os.cpu_count()}
        if args.what in ("latency", "both"):
            out["latency"] = latency(root, args.rounds, args.debounce_ms)
        if args.what in ("load", "both"):
            out["load"] = load(root, args.seconds, args.threads, args.workers)
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
