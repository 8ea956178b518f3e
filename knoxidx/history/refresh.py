"""Bringing the stored history up to HEAD inside an index update: only the commits after the
last one read, unless HEAD's first-parent chain no longer holds it (a rewritten history, a
deepened shallow clone), when the whole history is read again rather than kept stale."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

from knoxidx.history.gitlog import (
    GitUnavailableError,
    head_commit,
    is_shallow,
    read_commits,
    repository_top,
)
from knoxidx.history.store import HistoryRows


def refresh_history(root: Path, tables: HistoryRows) -> dict[str, Any]:
    """Read the new commits of ``root``'s repository into ``tables``; a dict for the update
    report: ``available`` and, when not, ``reason`` (one line a user can act on)."""
    started = time.perf_counter()
    try:
        head = head_commit(root)
        top = repository_top(root)
        shallow = is_shallow(root)
    except GitUnavailableError as exc:
        if tables.exists():  # a history of a repository that is no longer one would be stale
            tables.clear()
        return {"available": False, "reason": f"no history: {exc}"}
    note = tables.ensure()
    prefix = path_prefix(root, top)
    last = tables.get("head")
    reread = (last is None or tables.get("prefix") != prefix
              or tables.get("shallow") != str(shallow))
    try:
        mode, read = _read_new_commits(root, tables, head, None if reread else last)
    except GitUnavailableError as exc:  # git failed part-way (a missing object): keep none
        tables.clear()
        return {"available": False, "reason": f"no history: reading it failed: {exc}"}
    tables.set("head", head)
    tables.set("prefix", prefix)
    tables.set("shallow", str(shallow))
    report: dict[str, Any] = {"available": True, "mode": mode, "commits_read": read,
                              "commits": tables.counts()[0], "shallow": shallow,
                              "seconds": round(time.perf_counter() - started, 4)}
    if note:
        report["note"] = note
    return report


def _read_new_commits(root: Path, tables: HistoryRows, head: str,
                      last: str | None) -> tuple[str, int]:
    """Append the commits after ``last`` (all of them, over what was stored, without it) up to
    ``head``; how it read ("unchanged", "incremental", "full") and how many commits."""
    reread = last is None
    mode, read = "unchanged", 0
    if last != head:
        commits = read_commits(root, last, head)
        try:
            first = next(commits, None)
        except GitUnavailableError:  # the last commit read is gone (a rewrite, then a gc)
            first = None
        if not reread and (first is None or first.parent != last):
            reread = True  # HEAD no longer descends (by first parents) from what was read
            commits.close()
            commits = read_commits(root, None, head)
            first = next(commits, None)
        if reread:
            tables.clear()
        mode = "full" if reread else "incremental"
        if first is not None:
            read = tables.append(itertools.chain([first], commits), tables.next_seq())
    return mode, read


def path_prefix(root: Path, top: Path) -> str:
    """Where the indexed directory lies in its repository ("" at the top): graph paths are
    relative to the first, git's to the second."""
    inner = root.resolve().relative_to(top.resolve()).as_posix()
    return "" if inner == "." else inner + "/"
