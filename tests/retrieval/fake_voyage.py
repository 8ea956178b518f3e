"""A fake Voyage API on 127.0.0.1 for driving the real ``voyageai`` client through faults."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import xxhash

HANG_LIMIT_S = 120.0  # the longest a "hang" holds a connection its client never closes


def fake_vector(text: str, dimension: int) -> list[float]:
    seed = xxhash.xxh64_intdigest(text.encode())
    return [((seed >> (i % 60)) & 0xFF) / 255.0 + 0.01 * i for i in range(dimension)]


class FakeVoyage:
    """Queue actions with ``then``; each request takes the next one (default: answer properly).

    Actions: ``("ok",)``, ``("status", code, headers)``, ``("sleep", seconds)``,
    ``("hang",)`` (no answer until the client gives up and closes the connection: a timeout
    that costs the client's own timeout and no more, whatever the machine's speed),
    ``("raw", code, body_bytes)`` (a body that is not what the client expects), ``("reset",)``
    (the connection is dropped with a TCP RST, no answer at all).
    """

    def __init__(self) -> None:
        self.actions: deque[tuple[Any, ...]] = deque()
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.headers: list[dict[str, str]] = []  # each request's headers, in order
        self.answered: list[str] = []  # texts whose embedding request was answered properly
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                fake.requests.append((self.path, body))
                fake.headers.append(dict(self.headers.items()))
                action = fake.actions.popleft() if fake.actions else ("ok",)
                try:
                    fake.respond(self, action, body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def then(self, *actions: tuple[Any, ...]) -> FakeVoyage:
        self.actions.extend(actions)
        return self

    def embedded_texts(self) -> list[str]:
        return list(self.answered)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def respond(
        self, handler: BaseHTTPRequestHandler, action: tuple[Any, ...], body: dict[str, Any]
    ) -> None:
        kind = action[0]
        if kind == "reset":  # SO_LINGER 0: close() sends RST instead of FIN
            import socket
            import struct

            handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                          struct.pack("ii", 1, 0))
            handler.close_connection = True
            handler.connection.close()
            return
        if kind == "sleep":
            time.sleep(action[1])
            return
        if kind == "hang":  # until the client closes its end (bounded, should it never)
            handler.connection.settimeout(HANG_LIMIT_S)
            try:
                handler.connection.recv(1)
            except OSError:
                pass
            handler.close_connection = True
            return
        if kind == "status":
            self.send(
                handler,
                action[1],
                json.dumps({"detail": f"fake {action[1]}"}).encode(),
                action[2] if len(action) > 2 else {},
            )
            return
        if kind == "raw":
            self.send(handler, action[1], action[2], {})
            return
        if handler.path.endswith("/embeddings"):
            dimension = body.get("output_dimension") or 1024
            data = [
                {"object": "embedding", "embedding": fake_vector(t, dimension), "index": i}
                for i, t in enumerate(body["input"])
            ]
            payload = {
                "object": "list",
                "data": data,
                "model": body["model"],
                "usage": {"total_tokens": 10},
            }
            self.answered.extend(body["input"])
        else:
            query = set(body["query"].lower().split())
            scores = [
                len(query & set(d.lower().split())) / (1 + len(query)) for d in body["documents"]
            ]
            order = sorted(range(len(scores)), key=lambda i: -scores[i])[
                : body.get("top_k") or len(scores)
            ]
            payload = {
                "object": "list",
                "data": [{"index": i, "relevance_score": scores[i]} for i in order],
                "model": body["model"],
                "usage": {"total_tokens": 10},
            }
        self.send(handler, 200, json.dumps(payload).encode(), {})

    @staticmethod
    def send(
        handler: BaseHTTPRequestHandler, code: int, body: bytes, headers: dict[str, str]
    ) -> None:
        handler.send_response(code)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        for key, value in headers.items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(body)


class Clock:
    """A clock the test moves by hand (``clock.now = 61``): the breaker's cool-down without
    waiting."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class HangingServer:
    """A Voyage endpoint on 127.0.0.1 that accepts every connection and never answers (a
    stuck proxy or server): the client waits for its timeout, the caller for its deadline."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.05)
        self.connections: list[socket.socket] = []
        self._stopping = threading.Event()
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections.append(conn)  # held open, never read from or answered

    def close(self) -> None:
        self._stopping.set()
        self.thread.join()
        for conn in self.connections:
            conn.close()
        self.sock.close()
