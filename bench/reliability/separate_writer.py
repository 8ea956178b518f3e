"""``knoxidx index`` run again and again, as its own process, on a changing tree while 8
readers hammer the HTTP API of a plain ``knoxidx serve`` (no watcher in the server).

Three processes: the server (one read-only connection per reader thread), this one (the
driver and the 8 reader threads, each on its own kept-alive connection) and, one after
another, the writers. Each generation writes the pair of :mod:`.concurrency` (so a reader
can tell a half-applied update from a whole one), adds a module and deletes another (nodes,
edges and chunks come and go), then runs ``knoxidx index``. Every request is a ``/symbols``,
``/callers`` or ``/search``; any status but 200 or a connection error is a failed request
(before the fix of the open check, ~2 % of them: HTTP 500 ``corrupt_index``). After each
update the server must answer with it at once: a reader that lost its lock on the database
kept answering from a state the writer had deleted.
"""

from __future__ import annotations

import http.client
import json
import random
import shutil
import tempfile
import threading
import time
from pathlib import Path

from bench.reliability.common import Outcome, copy_tree, graph_of, run_cli
from bench.reliability.concurrency import (
    PAIR_MODULO,
    Readers,
    pair_lines,
    sample_requests,
    write_pair,
)
from bench.reliability.daemon import Daemon
from knoxidx.update.verify import clean_graph

CHURN_MODULES = 10  # kxchurn/c0.py ... c9.py: one written and one deleted per generation


def churn(root: Path, generation: int) -> None:
    """Write one module and delete another, so each update adds and removes definitions,
    calls and chunks besides the pair's."""
    folder = root / "kxchurn"
    folder.mkdir(exist_ok=True)
    (folder / "__init__.py").write_text("")
    n = generation % CHURN_MODULES
    body = "".join(f"\ndef churn_{n}_{k}():\n    return churn_{n}_{(k + 1) % 6}()\n"
                   for k in range(6))
    (folder / f"c{n}.py").write_text(f"# generation {generation}\n{body}")
    (folder / f"c{(n + CHURN_MODULES // 2) % CHURN_MODULES}.py").unlink(missing_ok=True)


def _answers_update(pool: Readers, generation: int) -> bool:
    """Whether the server answers with the pair ``generation`` wrote (readers see the last
    update, not a snapshot kept from before it)."""
    conn = http.client.HTTPConnection(pool.host, pool.port, timeout=30)
    try:
        conn.request("GET", "/symbols?q=kxpair_")
        lines = pair_lines(json.loads(conn.getresponse().read()), "symbols")
    finally:
        conn.close()
    return lines == (generation % PAIR_MODULO + 1,) * 2


def separate_writer(corpus: Path, seconds: float, *, readers: int = 8, seed: int = 4,
                    workdir: Path | None = None, min_updates: int = 1) -> Outcome:
    """``seconds`` of updates, and at least ``min_updates`` of them however slow they are."""
    outcome = Outcome(f"`knoxidx index` in its own process, {readers} HTTP readers "
                      f"({corpus.name})")
    base = Path(tempfile.mkdtemp(prefix="knoxidx-separate-writer-", dir=workdir))
    root = copy_tree(corpus, base / corpus.name)
    write_pair(root, 0)
    built = run_cli("index", str(root))
    if built.returncode != 0:
        outcome.fail(f"the first build failed: {built.stderr[-300:]}")
        return outcome
    server = Daemon("serve", str(root), "--port", "0", "--workers", str(readers))
    generations = 0
    update_s: list[float] = []
    stale = 0  # updates the server did not answer with once their writer had exited
    try:
        url = server.expect(r"on (http://\S+?:\d+)").group(1)
        pool = Readers(url, sample_requests(root, random.Random(seed)), readers)
        threads = [threading.Thread(target=pool.run, args=(i,)) for i in range(readers)]
        t0 = time.monotonic()
        for thread in threads:
            thread.start()
        # the writer: one process per update
        while time.monotonic() - t0 < seconds or generations < min_updates:
            generations += 1
            write_pair(root, generations)
            churn(root, generations)
            started = time.monotonic()
            written = run_cli("index", str(root))
            update_s.append(time.monotonic() - started)
            if written.returncode != 0:
                outcome.fail(f"update {generations} exited {written.returncode}: "
                             f"{written.stderr[-300:]}")
                break
            if not _answers_update(pool, generations):  # committed before the writer exited
                stale += 1
        pool.stop.set()
        for thread in threads:
            thread.join(60)
        elapsed = time.monotonic() - t0
    finally:
        server_rc = server.stop()
    outcome.trials = pool.count
    outcome.failures += [f"failed request: {f}" for f in pool.failed[:10]]
    outcome.failures += [f"half-applied update seen: {t}" for t in pool.torn[:10]]
    if stale:
        outcome.fail(f"{stale} of {generations} updates were not in the server's answers "
                     "once their writer had exited")
    if server_rc != 0:
        outcome.fail(f"the server exited with {server_rc}")
    if graph_of(root) != clean_graph(root):
        outcome.fail("after the run the index differs from a clean rebuild")
    shutil.rmtree(base, ignore_errors=True)
    update_s.sort()
    outcome.figures = {
        "corpus": str(corpus), "seconds": round(elapsed, 1), "readers": readers,
        "requests": pool.count, "requests_per_s": round(pool.count / elapsed, 1),
        "failed_requests": len(pool.failed), "pair_checks": pool.pair_checks,
        "half_applied_seen": len(pool.torn), "updates_written": generations,
        "stale_after_update": stale,
        "update_s_p50": round(update_s[len(update_s) // 2], 2) if update_s else None,
    }
    return outcome
