"""How a process reading an index learns that a watcher in another process keeps it fresh.

A running watcher holds an ``flock`` on ``.knoxidx/watcher.lock`` for its whole life and
keeps its state (pid, phase, batches, last update) in ``.knoxidx/watcher.json`` beside it.
A reader (``/status``, MCP ``index_status``) asks for the lock without waiting: refused means
a watcher is alive, whatever the state file says. The kernel drops the lock when the watcher
dies however it dies, so a state file a killed watcher left behind is never taken for a live
one, and a reused pid cannot fool it. A forked child closes its copy of the lock at once
(``core.fork_locks``): a copy kept would show a killed watcher as alive for as long as the
child ran.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
from pathlib import Path
from typing import Any

from knoxidx.core.fork_locks import close_in_forked_children, released

LOCK_NAME = "watcher.lock"
STATE_NAME = "watcher.json"
# the watcher's state fields another process is shown (progress changes too often to write)
PUBLISHED = ("phase", "batches", "last_batch", "last_update", "error", "started_at",
             "debounce_ms", "watch_limited", "root")

log = logging.getLogger(__name__)


class WatcherPresence:
    """The watcher's side: claim the lock, publish its state, let go when it stops."""

    def __init__(self, index_dir: Path) -> None:
        self.lock_path = index_dir / LOCK_NAME
        self.state_path = index_dir / STATE_NAME
        self._fd: int | None = None
        self._published: dict[str, Any] | None = None
        self._failed = False

    def claim(self) -> None:
        """Hold the lock (a reader holds it for an instant at most: the wait is short)."""
        try:
            fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError as exc:
            if "fd" in locals():
                os.close(fd)
            self._warn(exc)
            return
        self._fd = fd
        close_in_forked_children(fd, self._forget)

    def publish(self, state: dict[str, Any]) -> None:
        """Write ``state``'s published fields, when they changed since the last write."""
        if self._fd is None:
            return
        shown = {key: state.get(key) for key in PUBLISHED}
        if shown == self._published:
            return
        shown["pid"] = os.getpid()
        temporary = self.state_path.with_name(f".{STATE_NAME}.{os.getpid()}")
        try:  # whole or not at all: a reader never sees half a file
            temporary.write_text(json.dumps(shown), encoding="utf-8")
            os.replace(temporary, self.state_path)
        except OSError as exc:
            self._warn(exc)
            return
        del shown["pid"]
        self._published = shown

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            self.state_path.unlink(missing_ok=True)
        except OSError as exc:  # the lock still goes: readers then ignore the stale file
            self._warn(exc)
        released(self._fd)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def _forget(self) -> None:
        self._fd = None  # (a forked child's copy, closed)

    def _warn(self, exc: OSError) -> None:
        if not self._failed:  # once: the watcher works without it, other processes just
            self._failed = True  # do not see it
            log.warning("cannot show other processes that this watcher runs (%s): %s",
                        self.lock_path.parent, exc.strerror or exc)


def watcher_elsewhere(index_dir: Path) -> dict[str, Any] | None:
    """What the live watcher of the index in ``index_dir`` published, with ``pid`` and
    ``process: "separate"``; None when no watcher holds the lock."""
    try:
        fd = os.open(index_dir / LOCK_NAME, os.O_RDONLY)
    except OSError:  # no watcher ever ran here (or the folder is unreadable: none known)
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        alive = True
    else:
        alive = False
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
    if not alive:
        return None
    try:
        state = json.loads((index_dir / STATE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):  # between claiming the lock and its first write
        state = {}
    if not isinstance(state, dict):
        state = {}
    return {**state, "phase": state.get("phase") or "starting", "progress": None,
            "process": "separate"}
