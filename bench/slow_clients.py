"""Slowloris against ``knoxidx serve``: how a valid client fares while slow clients hold
connections that never finish their request head.

``--slow`` connections each send half a request head, then one more header byte a second
(a trickle, so no idle timeout could catch them); one the server closes is opened again at
once, so the pressure never drops. Meanwhile one valid client sends ``/symbols`` requests,
each on a new connection, for ``--seconds``. Printed: the valid requests' latency (p50, max),
their failures, and how many slow connections the server closed (408 or evicted).

    python -m bench.slow_clients [--slow 300] [--seconds 30] [--header-timeout S]
                                 [--fd-limit N] [--repo PATH]
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench.http_load import percentile
from bench.reliability.common import FIXTURES, knoxidx_command, run_cli

PARTIAL_HEAD = b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


def _serve(repo: Path, header_timeout: float | None,
           fd_limit: int | None) -> tuple[subprocess.Popen[str], int]:
    command = knoxidx_command("serve", str(repo), "--port", "0")
    if header_timeout is not None:  # else the server's default (and a server without it runs)
        command += ["--header-timeout", str(header_timeout)]
    if fd_limit is not None:
        command = [sys.executable, "-c",
                   "import resource, sys, os; "
                   f"resource.setrlimit(resource.RLIMIT_NOFILE, ({fd_limit}, {fd_limit})); "
                   "os.execv(sys.argv[1], sys.argv[1:])", *command]
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            text=True)
    assert proc.stderr is not None
    for line in proc.stderr:
        match = re.search(r"on http://\S+?:(\d+)", line)
        if match:  # read on, or a full pipe would stop the server
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, int(match.group(1))
    raise SystemExit(f"the server did not start: rc={proc.wait()}")


class SlowClients:
    """``count`` trickling connections, each reopened when the server closes it."""

    def __init__(self, port: int, count: int) -> None:
        self.port, self.count = port, count
        self.closed_by_server = 0
        self.timed_out = 0  # of those, closed with a 408
        self.refused = 0  # could not even connect
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _open(self) -> socket.socket | None:
        try:
            sock = socket.create_connection(("127.0.0.1", self.port), timeout=2)
            sock.sendall(PARTIAL_HEAD)
        except OSError:
            self.refused += 1
            return None
        sock.setblocking(False)
        return sock

    def _run(self) -> None:
        socks = [s for s in (self._open() for _ in range(self.count)) if s is not None]
        while not self._stop.wait(1.0):
            alive = []
            for sock in socks:
                try:
                    data = sock.recv(4096)
                    closed = True  # the server answered (408) or closed: it is done with it
                    self.timed_out += data.startswith(b"HTTP/1.1 408")
                except BlockingIOError:
                    closed = False
                except OSError:
                    closed = True
                if not closed:
                    try:
                        sock.send(b"x")
                    except OSError:
                        closed = True
                if closed:
                    self.closed_by_server += 1
                    sock.close()
                    sock = self._open()  # type: ignore[assignment]
                if sock is not None:
                    alive.append(sock)
            socks = alive + [s for s in (self._open() for _ in range(self.count - len(alive)))
                             if s is not None]
        for sock in socks:
            sock.close()


def measure(repo: Path, slow: int, seconds: float, header_timeout: float | None,
            fd_limit: int | None) -> dict[str, object]:
    server, port = _serve(repo, header_timeout, fd_limit)
    attack = SlowClients(port, slow)
    latencies: list[float] = []
    failures: list[str] = []
    try:
        attack.start()
        time.sleep(2.0)  # every slow connection open before the first valid request
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            started = time.perf_counter()
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                conn.request("GET", "/symbols?q=main")
                response = conn.getresponse()
                response.read()
                conn.close()
                if response.status != 200:
                    failures.append(f"status {response.status}")
            except OSError as exc:
                failures.append(f"{type(exc).__name__}: {exc}")
            latencies.append((time.perf_counter() - started) * 1000)
            time.sleep(0.05)
    finally:
        attack.stop()
        server.terminate()
        server.wait(30)
    return {
        "slow_connections": slow, "seconds": seconds, "header_timeout_s": header_timeout,
        "fd_limit": fd_limit, "valid_requests": len(latencies),
        "valid_failed": len(failures), "failures": failures[:5],
        "latency_p50_ms": round(percentile(latencies, 0.5), 1),
        "latency_max_ms": round(max(latencies, default=float("nan")), 1),
        "slow_closed_by_server": attack.closed_by_server, "slow_408": attack.timed_out,
        "slow_refused": attack.refused,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--slow", type=int, default=300)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--header-timeout", type=float, default=None,
                        help="seconds (default: the server's own, 10)")
    parser.add_argument("--fd-limit", type=int, default=None,
                        help="the server's descriptor limit (default: inherited)")
    parser.add_argument("--repo", type=Path, default=None,
                        help="an indexed repository (default: the Python fixture, indexed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo = args.repo
        if repo is None:
            repo = Path(tmp) / "repo"
            shutil.copytree(FIXTURES / "python", repo)
            done = run_cli("index", str(repo), "--graph-only")
            if done.returncode != 0:
                raise SystemExit(done.stderr)
        print(json.dumps(measure(repo, args.slow, args.seconds, args.header_timeout,
                                 args.fd_limit), indent=1))


if __name__ == "__main__":
    main()
