"""What one slow or idle HTTP client may hold: bounded time, bounded connections.

uvicorn times out neither a request head that never completes nor a body that trickles in
(its only timer is keep-alive, armed after a response), and it keeps every connection it
accepts. A few hundred connections that each send half a request head (slowloris) therefore
used up the process's file descriptors for good and starved every other client; the bearer
token cannot help, as it is checked once a head is complete.

:func:`guarded_protocol` wraps uvicorn's HTTP protocol so that a connection whose request
head is not complete within ``head_timeout_s`` of its first byte (or of the connection) gets a
408 and is closed, and so is one whose body is not complete ``body_timeout_s`` after its head.
At most ``max_connections`` stay open: past it, the connection that has waited longest for
its head makes room (a real client sends its head at once, so that is the slowest client),
and when every connection is busy with a request the new one gets a 503.
"""

from __future__ import annotations

import asyncio
import json
import resource
import time
from dataclasses import dataclass
from typing import Any

DEFAULT_HEAD_TIMEOUT_S = 10.0
DEFAULT_BODY_TIMEOUT_S = 30.0
DEFAULT_MAX_CONNECTIONS = 512
# file descriptors kept for the server's own use (index files of each reader thread, the
# watcher's inotify and pipes, the listening socket) whatever the clients hold
FD_RESERVE = 128


@dataclass(frozen=True, slots=True)
class ClientLimits:
    head_timeout_s: float = DEFAULT_HEAD_TIMEOUT_S
    body_timeout_s: float = DEFAULT_BODY_TIMEOUT_S
    max_connections: int = DEFAULT_MAX_CONNECTIONS


def connection_cap(requested: int) -> int:
    """``requested``, or fewer when the process may not open that many files: the soft
    descriptor limit is raised toward the hard one first, and ``FD_RESERVE`` is kept free."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = requested + FD_RESERVE
    if soft != resource.RLIM_INFINITY and soft < needed:
        raised = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
            soft = raised
        except (ValueError, OSError):  # not allowed here: live within the current limit
            pass
    if soft == resource.RLIM_INFINITY:
        return requested
    return max(1, min(requested, soft - FD_RESERVE))


def guarded_protocol(limits: ClientLimits) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol class (httptools, else h11) with ``limits`` enforced."""
    from uvicorn.protocols.http.auto import AutoHTTPProtocol

    return type("GuardedHTTPProtocol", (_ReadDeadlines, AutoHTTPProtocol), {
        "head_timeout_s": limits.head_timeout_s,
        "body_timeout_s": limits.body_timeout_s,
        "max_connections": connection_cap(limits.max_connections),
    })


class _ReadDeadlines(asyncio.Protocol):
    """Mixed in before uvicorn's HttpToolsProtocol or H11Protocol; reads only what both keep:
    ``cycle`` (the current request, replaced when a head is complete), ``transport``,
    ``connections`` (every open connection of the server) and ``loop``."""

    head_timeout_s: float
    body_timeout_s: float
    max_connections: int
    cycle: Any
    transport: Any
    connections: set[Any]
    loop: asyncio.AbstractEventLoop

    _phase = ""  # "head" or "body" while a deadline runs, else ""
    _since = 0.0  # when the head phase began (the oldest makes room at the cap)
    _timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        if len(self.connections) > self.max_connections and not self._make_room():
            transport.write(_raw_error(503, "Service Unavailable", "too_many_connections",
                                       "the server has as many connections as it takes; "
                                       "try again shortly"))
            transport.close()
            return
        self._await_head()

    def data_received(self, data: bytes) -> None:
        if not self._phase and (self.cycle is None or self.cycle.response_complete):
            self._await_head()  # the next request on a kept-alive connection
        request = self.cycle
        super().data_received(data)
        if self._phase == "head" and self.cycle is not request:  # a head is complete
            if self.cycle.more_body:
                self._arm("body", self.body_timeout_s)
            else:
                self._disarm()
        elif self._phase == "body" and not self.cycle.more_body:
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _await_head(self) -> None:
        self._since = time.monotonic()
        self._arm("head", self.head_timeout_s)

    def _arm(self, phase: str, seconds: float) -> None:
        self._disarm()
        self._phase = phase
        self._timer = self.loop.call_later(seconds, self._expire)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._phase = ""

    def _expire(self) -> None:
        phase = self._phase
        self._disarm()
        if self.transport.is_closing():
            return
        if phase == "head":  # no response of this request can be under way: say why
            self.transport.write(_raw_error(
                408, "Request Timeout", "request_timeout",
                f"the request head did not arrive within {self.head_timeout_s:g} s"))
        self.transport.close()

    def _make_room(self) -> bool:
        """Close the connection that has waited longest for its request head; False when
        every other connection is busy with a request."""
        waiting = [c for c in self.connections
                   if c is not self and getattr(c, "_phase", "") == "head"]
        if not waiting:
            return False
        min(waiting, key=lambda c: c._since)._expire()
        return True


def _raw_error(status: int, reason: str, code: str, message: str) -> bytes:
    """A whole HTTP/1.1 response in the API's error shape, written before any request was
    parsed (so not through the ASGI app)."""
    body = json.dumps({"error": {"code": code, "message": message, "status": status}}).encode()
    head = (f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n")
    return head.encode("ascii") + body
