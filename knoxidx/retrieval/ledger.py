"""The egress ledger: one JSON line per request made to a remote service, in
``.knoxidx/egress.jsonl``.

A line: ``{"ts", "day", "service", "endpoint", "model", "texts", "chunks", "bytes", "files",
"masked"}`` — ``bytes`` counts the UTF-8 text sent (not HTTP framing), ``files`` the repository
files the texts came from, ``masked`` the secrets masked by kind. Days are UTC.

Why a file and not the index database: requests are made by readers too (a search embeds its
query, an HTTP server reranks), which must not take the index's single-writer lock. Appends are
safe across processes and threads: each is one ``write`` of a whole line to a file opened with
``O_APPEND``, under an exclusive ``flock``; a line torn by a crash is closed by the next writer
and skipped (and counted) by readers. A write is made before the request, so a crash
over-counts a request, never hides one.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from knoxidx.retrieval.errors import RetrievalError


class LedgerUnreadableError(RetrievalError):
    """The ledger exists but cannot be read (permissions, a directory in its place)."""


class EgressLedger:
    def __init__(self, path: Path, clock: Any = time.time) -> None:
        self.path = Path(path)
        self.clock = clock

    def append(self, **fields: Any) -> None:
        now = datetime.fromtimestamp(self.clock(), timezone.utc)
        record = {"ts": now.isoformat(timespec="seconds"), "day": now.date().isoformat(), **fields}
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            if size and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line  # a crash tore the last line: start a fresh one
            view = memoryview(line)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        finally:
            os.close(fd)  # releases the lock

    def summary(self, days: int = 30, today: str | None = None) -> dict[str, Any]:
        """Totals by UTC day for the last ``days`` days (today included), newest first, and
        over the whole window (see :meth:`Aggregates.report`)."""
        try:
            aggregates = _CACHE.aggregates(self.path)
        except OSError as exc:
            raise LedgerUnreadableError(
                f"cannot read the egress ledger {self.path}: {exc.strerror or exc}"
            ) from None
        return aggregates.report(days, today or _today(self.clock))


# ---- reading, incrementally ------------------------------------------------------------------


@dataclass(slots=True)
class Tally:
    requests: int = 0
    texts: int = 0
    chunks: int = 0
    bytes: int = 0
    files: set[str] = field(default_factory=set)
    masked: Counter[str] = field(default_factory=Counter)

    def add(self, other: Tally) -> None:
        self.requests += other.requests
        self.texts += other.texts
        self.chunks += other.chunks
        self.bytes += other.bytes
        self.files |= other.files
        self.masked.update(other.masked)

    def as_dict(self) -> dict[str, Any]:
        return {"requests": self.requests, "texts": self.texts, "chunks": self.chunks,
                "bytes": self.bytes, "files": len(self.files), "masked": dict(self.masked)}


@dataclass(slots=True)
class Aggregates:
    """Per (day, service, endpoint, model) tallies of everything read so far."""

    identity: tuple[int, int] = (0, 0)
    offset: int = 0
    torn: int = 0  # lines that were not valid records (a crash mid-write)
    by_key: dict[tuple[str, str, str, str], Tally] = field(default_factory=dict)

    def feed(self, line: bytes) -> None:
        try:
            record = json.loads(line)
            key = (str(record["day"]), str(record["service"]), str(record["endpoint"]),
                   str(record["model"]))
            tally = Tally(1, int(record["texts"]), int(record["chunks"]), int(record["bytes"]),
                          set(record.get("files") or ()), Counter(record.get("masked") or {}))
        except (ValueError, KeyError, TypeError):
            self.torn += 1
            return
        self.by_key.setdefault(key, Tally()).add(tally)

    def report(self, days: int, today: str) -> dict[str, Any]:
        first = (datetime.fromisoformat(today) - timedelta(days=max(days, 1) - 1)).date()
        by_day: dict[str, Tally] = {}
        endpoints: dict[str, list[dict[str, Any]]] = {}
        total = Tally()
        for (day, service, endpoint, model), tally in sorted(self.by_key.items()):
            if not first.isoformat() <= day <= today:
                continue
            by_day.setdefault(day, Tally()).add(tally)
            total.add(tally)
            endpoints.setdefault(day, []).append(
                {"service": service, "endpoint": endpoint, "model": model, **tally.as_dict()})
        return {
            "days": [{"day": day, **by_day[day].as_dict(), "by_endpoint": endpoints[day]}
                     for day in sorted(by_day, reverse=True)],
            "total": total.as_dict(),
            "window_days": max(days, 1),
            "unreadable_lines": self.torn,
        }


class _AggregateCache:
    """Aggregates per ledger file, brought up to date by reading only what was appended since
    the last call (a server's ``/status`` stays cheap however long the ledger grows)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_path: dict[str, Aggregates] = {}

    def aggregates(self, path: Path) -> Aggregates:
        with self._lock:
            try:
                st = path.stat()
            except FileNotFoundError:
                self._by_path.pop(str(path), None)
                return Aggregates()
            agg = self._by_path.get(str(path))
            identity = (st.st_dev, st.st_ino)
            if agg is None or agg.identity != identity or st.st_size < agg.offset:
                agg = self._by_path[str(path)] = Aggregates(identity)
            if st.st_size > agg.offset:
                with open(path, "rb") as handle:
                    handle.seek(agg.offset)
                    data = handle.read(st.st_size - agg.offset)
                end = data.rfind(b"\n") + 1  # a line still being written waits for next time
                for line in data[:end].splitlines():
                    if line.strip():
                        agg.feed(line)
                agg.offset += end
            return agg


_CACHE = _AggregateCache()


def _today(clock: Any) -> str:
    return datetime.fromtimestamp(clock(), timezone.utc).date().isoformat()
