"""Load: a bounded closed loop of mixed ``/symbols``, ``/callers`` and ``/search`` requests
from this process against ``knoxidx serve`` (another process) on 127.0.0.1.

``clients`` threads each keep one connection alive and send the next request as soon as the
last one is answered, for ``seconds``. The requests are names sampled from the index (fixed
seed), a third each kind; ``/search`` runs in the default hybrid mode (lexical, vector and
symbol fused: the vector part only over chunks already embedded). Figures: requests/s, latency
percentiles, statuses. Target (issue 6): >= 200 requests/s with p99 < 200 ms for 60 s.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from bench.http_load import closed_loop, percentile
from bench.reliability.common import Outcome, knoxidx_command
from bench.reliability.concurrency import sample_requests
from bench.reliability.daemon import Daemon


def copy_with_index(corpus: Path, into: Path) -> Path:
    """A private copy, the corpus's index included when it has one (brought up to date)."""
    target = into / corpus.name
    shutil.copytree(corpus, target, symlinks=True, copy_function=shutil.copy2,
                    ignore=shutil.ignore_patterns("write.lock"))
    subprocess.run(knoxidx_command("index", str(target)), check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return target


def load(corpus: Path, seconds: float, *, clients: int = 8, server_readers: int = 4,
         seed: int = 7, workdir: Path | None = None, min_rps: float = 200.0,
         max_p99_ms: float = 200.0) -> Outcome:
    outcome = Outcome(f"HTTP load, mixed symbols/callers/search ({corpus.name})")
    base = Path(tempfile.mkdtemp(prefix="knoxidx-load-", dir=workdir))
    try:
        root = copy_with_index(corpus, base)
        requests = [target for _, target in sample_requests(root, random.Random(seed))]
        random.Random(seed).shuffle(requests)
        server = Daemon("serve", str(root), "--port", "0", "--workers", str(server_readers))
        try:
            url = server.expect(r"on (http://\S+?:\d+)").group(1)
            host, port = url.removeprefix("http://").rsplit(":", 1)
            result = closed_loop(host, int(port), requests, clients, seconds)
        finally:
            server_rc = server.stop()
    finally:
        shutil.rmtree(base, ignore_errors=True)
    everything = result.latencies_ms
    rps = len(everything) / result.seconds
    p99 = percentile(everything, 0.99)
    outcome.trials = len(everything)
    bad = {code: n for code, n in result.statuses.items() if code != 200}
    if result.errors or bad:
        outcome.fail(f"{len(result.errors)} connection errors, statuses {bad}: "
                     f"{result.errors[:3]}")
    if server_rc != 0:
        outcome.fail(f"the server exited with {server_rc}")
    outcome.figures = {
        "corpus": str(corpus), "seconds": round(result.seconds, 1), "clients": clients,
        "server_readers": server_readers, "requests": len(everything),
        "requests_per_s": round(rps, 1),
        "latency_ms": {f"p{int(q * 100)}": round(percentile(everything, q), 1)
                       for q in (0.5, 0.95, 0.99)},
        "p99_ms_by_kind": {k: round(percentile(v, 0.99), 1)
                           for k, v in sorted(result.by_path.items())},
        "statuses": result.statuses,
        "target_met": rps >= min_rps and p99 < max_p99_ms,
    }
    return outcome


def describe(figures: dict[str, Any]) -> str:
    lat = figures["latency_ms"]
    return (f"{figures['requests_per_s']} req/s, p50 {lat['p50']} ms, p99 {lat['p99']} ms "
            f"over {figures['seconds']} s ({figures['requests']} requests)")
