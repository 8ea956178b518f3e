"""A closed-loop HTTP load against a running ``knoxidx serve``, and the percentile it is read by.

Each client thread keeps one connection alive (the standard library's client: the least
client CPU per request, so the server gets most of the machine) and sends the next request as
soon as the last answer is read, until a deadline. Used by ``bench.agent`` and
``bench.reliability.load``.
"""

from __future__ import annotations

import http.client
import threading
import time
from dataclasses import dataclass, field


def percentile(values: list[float], q: float) -> float:
    """Linearly interpolated; NaN for no values."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    rank = (len(ordered) - 1) * q
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass
class LoadResult:
    seconds: float
    latencies_ms: list[float] = field(default_factory=list)
    by_path: dict[str, list[float]] = field(default_factory=dict)  # "/symbols" -> latencies
    statuses: dict[int, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # connection failures, reconnected after


def closed_loop(host: str, port: int, requests: list[str], clients: int,
                seconds: float) -> LoadResult:
    """``clients`` threads send GET ``requests`` (client k takes k, k + clients, ...) for
    ``seconds``. A connection that fails is recorded and replaced."""
    latencies: list[list[float]] = [[] for _ in range(clients)]
    result = LoadResult(seconds=0.0)
    lock = threading.Lock()
    stop_at = time.perf_counter() + seconds

    def client(slot: int) -> None:
        conn = http.client.HTTPConnection(host, port, timeout=30)
        statuses: dict[int, int] = {}
        by_path: dict[str, list[float]] = {}
        i = slot
        while time.perf_counter() < stop_at:  # bounded: ends after `seconds`
            target = requests[i % len(requests)]
            i += clients
            t0 = time.perf_counter()
            try:
                conn.request("GET", target)
                response = conn.getresponse()
                response.read()
            except (OSError, http.client.HTTPException) as exc:
                with lock:
                    result.errors.append(f"{target}: {exc}")
                conn.close()
                conn = http.client.HTTPConnection(host, port, timeout=30)
                continue
            ms = (time.perf_counter() - t0) * 1000
            latencies[slot].append(ms)
            by_path.setdefault(target.split("?")[0], []).append(ms)
            statuses[response.status] = statuses.get(response.status, 0) + 1
        conn.close()
        with lock:
            for code, n in statuses.items():
                result.statuses[code] = result.statuses.get(code, 0) + n
            for path, values in by_path.items():
                result.by_path.setdefault(path, []).extend(values)

    t0 = time.perf_counter()
    pool = [threading.Thread(target=client, args=(s,)) for s in range(clients)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    result.seconds = time.perf_counter() - t0
    result.latencies_ms = [ms for slot in latencies for ms in slot]
    return result
