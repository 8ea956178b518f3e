"""What the watcher hears: watchdog's events filtered where they arrive (with discovery's own
rules, :mod:`knoxidx.parse.watch_filter`) into the pending changes of the next batch, and the
directories watched. :class:`~knoxidx.watch.Watcher` decides when a batch is due."""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import threading
import time
from typing import Any

from knoxidx.parse.watch_filter import TRIGGER_NAMES, RepoPathFilter

log = logging.getLogger(__name__)

# git appends a line to HEAD's reflog whenever HEAD moves (a commit, a checkout, a reset, a
# rebase), work tree changed or not: the event that tells the watcher to read the history.
GIT_LOGS_DIR = ".git/logs"
GIT_HEAD_LOG = GIT_LOGS_DIR + "/HEAD"


class PendingChanges:
    """Paths seen since the last batch: the debounce state shared by the observer's thread
    (which adds) and the watcher's loop (which takes)."""

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.paths: dict[str, None] = {}
        self.events = 0
        self.first = 0.0
        self.last = 0.0
        self.resync = False  # the set of watched top-level directories may have changed
        self.full_scan = False  # something structural changed: walk the whole tree again

    def add(self, paths: list[str], resync: bool = False, full_scan: bool = False) -> None:
        with self.cond:
            self.full_scan = self.full_scan or full_scan
            if paths:
                now = time.monotonic()
                if not self.paths:
                    self.first = now
                self.last = now
                self.events += 1
                self.paths.update(dict.fromkeys(paths))
            self.resync = self.resync or resync
            self.cond.notify_all()

    def take(self) -> tuple[list[str], int, bool]:
        paths, events, full_scan = list(self.paths), self.events, self.full_scan
        self.paths, self.events, self.full_scan = {}, 0, False
        return paths, events, full_scan


class EventHandler:
    """The watchdog handler: drops what cannot matter before anything is scheduled."""

    def __init__(self, filt: RepoPathFilter, changes: PendingChanges) -> None:
        self.filt = filt
        self.changes = changes

    def dispatch(self, event: Any) -> None:
        kind = event.event_type
        if event.is_directory and kind not in ("created", "deleted", "moved"):
            return
        relevant: list[str] = []
        resync = full_scan = False
        for raw in (event.src_path, getattr(event, "dest_path", "")):
            if not raw:
                continue
            rel = self.filt.relative(raw)
            if not rel:
                continue
            if rel == GIT_HEAD_LOG:  # HEAD moved: an update reads the new commits
                relevant.append(rel)
                continue
            if event.is_directory:
                self.filt.reset()  # a directory came or went: cached verdicts may be stale
                gone = kind == "deleted" or (kind == "moved" and raw == event.src_path)
                if not (self.filt.gone_dir_skipped(rel) if gone else self.filt.dir_skipped(rel)):
                    relevant.append(rel)
                    full_scan = True
                resync = resync or "/" not in rel
                continue
            if self.filt.changes_rules(rel):
                self.filt.reset()
                resync = resync or "/" not in rel
            if self.filt.wants_file(rel):
                relevant.append(rel)
                full_scan = full_scan or rel.rpartition("/")[2] in TRIGGER_NAMES
        if relevant or resync:
            self.changes.add(relevant, resync, full_scan)


class Watches:
    """The root's own entries (not recursive) plus one recursive watch per top-level directory
    that discovery does not skip: ``.git`` (but for its ``logs`` folder, not recursive: HEAD's
    reflog), ``node_modules``, virtualenvs and ignored trees at the top are never watched at
    all. Scheduled on a running observer, so that a watch the
    kernel refuses fails here, one directory at a time (see :meth:`limited`)."""

    def __init__(self, observer: Any, handler: EventHandler, filt: RepoPathFilter) -> None:
        from watchdog.events import (
            DirCreatedEvent,
            DirDeletedEvent,
            DirMovedEvent,
            FileClosedEvent,
            FileCreatedEvent,
            FileDeletedEvent,
            FileModifiedEvent,
            FileMovedEvent,
        )

        self.observer = observer
        self.handler = handler
        self.filt = filt
        self.current: dict[str, Any] = {}
        # what the kernel's inotify limits left unwatched: top-level directories, "." for the
        # root's own entries
        self.unwatched: set[str] = set()
        # opens and reads (the indexer's own among them) are not even delivered
        self.kinds = [DirCreatedEvent, DirDeletedEvent, DirMovedEvent, FileClosedEvent,
                      FileCreatedEvent, FileDeletedEvent, FileModifiedEvent, FileMovedEvent]
        self.root_watch = self._schedule(".", filt.root, recursive=False)
        self.head_log_watch = self._watch_head_log()

    def _watch_head_log(self) -> Any:
        """A watch on the directory of HEAD's reflog, None outside git (or where ``.git`` is a
        file: a worktree's, a submodule's, whose commits the idle re-walk reads)."""
        logs = os.path.join(self.filt.root, GIT_LOGS_DIR)
        if not os.path.isdir(logs) or os.path.islink(logs):
            return None
        return self._schedule(GIT_LOGS_DIR, logs, recursive=False)

    def _schedule(self, name: str, path: str, recursive: bool) -> Any:
        """The watch of ``path``, or None when it could not be placed."""
        try:
            watch = self.observer.schedule(self.handler, path, recursive=recursive,
                                           event_filter=self.kinds)
        except OSError as exc:
            if exc.errno in LIMIT_ERRNOS:
                self.unwatched.add(name)
            else:  # vanished meanwhile, or unreadable
                log.debug("not watching %s: %s", name, exc)
            return None
        self.unwatched.discard(name)
        return watch

    def sync(self) -> None:
        try:
            names = sorted(e.name for e in os.scandir(self.filt.root) if e.is_dir())
        except OSError:
            names = []
        wanted = {n for n in names if not self.filt.dir_skipped(n)}
        for name in sorted(wanted - self.current.keys()):
            watch = self._schedule(name, os.path.join(self.filt.root, name), recursive=True)
            if watch is not None:
                self.current[name] = watch
        for name in sorted(self.current.keys() - wanted):
            self.observer.unschedule(self.current.pop(name))
        self.unwatched &= wanted | {".", GIT_LOGS_DIR}
        if self.root_watch is None:
            self.root_watch = self._schedule(".", self.filt.root, recursive=False)
        if self.head_log_watch is None:  # (a `git init` since, or room under the limit again)
            self.head_log_watch = self._watch_head_log()

    def limited(self) -> bool:
        """Whether the kernel's inotify limits left something unwatched: a directory whose
        watch was refused, or (watchdog leaves a subdirectory it cannot watch unwatched
        without a word) no room for a single watch more once ours are placed."""
        return bool(self.unwatched) or watch_limit_reached(self.filt.root)



def observe(filt: RepoPathFilter, changes: PendingChanges) -> tuple[Any, Watches]:
    """watchdog's native observer, started, and the repository's directories watched, each
    event that passes ``filt`` added to ``changes``."""
    from watchdog.observers import Observer

    observer = Observer()
    observer.start()  # first: each watch is then placed (or refused) as it is scheduled
    try:
        watches = Watches(observer, EventHandler(filt, changes), filt)
        watches.sync()
    except BaseException:
        observer.stop()
        raise
    return observer, watches

# what watchdog's OSError carries when the kernel refuses a watch for its limits: the per-user
# watch limit (fs.inotify.max_user_watches), the per-user instance limit
LIMIT_ERRNOS = frozenset({errno.ENOSPC, errno.EMFILE})
MAX_WATCHES_FILE = "/proc/sys/fs/inotify/max_user_watches"


def watch_limit_reached(path: str) -> bool:
    """Whether the kernel refuses one more inotify watch now, tried on ``path`` with an inotify
    instance of its own (closed at once). False where there is no inotify."""
    try:
        from watchdog.observers import inotify_c
    except (ImportError, OSError):  # not Linux
        return False
    fd = inotify_c.inotify_init()
    if fd < 0:
        return False  # no instance to try with: that limit is not the watches'
    try:
        wd = inotify_c.inotify_add_watch(fd, os.fsencode(path),
                                         inotify_c.InotifyConstants.IN_ATTRIB)
        return wd < 0 and ctypes.get_errno() == errno.ENOSPC
    finally:
        os.close(fd)


def max_user_watches() -> str:
    """The kernel's per-user inotify watch limit, as a user would set it ("?" unknown)."""
    try:
        with open(MAX_WATCHES_FILE) as fh:
            return fh.read().strip()
    except OSError:
        return "?"


def unwatched_warning(watches: Watches, reconcile_s: float) -> str:
    """What a user is told when the kernel's inotify limits left part of the tree unwatched:
    where, how the changes there are found instead (a re-walk every ``reconcile_s``), and
    what to do about it."""
    unwatched = sorted(watches.unwatched)
    where = ", ".join(unwatched[:5]) + (
        f" and {len(unwatched) - 5} more" if len(unwatched) > 5 else "")
    return ("the inotify watch limit is reached (fs.inotify.max_user_watches = "
            f"{max_user_watches()}): part of the tree is not watched"
            f"{f' (top-level: {where})' if where else ''}, so changes there are found "
            f"by a re-walk every {reconcile_s:g} s rather than at once; raise "
            "the limit (`sudo sysctl fs.inotify.max_user_watches=524288`) and restart "
            "the watcher")
