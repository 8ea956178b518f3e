"""Keeping Python's cyclic garbage collector off the heap an update works over, and handing
back to the system what a long-lived writer freed."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

_open_blocks = 0  # frozen_heap blocks this process is inside (a forked child inherits them)


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Every object that exists now is out of the collector's sight for the block
    (``gc.freeze``): it neither re-walks them nor, in a forked child, touches (and so copies)
    their pages. ``gc.unfreeze`` returns everything frozen at once, so only the outermost
    freeze returns it: a watcher's, or an update's around a resolver fan-out's."""
    global _open_blocks
    outermost = gc.get_freeze_count() == 0
    gc.freeze()
    _open_blocks += 1
    try:
        yield
    finally:
        _open_blocks -= 1
        if outermost:
            gc.unfreeze()


def settle() -> None:
    """Inside a :func:`frozen_heap` block, put what was allocated since out of the
    collector's sight as well (the block's outermost exit returns it, with the rest).

    For long-lived, acyclic data made in bulk in the middle of the block: the facts a
    resolver loads are a million small records (named tuples, which the collector never
    untracks) that it would re-walk in every young collection to find nothing, about an
    eighth of resolution's time. Outside a block it does nothing: no freeze would undo it.
    (It counts the blocks itself: ``gc.get_freeze_count`` walks every frozen object.)
    """
    if _open_blocks:
        gc.freeze()


@cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or None (another C library, another system). Looked up among
    the symbols the process has loaded already, on first use: ctypes (and its search for
    libraries, which runs ldconfig) stays off the start-up of every command but the watcher."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


def release_free_memory() -> None:
    """Return the C heap's free pages to the system: glibc keeps what a long-lived writer freed
    (a watcher after a batch: resolution, chunking; 300 edited django files: 94 -> 79 MB
    resident). tree-sitter's parses, whose error recovery can take hundreds of MB for a few KB
    of mangled code, no longer run in the writer (``parse_pool``). A fraction of a millisecond
    when there is nothing to return."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


def resident_bytes() -> int:
    """This process's resident memory now (its peak where /proc is missing)."""
    size = _statm(1)
    if size >= 0:
        return size
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def address_space_bytes() -> int:
    """This process's virtual memory size now, or -1 where /proc is missing."""
    return _statm(0)


def resident_bytes_of(pid: int) -> int:
    """Process ``pid``'s resident memory now, or -1 (gone, or no /proc)."""
    return _statm(1, str(pid))


def _statm(field: int, process: str = "self") -> int:
    """Field ``field`` of /proc/<process>/statm in bytes (0: size, 1: resident), or -1."""
    try:
        with open(f"/proc/{process}/statm", "rb") as fh:
            return int(fh.read().split()[field]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError, IndexError):
        return -1


def process_alive(pid: int) -> bool:
    """Whether a process ``pid`` exists (one of another user's counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
