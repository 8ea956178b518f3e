"""Slow clients against a real ``knoxidx serve`` on 127.0.0.1: connections that never finish
their request head (slowloris) or body are closed after the configured deadline, and while
hundreds of them are open a valid client is still answered."""

from __future__ import annotations

import json
import socket
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.agent.support import Process, knoxidx_command

SLOW_CONNECTIONS = 300
# what a client waits for an answer or a close: far above the server's deadlines under test, as
# a loaded machine may deschedule the server for seconds; reached only when a test fails
PATIENCE_S = 60.0
PARTIAL_HEAD = b"GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "


def _serve(root: Path, *extra: str, fd_limit: int | None = None) -> tuple[Process, str, int]:
    command = knoxidx_command("serve", str(root), "--port", "0", *extra)
    if fd_limit is not None:  # the process's own descriptor limit, as a small server has
        command = [sys.executable, "-c",
                   "import resource, sys, os; "
                   f"resource.setrlimit(resource.RLIMIT_NOFILE, ({fd_limit}, {fd_limit})); "
                   "os.execv(sys.argv[1], sys.argv[1:])", *command]
    proc = Process(command)
    url = proc.expect(r"on (http://\S+?:\d+)", timeout=60).group(1)
    return proc, url, int(url.rsplit(":", 1)[1])


def _open_slow(port: int, count: int) -> list[socket.socket]:
    socks = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=PATIENCE_S)
        sock.sendall(PARTIAL_HEAD)
        socks.append(sock)
    return socks


def _closed_by_server(sock: socket.socket) -> tuple[bool, bytes]:
    """(closed, what it sent that was not read yet), without waiting."""
    sock.setblocking(False)
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except BlockingIOError:
        return False, data
    except OSError:  # reset
        return True, data
    return True, data


def _wait_all_closed(socks: list[socket.socket], timeout: float) -> list[bytes]:
    """What each connection received before the server closed it (all must be closed)."""
    received = {id(s): b"" for s in socks}
    open_socks = {id(s): s for s in socks}
    deadline = time.monotonic() + timeout
    while open_socks and time.monotonic() < deadline:
        for key, sock in list(open_socks.items()):
            closed, data = _closed_by_server(sock)
            received[key] += data
            if closed:
                del open_socks[key]
        time.sleep(0.05)
    assert not open_socks, f"{len(open_socks)} of {len(socks)} slow connections still open"
    return list(received.values())


def _status_of(answer: bytes) -> int | None:
    return int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else None


def test_slow_request_heads_are_closed_and_valid_clients_answered(shared_repo: Path) -> None:
    proc, url, port = _serve(shared_repo, "--header-timeout", "1")
    socks: list[socket.socket] = []
    try:
        socks = _open_slow(port, SLOW_CONNECTIONS)
        with httpx.Client(base_url=url, timeout=PATIENCE_S) as client:
            for _ in range(5):
                assert client.get("/symbols", params={"q": "parse_config"}).status_code == 200
        # a client trickling its head byte by byte gets no more time than one that stops
        trickler = socket.create_connection(("127.0.0.1", port), timeout=PATIENCE_S)
        trickler.sendall(b"GET /status HTTP/1.1\r\n")
        socks.append(trickler)  # closed with the others at the end
        # a byte every 0.1 s for ever, were each byte to restart the 1 s deadline; the time
        # allowed is long, as the server may be descheduled for a while on a loaded machine
        deadline = time.monotonic() + PATIENCE_S
        while time.monotonic() < deadline:
            if _closed_by_server(trickler)[0]:
                break
            try:
                trickler.sendall(b"X")
            except OSError:  # the server closed it between the check and the byte
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"a head trickled in for {PATIENCE_S:g} s was not closed after 1 s")
        socks.remove(trickler)
        answers = _wait_all_closed(socks, timeout=PATIENCE_S)
        timed_out = [a for a in answers if _status_of(a) == 408]
        assert len(timed_out) == SLOW_CONNECTIONS
        body = json.loads(timed_out[0].split(b"\r\n\r\n", 1)[1])
        assert body["error"]["code"] == "request_timeout"
    finally:
        for sock in socks:
            sock.close()
        proc.stop()


def test_connection_cap_keeps_descriptors_for_valid_clients(shared_repo: Path) -> None:
    """300 slow connections against a process allowed 256 files: before, they used up its
    descriptors and valid clients were reset; the cap (here 256 - 128 reserved) makes the
    longest-waiting slow connection give way instead."""
    proc, url, port = _serve(shared_repo, "--header-timeout", "60", fd_limit=256)
    socks: list[socket.socket] = []
    try:
        socks = _open_slow(port, SLOW_CONNECTIONS)
        with httpx.Client(base_url=url, timeout=PATIENCE_S) as client:
            for _ in range(5):
                assert client.get("/status").status_code == 200
        evicted = sum(1 for s in socks if _closed_by_server(s)[0])
        assert evicted >= SLOW_CONNECTIONS - 128
    finally:
        for sock in socks:
            sock.close()
        proc.stop()


def test_a_body_that_never_completes_is_closed(shared_repo: Path) -> None:
    proc, url, port = _serve(shared_repo, "--body-timeout", "1")
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=PATIENCE_S)
        sock.sendall(b"POST /context HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"qu")
        _wait_all_closed([sock], timeout=PATIENCE_S)
        with httpx.Client(base_url=url, timeout=PATIENCE_S) as client:
            assert client.get("/health").status_code == 200
        assert not [line for name, line in proc.drain() if "Traceback" in line]
    finally:
        proc.stop()
