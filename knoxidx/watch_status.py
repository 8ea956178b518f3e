"""What a :class:`~knoxidx.watch.Watcher` tells about itself: its state (``/status``, MCP
``index_status``, the state another process reads through :mod:`knoxidx.watch_presence`) and
the report of each update it applied."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

DEFAULT_DEBOUNCE_MS = 150


@dataclass(frozen=True, slots=True)
class BatchReport:
    """What one update did, as the watcher logs it."""

    batch: int
    reason: str  # start | changes | reconcile
    discovery: str  # full: the tree walked; incremental: only the batch's files looked at
    events: int  # file events that passed the filter
    paths: int  # distinct paths among them
    sample: tuple[str, ...]
    changed: int
    added: int
    removed: int
    resolved: int
    nodes: int
    edges: int
    nodes_delta: int
    edges_delta: int
    chunks_added: int
    chunks_removed: int
    ms: float

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["sample"] = list(self.sample)
        return out


@dataclass(slots=True)
class WatchStatus:
    """What ``/status`` and ``index_status`` show; written by the watcher's thread."""

    root: str
    phase: str = "starting"  # starting | reconciling | idle | pending | indexing | stopped | failed
    progress: dict[str, Any] | None = None
    pending_paths: int = 0
    batches: int = 0
    last_batch: dict[str, Any] | None = None
    last_update: str | None = None
    error: str = ""
    debounce_ms: int = DEFAULT_DEBOUNCE_MS
    started_at: str = field(default_factory=lambda: now())
    # the kernel's inotify limits left part of the tree unwatched: changes there are found by
    # a re-walk every LIMITED_RECONCILE_S, not at once
    watch_limited: bool = False
    chunks_embedded: int = 0  # chunks with a vector; the background embeds chunks_pending
    chunks_pending: int = 0
    embedding: str = ""  # off | waiting (nothing pending, or backing off) | embedding | why not


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")
