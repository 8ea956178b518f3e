"""The watch daemon writing while 8 readers hammer the HTTP API.

Two processes: ``knoxidx serve --watch`` (the watcher writes on its own connection, the
server's reader threads read on theirs) and this one, where a driver thread rewrites a pair of
files generation after generation and 8 reader threads send requests without pause, each on
its own kept-alive connection.

The pair is the observable invariant. Generation ``g`` puts ``kxpair_a`` in ``kxpair/a.py``
and ``kxpair_b`` (which calls it) in ``kxpair/b.py``, both after ``g % 40`` blank lines, so
their start lines say which generation a reader saw. The driver writes both under
``.git/index.lock`` (the watcher holds a batch while git works), so they land in one batch;
it lifts the lock once the watcher's ``/status`` shows both paths pending (events can lag the
writes on a busy machine) and writes the next generation once the previous one is visible. A reader that ever sees the
two at different lines, in one ``/symbols`` answer or one ``/callers`` answer (several
queries: one snapshot per request), has seen a half-applied batch. Every other request is a
``/symbols``, ``/callers`` or ``/search`` on names sampled from the index. Any status but 200
or a connection error is a failed request.
"""

from __future__ import annotations

import http.client
import json
import random
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from bench.reliability.common import Outcome, copy_tree, graph_of, run_cli
from bench.reliability.daemon import Daemon
from knoxidx.update.verify import clean_graph

PAIR_MODULO = 40


def write_pair(root: Path, generation: int,
               before_unlock: Callable[[], None] | None = None) -> None:
    pad = "\n" * (generation % PAIR_MODULO)
    pkg = root / "kxpair"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    lock = root / ".git" / "index.lock"
    lock.parent.mkdir(exist_ok=True)
    lock.write_text("")
    try:
        (pkg / "a.py").write_text(f"{pad}def kxpair_a():\n    return {generation}\n")
        (pkg / "b.py").write_text(f"from kxpair.a import kxpair_a\n{pad}def kxpair_b():\n"
                                  f"    return kxpair_a()\n")
        if before_unlock is not None:
            before_unlock()
    finally:
        lock.unlink()


def pair_lines(answer: Any, kind: str) -> tuple[int, int] | None:
    """(line of kxpair_a, line of kxpair_b) in one answer, relative to each file's header."""
    if kind == "symbols":
        lines = {h["name"]: h["start_line"] for h in answer["symbols"]}
        if set(lines) != {"kxpair_a", "kxpair_b"}:
            return None
        return lines["kxpair_a"], lines["kxpair_b"] - 1  # b.py has its import line first
    callers = [h for h in answer["callers"] if h["name"] == "kxpair_b"]
    if len(callers) != 1:
        return None
    return answer["symbol"]["start_line"], callers[0]["start_line"] - 1


class Readers:
    def __init__(self, url: str, requests: list[tuple[str, str]], threads: int) -> None:
        host, port = url.removeprefix("http://").rsplit(":", 1)
        self.host, self.port = host, int(port)
        self.requests = requests
        self.threads = threads
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.count = 0
        self.failed: list[str] = []
        self.torn: list[str] = []
        self.pair_checks = 0

    def run(self, slot: int) -> None:
        rng = random.Random(slot)
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        count = checks = 0
        while not self.stop.is_set():
            roll = rng.random()
            if roll < 0.25:
                kind, target = "symbols", "/symbols?q=kxpair_"
            elif roll < 0.5:
                kind, target = "callers", "/callers?symbol=kxpair.a.kxpair_a"
            else:
                kind, target = rng.choice(self.requests)
            try:
                conn.request("GET", target)
                response = conn.getresponse()
                body = response.read()
            except (OSError, http.client.HTTPException) as exc:
                with self.lock:
                    self.failed.append(f"{target}: {type(exc).__name__}: {exc}")
                conn.close()
                conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
                continue
            count += 1
            if response.status != 200:
                with self.lock:
                    self.failed.append(f"{target}: HTTP {response.status} {body[:200]!r}")
                continue
            if kind in ("symbols", "callers"):
                checks += 1
                lines = pair_lines(json.loads(body), kind)
                if lines is None or lines[0] != lines[1]:
                    with self.lock:
                        self.torn.append(f"{target}: {lines} {body[:300]!r}")
        conn.close()
        with self.lock:
            self.count += count
            self.pair_checks += checks


def sample_requests(root: Path, rng: random.Random, n: int = 300) -> list[tuple[str, str]]:
    from knoxidx.index import Index

    with Index.open_reader(root) as idx:
        nodes = list(idx.q.all_nodes())
    functions = [node for node in nodes if node["kind"] == "Function"]
    qualified: dict[str, int] = {}  # over every kind: a class and a function may share one
    for node in nodes:
        qualified[node["qualified_name"]] = qualified.get(node["qualified_name"], 0) + 1
    chosen = rng.sample(functions, min(n, len(functions)))
    out: list[tuple[str, str]] = []
    for node in chosen:
        out.append(("other", "/symbols?" + urlencode({"q": node["name"]})))
        if qualified[node["qualified_name"]] == 1:
            out.append(("other", "/callers?" + urlencode({"symbol": node["qualified_name"]})))
        words = node["name"].replace("_", " ").strip() or node["name"]
        out.append(("other", "/search?" + urlencode({"q": words, "k": 5})))
    return out


def concurrency(corpus: Path, seconds: float, *, readers: int = 8, seed: int = 4,
                workdir: Path | None = None, min_generations: int = 1) -> Outcome:
    """``seconds`` of generations, and at least ``min_generations`` of them however slow."""
    outcome = Outcome(f"watcher writing, {readers} HTTP readers ({corpus.name})")
    base = Path(tempfile.mkdtemp(prefix="knoxidx-concurrency-", dir=workdir))
    root = copy_tree(corpus, base / corpus.name)
    write_pair(root, 0)
    built = run_cli("index", str(root))
    if built.returncode != 0:
        outcome.fail(f"the first build failed: {built.stderr[-300:]}")
        return outcome
    server = Daemon("serve", str(root), "--port", "0", "--watch", "--debounce-ms", "50")
    generations = 0
    visible_ms: list[float] = []
    try:
        url = server.expect(r"on (http://\S+?:\d+)").group(1)
        pool = Readers(url, sample_requests(root, random.Random(seed)), readers)
        probe = http.client.HTTPConnection(pool.host, pool.port, timeout=30)

        def watcher_state() -> dict[str, Any]:
            probe.request("GET", "/status")
            return json.loads(probe.getresponse().read())["watcher"] or {}

        def both_seen() -> None:
            """Hold git's lock until the watcher has seen both files change: under load its
            file events can arrive after the lock is gone, and the pair would be split over
            two batches (each one transaction, but the pair no longer one batch)."""
            deadline = time.monotonic() + 30
            while watcher_state().get("pending_paths", 0) < 2:
                if time.monotonic() > deadline:
                    raise RuntimeError("the watcher never saw the pair change")
                time.sleep(0.005)

        deadline = time.monotonic() + 300
        while watcher_state().get("phase") != "idle" and time.monotonic() < deadline:
            time.sleep(0.05)
        threads = [threading.Thread(target=pool.run, args=(i,)) for i in range(readers)]
        t0 = time.monotonic()
        for thread in threads:
            thread.start()
        # the driver: one generation after another
        while time.monotonic() - t0 < seconds or generations < min_generations:
            generations += 1
            write_pair(root, generations, both_seen)
            wrote = time.monotonic()
            want = generations % PAIR_MODULO + 1
            while time.monotonic() - wrote < 60:
                probe.request("GET", "/symbols?q=kxpair_")
                answer = json.loads(probe.getresponse().read())
                if any(h["name"] == "kxpair_b" and h["start_line"] == want + 1
                       for h in answer["symbols"]):
                    break
                time.sleep(0.005)
            else:
                outcome.fail(f"generation {generations} never became visible")
                break
            visible_ms.append((time.monotonic() - wrote) * 1000)
        pool.stop.set()
        for thread in threads:
            thread.join(60)
        elapsed = time.monotonic() - t0
        probe.close()
    finally:
        server_rc = server.stop()
    outcome.trials = pool.count
    outcome.failures += [f"failed request: {f}" for f in pool.failed[:10]]
    outcome.failures += [f"half-applied batch seen: {t}" for t in pool.torn[:10]]
    if server_rc != 0:
        outcome.fail(f"the server (and its watcher) exited with {server_rc}")
    if graph_of(root) != clean_graph(root):
        outcome.fail("after the run the index differs from a clean rebuild")
    shutil.rmtree(base, ignore_errors=True)
    visible_ms.sort()
    outcome.figures = {
        "corpus": str(corpus), "seconds": round(elapsed, 1), "readers": readers,
        "requests": pool.count, "requests_per_s": round(pool.count / elapsed, 1),
        "failed_requests": len(pool.failed), "pair_checks": pool.pair_checks,
        "half_applied_seen": len(pool.torn), "batches_written": generations,
        "save_to_visible_ms_p50": round(visible_ms[len(visible_ms) // 2], 1)
        if visible_ms else None,
    }
    return outcome
